// Exit codes of wsctl and the mapping from protocol errors to them (documented in docs/wsctl.md).
#pragma once

#include "ipc/error.hpp"

namespace wsindex::cli {

// Distinct codes so that scripts can tell "try again later" from "fix your command line".
enum ExitCode : int {
    kExitOk = 0,          // success (also: find matched nothing)
    kExitFailure = 1,     // a scan failed or was cancelled; the daemon failed; lost connection
    kExitUsage = 2,       // bad command line or a parameter the daemon rejected
    kExitNotRunning = 3,  // no daemon listening on the socket (or the socket cannot be used)
    kExitRefused = 4,     // permission denied, daemon busy or shutting down, scan in progress
    kExitNotFound = 5,    // no such path, not a directory, not indexed, no such scan
};

// The exit code for an error reported by the client library or the daemon.
int exit_code_for(const ipc::Error& error);

}  // namespace wsindex::cli
