// Typed protocol errors: the closed set of error names on the wire and the Error value they carry.
//
// On the wire an error is {"error": "wsindex.NoSuchPath", "parameters": {"message": ..., ...}}.
// The enum is the C++ side of that name; local kinds (NotRunning, Timeout, ...) are produced by
// the client library for conditions that never travel on the wire.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace wsindex::ipc {

enum class ErrorKind {
    // Wire errors (sent by the server).
    InvalidRequest,    // not a JSON object / no "method" / bad framing: the connection is closed
    MessageTooLarge,   // a message exceeded the size cap: the connection is closed
    MethodNotFound,    // unknown method name (the connection stays usable)
    InvalidParameter,  // a parameter is missing, has the wrong type or is out of range
    NoSuchPath,        // the path does not exist
    NotADirectory,     // the path exists but is not a directory where one is needed
    PermissionDenied,  // the caller may not do this, or may not see this path
    ScanInProgress,    // a scan of this root is already running (if the daemon refuses)
    Busy,              // the server is at a connection or queue limit; retry later
    NotIndexed,        // the path is not below any indexed root
    NoSuchScan,        // no scan with that id
    Cancelled,         // the operation was cancelled (e.g. a waited-for scan)
    ShuttingDown,      // the daemon is stopping
    Internal,          // a bug or an unexpected failure in the daemon
    // Local errors (client library only, never on the wire).
    NotRunning,     // no socket, or nothing listening on it
    ConnectFailed,  // any other connect failure
    Timeout,        // no reply within the deadline
    Disconnected,   // the server closed the connection mid-call
    Protocol,       // the server sent something that is not a valid reply
    // A wire error name this build does not know (a newer daemon): Error::name keeps it.
    Unknown,
};

// The interface every name below lives in. Incompatible changes get a new interface name
// ("wsindex.v2"); additive changes (new optional fields, new methods) stay in this one.
inline constexpr std::string_view kInterface = "wsindex";

// "wsindex.NoSuchPath" for wire kinds; "local.Timeout" style names for local kinds (for logs).
std::string_view error_name(ErrorKind kind);
// The kind for a wire name; Unknown for names this build does not know.
ErrorKind error_kind_from_name(std::string_view name);
// True for the kinds a server may send.
bool is_wire_error(ErrorKind kind);

struct Error {
    ErrorKind kind = ErrorKind::Internal;
    // Human text for people, always valid UTF-8 (sanitised when made through make_error).
    std::string message;
    // Extra machine-readable parameters (an object or null), e.g. {"parameter": "limit"} or
    // {"path": <encoded bytes>}. "message" is added on the wire from the field above.
    nlohmann::json details;
    // The wire name; set for every kind, needed for Unknown.
    std::string name;

    // "wsindex.NoSuchPath: no such path: /x".
    [[nodiscard]] std::string to_string() const;
};

// Builds an Error whose message is made valid UTF-8 (invalid bytes become U+FFFD).
Error make_error(ErrorKind kind, std::string_view message,
                 nlohmann::json details = nlohmann::json());

// InvalidParameter naming the field: {"parameter": field}.
Error invalid_parameter(std::string_view field, std::string_view problem);

}  // namespace wsindex::ipc
