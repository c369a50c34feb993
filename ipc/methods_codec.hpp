// Shared by the methods_*.cpp files (not part of the public interface): the readers of the types
// more than one method carries, and the helpers every encoder and decoder uses.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/field_reader.hpp"
#include "ipc/methods.hpp"

namespace wsindex::ipc {

using nlohmann::json;

template <class T>
json list_to_json(const std::vector<T>& items) {
    json out = json::array();
    for (const auto& item : items) out.push_back(to_json(item));
    return out;
}

inline void require_absolute(FieldReader& r, std::string_view name,
                             const std::optional<std::string>& path) {
    if (!path) return;
    if (path->empty() || path->front() != '/') {
        r.fail_field(name, "must be an absolute path (start with '/')");
    } else if (path->find('\0') != std::string::npos) {
        r.fail_field(name, "must not contain a NUL byte");
    }
}

// The readers of the array items (each defined in its method's file): read(FieldReader&, T&)
// fills `out` from the reader's object, recording the first bad field in the reader.
void read(FieldReader& r, ScanInfo& out);
void read(FieldReader& r, PoolWorkerStatus& out);
void read(FieldReader& r, RootInfo& out);
void read(FieldReader& r, FindEntry& out);
void read(FieldReader& r, DuEntry& out);
void read(FieldReader& r, ErrorEntry& out);
void read(FieldReader& r, DupesProgressInfo& out);  // methods_dupes.cpp

// Reads `name` as an array of objects, each decoded by read(FieldReader&, T&) with error
// names like "scans[2].root".
template <class T>
std::vector<T> read_objects(FieldReader& r, std::string_view name) {
    std::vector<T> out;
    const json* v = r.raw(name);
    if (!v) return out;
    if (!v->is_array()) {
        r.fail_field(name, "must be an array, got " + std::string(json_type_name(*v)));
        return out;
    }
    out.reserve(v->size());
    for (std::size_t i = 0; i < v->size(); ++i) {
        const std::string element = r.field_name(name) + "[" + std::to_string(i) + "]";
        if (!(*v)[i].is_object()) {
            r.fail(invalid_parameter(element, "must be an object"));
            return {};
        }
        FieldReader sub((*v)[i], element + ".");
        T item;
        read(sub, item);
        if (auto error = sub.take_error()) {
            r.fail(std::move(*error));
            return {};
        }
        out.push_back(std::move(item));
    }
    return out;
}

template <class T, class ReadFn>
Result<T> decode_top(const json& j, ReadFn read_fn) {
    if (!j.is_object()) {
        return make_error(ErrorKind::InvalidParameter,
                          "parameters must be an object, got " + std::string(json_type_name(j)));
    }
    FieldReader r(j);
    T out;
    read_fn(r, out);
    if (auto error = r.take_error()) return std::move(*error);
    return out;
}

}  // namespace wsindex::ipc
