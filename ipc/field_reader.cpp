// FieldReader: per-field type checks that turn into InvalidParameter errors.
#include "ipc/field_reader.hpp"

#include <cmath>
#include <limits>

#include "ipc/bytes_codec.hpp"

namespace wsindex::ipc {

using nlohmann::json;

std::string_view json_type_name(const json& value) {
    switch (value.type()) {
        case json::value_t::null:
            return "null";
        case json::value_t::boolean:
            return "boolean";
        case json::value_t::number_integer:
        case json::value_t::number_unsigned:
            return "integer";
        case json::value_t::number_float:
            return "number";
        case json::value_t::string:
            return "string";
        case json::value_t::object:
            return "object";
        case json::value_t::array:
            return "array";
        default:
            return "value";
    }
}

FieldReader::FieldReader(const json& object, std::string prefix)
    : object_(object), prefix_(std::move(prefix)) {}

std::string FieldReader::field_name(std::string_view name) const {
    return prefix_ + std::string(name);
}

const json* FieldReader::find(std::string_view name) const {
    if (!object_.is_object()) return nullptr;
    const auto it = object_.find(name);
    if (it == object_.end() || it->is_null()) return nullptr;
    return &*it;
}

bool FieldReader::has(std::string_view name) const { return find(name) != nullptr; }

void FieldReader::fail(Error error) {
    if (!error_) error_ = std::move(error);
}

void FieldReader::fail_field(std::string_view name, std::string_view problem) {
    fail(invalid_parameter(field_name(name), problem));
}

void FieldReader::wrong_type(std::string_view name, std::string_view expected, const json& got) {
    fail_field(name,
               "must be " + std::string(expected) + ", got " + std::string(json_type_name(got)));
}

namespace {

// Integers may arrive as JSON floats from some clients (5.0); accept them when exact.
std::optional<std::uint64_t> as_uint64(const json& v) {
    if (v.is_number_unsigned()) return v.get<std::uint64_t>();
    if (v.is_number_integer()) {
        const auto i = v.get<std::int64_t>();
        if (i >= 0) return static_cast<std::uint64_t>(i);
        return std::nullopt;
    }
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (d >= 0 && d <= 9007199254740992.0 && std::floor(d) == d)
            return static_cast<std::uint64_t>(d);
    }
    return std::nullopt;
}

std::optional<std::int64_t> as_int64(const json& v) {
    if (v.is_number_integer() && !v.is_number_unsigned()) return v.get<std::int64_t>();
    if (v.is_number_unsigned()) {
        const auto u = v.get<std::uint64_t>();
        if (u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
            return static_cast<std::int64_t>(u);
        }
        return std::nullopt;
    }
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (std::fabs(d) <= 9007199254740992.0 && std::floor(d) == d)
            return static_cast<std::int64_t>(d);
    }
    return std::nullopt;
}

}  // namespace

bool FieldReader::boolean(std::string_view name, bool fallback) {
    const json* v = find(name);
    if (!v) return fallback;
    if (!v->is_boolean()) {
        wrong_type(name, "a boolean", *v);
        return fallback;
    }
    return v->get<bool>();
}

std::optional<std::uint64_t> FieldReader::optional_uint64(std::string_view name,
                                                          std::uint64_t max) {
    const json* v = find(name);
    if (!v) return std::nullopt;
    const auto value = as_uint64(*v);
    if (!value) {
        if (v->is_number())
            fail_field(name, "must be a non-negative integer, got " + v->dump());
        else
            wrong_type(name, "a non-negative integer", *v);
        return std::nullopt;
    }
    if (*value > max) {
        fail_field(name,
                   "must be at most " + std::to_string(max) + ", got " + std::to_string(*value));
        return std::nullopt;
    }
    return value;
}

std::uint64_t FieldReader::uint64(std::string_view name, std::uint64_t fallback,
                                  std::uint64_t max) {
    return optional_uint64(name, max).value_or(fallback);
}

std::optional<std::int64_t> FieldReader::optional_int64(std::string_view name) {
    const json* v = find(name);
    if (!v) return std::nullopt;
    const auto value = as_int64(*v);
    if (!value) {
        if (v->is_number())
            fail_field(name, "must be a 64-bit integer, got " + v->dump());
        else
            wrong_type(name, "an integer", *v);
        return std::nullopt;
    }
    return value;
}

std::int64_t FieldReader::int64(std::string_view name, std::int64_t fallback) {
    return optional_int64(name).value_or(fallback);
}

double FieldReader::number(std::string_view name, double fallback) {
    const json* v = find(name);
    if (!v) return fallback;
    if (!v->is_number()) {
        wrong_type(name, "a number", *v);
        return fallback;
    }
    return v->get<double>();
}

std::string FieldReader::text(std::string_view name, std::string fallback) {
    const json* v = find(name);
    if (!v) return fallback;
    if (!v->is_string()) {
        wrong_type(name, "a string", *v);
        return fallback;
    }
    return v->get<std::string>();
}

std::optional<std::string> FieldReader::bytes(std::string_view name) {
    const json* v = find(name);
    if (!v) return std::nullopt;
    auto decoded = decode_bytes(*v, field_name(name));
    if (!decoded) {
        fail(std::move(decoded.error()));
        return std::nullopt;
    }
    return std::move(decoded.value());
}

std::string FieldReader::bytes_or(std::string_view name, std::string fallback) {
    auto value = bytes(name);
    return value ? std::move(*value) : std::move(fallback);
}

std::vector<std::string> FieldReader::bytes_list(std::string_view name) {
    std::vector<std::string> out;
    const json* v = find(name);
    if (!v) return out;
    if (!v->is_array()) {
        wrong_type(name, "an array", *v);
        return out;
    }
    out.reserve(v->size());
    for (std::size_t i = 0; i < v->size(); ++i) {
        auto decoded = decode_bytes((*v)[i], field_name(name) + "[" + std::to_string(i) + "]");
        if (!decoded) {
            fail(std::move(decoded.error()));
            return {};
        }
        out.push_back(std::move(decoded.value()));
    }
    return out;
}

std::vector<std::uint64_t> FieldReader::uint64_list(std::string_view name) {
    std::vector<std::uint64_t> out;
    const json* v = find(name);
    if (!v) return out;
    if (!v->is_array()) {
        wrong_type(name, "an array", *v);
        return out;
    }
    for (std::size_t i = 0; i < v->size(); ++i) {
        const auto value = as_uint64((*v)[i]);
        if (!value) {
            fail_field(std::string(name) + "[" + std::to_string(i) + "]",
                       "must be a non-negative integer");
            return {};
        }
        out.push_back(*value);
    }
    return out;
}

const json* FieldReader::raw(std::string_view name) { return find(name); }

}  // namespace wsindex::ipc
