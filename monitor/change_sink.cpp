// Names of root events, for logs and status.
#include "monitor/change_sink.hpp"

namespace wsindex::monitor {

const char* to_string(RootEventKind kind) {
    switch (kind) {
        case RootEventKind::overflow:
            return "overflow";
        case RootEventKind::root_deleted:
            return "root deleted";
        case RootEventKind::root_moved:
            return "root moved";
        case RootEventKind::mark_lost:
            return "mark lost";
        case RootEventKind::unresolvable:
            return "unresolvable handle";
        case RootEventKind::needs_periodic:
            return "needs periodic rescans";
    }
    return "unknown";
}

}  // namespace wsindex::monitor
