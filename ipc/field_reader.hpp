// FieldReader: typed access to the fields of a JSON object, with errors that name the field.
//
// Used by every from_json<T>: read each field with its default, then ask for the first error.
// A field that is absent or null takes its default; a field of the wrong type is an
// InvalidParameter error naming it ("parameter 'limit' must be a non-negative integer, got
// string"). Unknown fields are ignored (forward compatibility). Never throws.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/error.hpp"

namespace wsindex::ipc {

class FieldReader {
  public:
    // `object` must outlive the reader. `prefix` is prepended to field names in errors
    // ("scans[2]." for nested objects).
    explicit FieldReader(const nlohmann::json& object, std::string prefix = {});

    bool boolean(std::string_view name, bool fallback);
    std::uint64_t uint64(std::string_view name, std::uint64_t fallback,
                         std::uint64_t max = UINT64_MAX);
    std::optional<std::uint64_t> optional_uint64(std::string_view name,
                                                 std::uint64_t max = UINT64_MAX);
    std::int64_t int64(std::string_view name, std::int64_t fallback);
    std::optional<std::int64_t> optional_int64(std::string_view name);
    double number(std::string_view name, double fallback);
    // A text field (UTF-8 by construction: the JSON parser validated it).
    std::string text(std::string_view name, std::string fallback = {});
    // A byte string in the lossless encoding (ipc/bytes_codec.hpp).
    std::optional<std::string> bytes(std::string_view name);
    std::string bytes_or(std::string_view name, std::string fallback);
    std::vector<std::string> bytes_list(std::string_view name);
    std::vector<std::uint64_t> uint64_list(std::string_view name);
    // The raw value of an object/array field for nested decoding; nullptr when absent/null.
    const nlohmann::json* raw(std::string_view name);
    // True when the field is present and not null.
    bool has(std::string_view name) const;

    // Records an error found by the caller's own checks (keeps the first one).
    void fail(Error error);
    void fail_field(std::string_view name, std::string_view problem);
    [[nodiscard]] std::string field_name(std::string_view name) const;

    [[nodiscard]] bool ok() const { return !error_.has_value(); }
    // The first error, if any.
    [[nodiscard]] std::optional<Error> take_error() { return std::move(error_); }

  private:
    const nlohmann::json* find(std::string_view name) const;
    void wrong_type(std::string_view name, std::string_view expected, const nlohmann::json& got);

    const nlohmann::json& object_;
    std::string prefix_;
    std::optional<Error> error_;
};

// "string", "number", "object" ... as a person would say it.
std::string_view json_type_name(const nlohmann::json& value);

}  // namespace wsindex::ipc
