// What every command gets: the socket, the output mode, and helpers to connect, print results
// and report errors the same way (stderr message + exit code; a JSON error document with --json).
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "ipc/client.hpp"
#include "ipc/error.hpp"
#include "ipc/result.hpp"

namespace wsindex::cli {

struct Context {
    std::string socket;  // resolved (see socket_path.hpp)
    bool json = false;   // --json: one JSON document on stdout, nothing else there
    bool stdout_tty = false;
    bool stderr_tty = false;
    std::FILE* out = stdout;
    std::FILE* err = stderr;
};

// Connects to the daemon; the error (NotRunning, PermissionDenied, ...) is ready to report.
ipc::Result<ipc::Client> connect(const Context& ctx, bool wait_forever = false);

// Reports `error` ("wsctl: <message>" on stderr, plus {"error", "message", "exit_code"} on
// stdout with --json) and returns its exit code.
int report(const Context& ctx, const ipc::Error& error);

// Reports a usage problem found after parsing (bad --size, ...) and returns kExitUsage.
int usage_error(const Context& ctx, std::string_view message);

// Reports a reply the client could not decode (a daemon of another version) as a failure.
int bad_reply(const Context& ctx, const ipc::Error& error);
// The error bad_reply reports for `error`.
ipc::Error unexpected_reply(const ipc::Error& error);

// The members of the --json error document, as sorted JSON text without braces:
// "error":"<name>","exit_code":N,"message":"<text>".
std::string error_fields(const ipc::Error& error, int code);

// A warning or note for people on stderr ("wsctl: ..."), never on stdout.
void note(const Context& ctx, std::string_view message);

// Writes one JSON document and a newline to stdout. False if it cannot be serialised.
bool print_json(const Context& ctx, const nlohmann::json& document);

// Writes raw bytes to stdout.
void write_out(const Context& ctx, std::string_view bytes);

// Flushes stdout and turns a write error (full disk, closed pipe) into kExitFailure with a
// message; otherwise returns `code`.
int finish(const Context& ctx, int code);

}  // namespace wsindex::cli
