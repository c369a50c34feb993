// Visibility policy: one VisibilityFilter per call, and the capability test for trusting a
// per-user daemon's own uid.
#include "daemon/visibility_policy.hpp"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <memory>

#include "daemon/credentials.hpp"
#include "daemon/visibility_filter.hpp"

namespace wsindex::daemon {

namespace {

// `make_source` gives each call's source (its own chain for the live one).
template <class MakeSource>
VisibilityPolicy policy_over(MakeSource make_source) {
    return [make_source](const ipc::PeerCredentials& peer) -> CallerView {
        std::optional<Caller> caller = resolve_caller(peer);
        if (!caller) {
            const PathFilter none = [](std::string_view) { return false; };
            return CallerView{none, none, false};
        }
        const bool root = caller->is_root();
        // PathFilter must be copyable (std::function); the filter and its cache are shared by
        // the copies, which all live on the one thread that runs this call's query.
        auto filter = std::make_shared<VisibilityFilter>(std::move(*caller), make_source());
        return CallerView{[filter](std::string_view path) { return filter->can_see(path); },
                          [filter](std::string_view dir) { return filter->can_list(dir); }, root};
    };
}

}  // namespace

VisibilityPolicy make_visibility_policy() {
    return policy_over([] {
        // Shared by the copies of the source, all on the one thread that runs the call.
        auto chain = std::make_shared<DirChain>();
        return DirPermSource(
            [chain](const std::string& dir) -> std::optional<DirPerm> { return chain->perm(dir); });
    });
}

VisibilityPolicy make_visibility_policy(DirPermSource source) {
    return policy_over([source = std::move(source)] { return source; });
}

bool process_may_bypass_permissions() {
    if (::geteuid() == 0) return true;
    // capget(2) directly: glibc has no wrapper, and libcap would be a dependency for one call.
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
    if (::syscall(SYS_capget, &header, data) != 0) return true;  // unknown: assume it may
    constexpr std::uint32_t kBypass = (1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH);
    return (data[0].permitted & kBypass) != 0;
}

VisibilityPolicy trusting_own_user(VisibilityPolicy policy, uid_t own_uid) {
    return [policy = std::move(policy), own_uid](const ipc::PeerCredentials& peer) {
        if (!peer.valid || peer.uid != own_uid) return policy(peer);
        CallerView everything;
        everything.can_see = [](std::string_view) { return true; };
        everything.can_list = [](std::string_view) { return true; };
        everything.sees_everything = true;
        return everything;
    };
}
}  // namespace wsindex::daemon
