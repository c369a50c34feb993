// Error names: the mapping between ErrorKind and the wire names of docs/protocol.md.
#include "ipc/error.hpp"

#include <array>
#include <utility>

#include "ipc/utf8.hpp"

namespace wsindex::ipc {

namespace {

struct NameEntry {
    ErrorKind kind;
    std::string_view name;
};

// Wire names are part of the contract (docs/protocol.md): never rename, only add.
constexpr std::array kNames{
    NameEntry{ErrorKind::InvalidRequest, "wsindex.InvalidRequest"},
    NameEntry{ErrorKind::MessageTooLarge, "wsindex.MessageTooLarge"},
    NameEntry{ErrorKind::MethodNotFound, "wsindex.MethodNotFound"},
    NameEntry{ErrorKind::InvalidParameter, "wsindex.InvalidParameter"},
    NameEntry{ErrorKind::NoSuchPath, "wsindex.NoSuchPath"},
    NameEntry{ErrorKind::NotADirectory, "wsindex.NotADirectory"},
    NameEntry{ErrorKind::PermissionDenied, "wsindex.PermissionDenied"},
    NameEntry{ErrorKind::ScanInProgress, "wsindex.ScanInProgress"},
    NameEntry{ErrorKind::Busy, "wsindex.Busy"},
    NameEntry{ErrorKind::NotIndexed, "wsindex.NotIndexed"},
    NameEntry{ErrorKind::NoSuchScan, "wsindex.NoSuchScan"},
    NameEntry{ErrorKind::Cancelled, "wsindex.Cancelled"},
    NameEntry{ErrorKind::ShuttingDown, "wsindex.ShuttingDown"},
    NameEntry{ErrorKind::Internal, "wsindex.Internal"},
    NameEntry{ErrorKind::NotRunning, "local.NotRunning"},
    NameEntry{ErrorKind::ConnectFailed, "local.ConnectFailed"},
    NameEntry{ErrorKind::Timeout, "local.Timeout"},
    NameEntry{ErrorKind::Disconnected, "local.Disconnected"},
    NameEntry{ErrorKind::Protocol, "local.Protocol"},
    NameEntry{ErrorKind::Unknown, "local.Unknown"},
};

}  // namespace

std::string_view error_name(ErrorKind kind) {
    for (const auto& entry : kNames) {
        if (entry.kind == kind) return entry.name;
    }
    return "local.Unknown";
}

bool is_wire_error(ErrorKind kind) { return error_name(kind).starts_with("wsindex."); }

ErrorKind error_kind_from_name(std::string_view name) {
    for (const auto& entry : kNames) {
        if (entry.name == name && is_wire_error(entry.kind)) return entry.kind;
    }
    return ErrorKind::Unknown;
}

std::string Error::to_string() const {
    std::string out = name.empty() ? std::string(error_name(kind)) : name;
    if (!message.empty()) {
        out += ": ";
        out += message;
    }
    return out;
}

Error make_error(ErrorKind kind, std::string_view message, nlohmann::json details) {
    Error error;
    error.kind = kind;
    error.message = sanitize_utf8(message);
    error.details = std::move(details);
    error.name = std::string(error_name(kind));
    return error;
}

Error invalid_parameter(std::string_view field, std::string_view problem) {
    std::string message = "parameter '";
    message += field;
    message += "' ";
    message += problem;
    return make_error(ErrorKind::InvalidParameter, message,
                      nlohmann::json{{"parameter", sanitize_utf8(field)}});
}

}  // namespace wsindex::ipc
