// exit_code_for: every ipc::ErrorKind to one of wsctl's documented exit codes.
#include "cli/exit_codes.hpp"

namespace wsindex::cli {

int exit_code_for(const ipc::Error& error) {
    using ipc::ErrorKind;
    switch (error.kind) {
        case ErrorKind::InvalidParameter:
            return kExitUsage;
        case ErrorKind::NotRunning:
        case ErrorKind::ConnectFailed:
            return kExitNotRunning;
        case ErrorKind::PermissionDenied:
        case ErrorKind::Busy:
        case ErrorKind::ScanInProgress:
        case ErrorKind::ShuttingDown:
            return kExitRefused;
        case ErrorKind::NoSuchPath:
        case ErrorKind::NotADirectory:
        case ErrorKind::NotIndexed:
        case ErrorKind::NoSuchScan:
            return kExitNotFound;
        case ErrorKind::InvalidRequest:
        case ErrorKind::MessageTooLarge:
        case ErrorKind::MethodNotFound:
        case ErrorKind::Cancelled:
        case ErrorKind::Internal:
        case ErrorKind::Timeout:
        case ErrorKind::Disconnected:
        case ErrorKind::Protocol:
        case ErrorKind::Unknown:
            return kExitFailure;
    }
    return kExitFailure;
}

}  // namespace wsindex::cli
