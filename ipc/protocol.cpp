// Frame-level parsing and encoding of requests, replies and errors.
#include "ipc/protocol.hpp"

#include <utility>

#include "ipc/utf8.hpp"

namespace wsindex::ipc {

namespace {

using nlohmann::json;

// Parses without letting an exception out; the message names what failed. nlohmann's text may
// quote the offending bytes, which can be invalid UTF-8: make_error sanitises it.
Result<json> parse_object(std::string_view frame, const Limits& limits, ErrorKind kind) {
    if (frame.size() > limits.max_message_bytes) {
        return make_error(ErrorKind::MessageTooLarge, "message of " + std::to_string(frame.size()) +
                                                          " bytes exceeds the limit of " +
                                                          std::to_string(limits.max_message_bytes));
    }
    if (nesting_exceeds(frame, limits.max_depth)) {
        return make_error(
            kind, "message nests deeper than " + std::to_string(limits.max_depth) + " levels");
    }
    json value;
    try {
        value = json::parse(frame);
    } catch (const json::exception& e) {
        return make_error(kind, std::string("message is not valid JSON: ") + e.what());
    }
    if (!value.is_object()) return make_error(kind, "message is not a JSON object");
    return value;
}

Error invalid_utf8() {
    return make_error(ErrorKind::Internal,
                      "message contains a string that is not valid UTF-8 (a bug: byte "
                      "strings must be sent with encode_bytes)");
}

// The message's text with its NUL, or MessageTooLarge.
Result<std::string> frame_text(std::string text, const Limits& limits) {
    if (text.size() > limits.max_message_bytes) {
        return make_error(ErrorKind::MessageTooLarge, "message of " + std::to_string(text.size()) +
                                                          " bytes exceeds the limit of " +
                                                          std::to_string(limits.max_message_bytes));
    }
    text.push_back('\0');
    return text;
}

// {"continues":true,"parameters":...} or {"parameters":...}, with its NUL, or MessageTooLarge.
Result<std::string> reply_frame(std::string_view parameters, bool continues, const Limits& limits) {
    const std::string_view head =
        continues ? R"({"continues":true,"parameters":)" : R"({"parameters":)";
    std::string text;
    text.reserve(head.size() + parameters.size() + 2);  // '}' and the NUL
    text.append(head);
    text.append(parameters);
    text.push_back('}');
    return frame_text(std::move(text), limits);
}

Result<std::string> finish_frame(const json& message, const Limits& limits) {
    auto text = dump_json(message);
    if (!text) return invalid_utf8();
    return frame_text(std::move(*text), limits);
}

}  // namespace

std::optional<std::string> dump_json(const json& value) {
    try {
        // ensure_ascii=false: names stay readable UTF-8; strict handler: we validate instead
        // of letting nlohmann replace bytes silently.
        return value.dump(-1, ' ', false, json::error_handler_t::strict);
    } catch (const json::exception&) {
        return std::nullopt;
    }
}

bool nesting_exceeds(std::string_view text, std::size_t max_depth) {
    std::size_t depth = 0;
    bool in_string = false;
    bool escaped = false;
    for (const char c : text) {
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > max_depth) return true;
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return false;
}

Result<Request> parse_request(std::string_view frame, const Limits& limits) {
    auto parsed = parse_object(frame, limits, ErrorKind::InvalidRequest);
    if (!parsed) return std::move(parsed.error());
    json& message = parsed.value();

    Request request;
    const auto method = message.find("method");
    if (method == message.end())
        return make_error(ErrorKind::InvalidRequest, "request has no \"method\"");
    if (!method->is_string())
        return make_error(ErrorKind::InvalidRequest, "\"method\" must be a string");
    request.method = method->get<std::string>();
    if (request.method.empty()) return make_error(ErrorKind::InvalidRequest, "\"method\" is empty");

    const auto parameters = message.find("parameters");
    if (parameters != message.end() && !parameters->is_null()) {
        if (!parameters->is_object()) {
            return make_error(ErrorKind::InvalidRequest, "\"parameters\" must be an object");
        }
        request.parameters = std::move(*parameters);
    }
    const auto more = message.find("more");
    if (more != message.end() && !more->is_null()) {
        if (!more->is_boolean())
            return make_error(ErrorKind::InvalidRequest, "\"more\" must be a boolean");
        request.more = more->get<bool>();
    }
    return request;
}

Result<Reply> parse_reply(std::string_view frame, const Limits& limits) {
    auto parsed = parse_object(frame, limits, ErrorKind::Protocol);
    if (!parsed) {
        Error error = std::move(parsed.error());
        if (error.kind == ErrorKind::MessageTooLarge) {
            return make_error(ErrorKind::Protocol, "reply too large: " + error.message);
        }
        return error;
    }
    json& message = parsed.value();

    json parameters = json::object();
    const auto params_it = message.find("parameters");
    if (params_it != message.end() && !params_it->is_null()) {
        if (!params_it->is_object()) {
            return make_error(ErrorKind::Protocol, "reply \"parameters\" is not an object");
        }
        parameters = std::move(*params_it);
    }

    const auto error_it = message.find("error");
    if (error_it != message.end() && !error_it->is_null()) {
        if (!error_it->is_string())
            return make_error(ErrorKind::Protocol, "reply \"error\" is not a string");
        Error error;
        error.name = error_it->get<std::string>();
        error.kind = error_kind_from_name(error.name);
        const auto msg = parameters.find("message");
        if (msg != parameters.end() && msg->is_string()) error.message = msg->get<std::string>();
        parameters.erase("message");
        if (!parameters.empty()) error.details = std::move(parameters);
        return error;
    }

    Reply reply;
    reply.parameters = std::move(parameters);
    const auto continues = message.find("continues");
    if (continues != message.end() && !continues->is_null()) {
        if (!continues->is_boolean())
            return make_error(ErrorKind::Protocol, "reply \"continues\" is not a boolean");
        reply.continues = continues->get<bool>();
    }
    return reply;
}

Result<std::string> encode_request(const Request& request, const Limits& limits) {
    json message{{"method", request.method}, {"parameters", request.parameters}};
    if (!message["parameters"].is_object()) message["parameters"] = json::object();
    if (request.more) message["more"] = true;
    return finish_frame(message, limits);
}

Result<std::string> encode_reply(const Reply& reply, const Limits& limits) {
    // The envelope is written around the dumped parameters rather than built as a json object:
    // that object would deep-copy the parameters (a find batch: 1000 entries) only to dump
    // them. Same bytes as dumping {"continues": true, "parameters": ...} (keys sorted).
    auto parameters = reply.parameters.is_object() ? dump_json(reply.parameters)
                                                   : std::optional<std::string>("{}");
    if (!parameters) return invalid_utf8();
    return reply_frame(*parameters, reply.continues, limits);
}

Result<std::string> encode_reply_text(std::string_view parameters, bool continues,
                                      const Limits& limits) {
    // dump_json refuses a DOM with an invalid string; text gets the same refusal. Checking the
    // whole text is equivalent: outside strings, JSON text is ASCII.
    if (!is_valid_utf8(parameters)) return invalid_utf8();
    return reply_frame(parameters, continues, limits);
}

std::string encode_error(const Error& error) {
    const std::string name = !error.name.empty() ? error.name : std::string(error_name(error.kind));
    json parameters = error.details.is_object() ? error.details : json::object();
    parameters["message"] = sanitize_utf8(error.message);
    json message{{"error", sanitize_utf8(name)}, {"parameters", std::move(parameters)}};
    auto text = dump_json(message);
    if (!text) {
        // Details held invalid UTF-8 (a bug in the caller): keep the name and the message.
        message["parameters"] = json{{"message", sanitize_utf8(error.message)}};
        text = dump_json(message);
    }
    text->push_back('\0');
    return std::move(*text);
}

}  // namespace wsindex::ipc
