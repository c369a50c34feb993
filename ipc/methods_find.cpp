// wsindex.Find: the match modes, the parameters, the entries and the reply.
#include "ipc/bytes_codec.hpp"
#include "ipc/methods_codec.hpp"

namespace wsindex::ipc {

namespace {

constexpr std::string_view kTypeLetters = "fdlpscb";

char read_type_letter(FieldReader& r, std::string_view name) {
    const std::string letter = r.text(name, "?");
    if (letter.size() != 1 ||
        (letter != "?" && kTypeLetters.find(letter[0]) == std::string_view::npos)) {
        if (r.ok()) r.fail_field(name, "must be one of f d l p s c b ?");
        return '?';
    }
    return letter[0];
}

}  // namespace

void read(FieldReader& r, FindEntry& out) {
    out.path = r.bytes_or("path", {});
    out.type = read_type_letter(r, "type");
    out.has_metadata = r.has("size") || r.has("mtime_ns");
    out.size = r.uint64("size", 0);
    out.mtime_ns = r.int64("mtime_ns", 0);
}

std::string_view match_mode_name(MatchMode mode) {
    switch (mode) {
        case MatchMode::Substring:
            return "substring";
        case MatchMode::Glob:
            return "glob";
        case MatchMode::Regex:
            return "regex";
    }
    return "substring";
}

json to_json(const FindParams& v) {
    json out{{"match", match_mode_name(v.match)},
             {"case_insensitive", v.case_insensitive},
             {"limit", v.limit}};
    if (v.pattern) out["pattern"] = encode_bytes(*v.pattern);
    if (!v.types.empty()) out["types"] = v.types;
    if (v.min_size) out["min_size"] = *v.min_size;
    if (v.max_size) out["max_size"] = *v.max_size;
    if (v.newer_ns) out["newer_ns"] = *v.newer_ns;
    if (v.under) out["under"] = encode_bytes(*v.under);
    if (!v.metadata) out["metadata"] = false;  // the default is left out
    return out;
}

json to_json(const FindEntry& v) {
    if (!v.has_metadata)
        return json{{"path", encode_bytes(v.path)}, {"type", std::string(1, v.type)}};
    return json{{"path", encode_bytes(v.path)},
                {"type", std::string(1, v.type)},
                {"size", v.size},
                {"mtime_ns", v.mtime_ns}};
}

json to_json(const FindReply& v) {
    json out{{"entries", list_to_json(v.entries)}};
    if (v.truncated) out["truncated"] = true;
    return out;
}

template <>
Result<FindParams> from_json<FindParams>(const json& j) {
    return decode_top<FindParams>(j, [](FieldReader& r, FindParams& out) {
        out.pattern = r.bytes("pattern");
        const std::string match = r.text("match", "substring");
        if (match == "substring")
            out.match = MatchMode::Substring;
        else if (match == "glob")
            out.match = MatchMode::Glob;
        else if (match == "regex")
            out.match = MatchMode::Regex;
        else if (r.ok())
            r.fail_field("match", "must be one of substring, glob, regex; got '" + match + "'");
        out.case_insensitive = r.boolean("case_insensitive", false);
        out.types = r.text("types");
        for (const char c : out.types) {
            if (kTypeLetters.find(c) == std::string_view::npos && r.ok()) {
                r.fail_field("types", "must only hold the letters f d l p s c b");
            }
        }
        out.min_size = r.optional_uint64("min_size");
        out.max_size = r.optional_uint64("max_size");
        out.newer_ns = r.optional_int64("newer_ns");
        out.under = r.bytes("under");
        out.limit = r.uint64("limit", 0);
        out.metadata = r.boolean("metadata", true);
        if (!r.ok()) return;
        require_absolute(r, "under", out.under);
        if (out.min_size && out.max_size && *out.min_size > *out.max_size) {
            r.fail_field("min_size", "must not exceed max_size");
        }
        if (out.match != MatchMode::Substring && !out.pattern) {
            r.fail_field("pattern", "is required when match is glob or regex");
        }
    });
}

template <>
Result<FindEntry> from_json<FindEntry>(const json& j) {
    return decode_top<FindEntry>(j, [](FieldReader& r, FindEntry& out) { read(r, out); });
}

template <>
Result<FindReply> from_json<FindReply>(const json& j) {
    return decode_top<FindReply>(j, [](FieldReader& r, FindReply& out) {
        out.entries = read_objects<FindEntry>(r, "entries");
        out.truncated = r.boolean("truncated", false);
    });
}

}  // namespace wsindex::ipc
