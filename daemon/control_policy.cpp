// Control policy: the control-group check and its seam adaptor.
#include "daemon/control_policy.hpp"

#include <grp.h>

#include <vector>

namespace wsindex::daemon {

bool may_control(const Caller& caller, std::optional<gid_t> control_group) {
    if (caller.is_root()) return true;
    return control_group.has_value() && caller.in_group(*control_group);
}

std::optional<gid_t> lookup_group(const std::string& name) {
    std::vector<char> buffer(16 * 1024);
    group gr{};
    group* found = nullptr;
    int rc = 0;
    while ((rc = ::getgrnam_r(name.c_str(), &gr, buffer.data(), buffer.size(), &found)) == ERANGE) {
        buffer.resize(buffer.size() * 2);
    }
    if (rc != 0 || found == nullptr) return std::nullopt;
    return gr.gr_gid;
}
ControlPolicy make_control_policy(std::optional<gid_t> control_group) {
    return [control_group](const ipc::PeerCredentials& peer) {
        std::optional<Caller> caller = resolve_caller(peer);
        return caller.has_value() && may_control(*caller, control_group);
    };
}
}  // namespace wsindex::daemon
