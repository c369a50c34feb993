// DupesReplyReader: a SAX walk over the one shape the daemon writes (dupes_reply_reader.hpp).
#include "ipc/dupes_reply_reader.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ipc/base64.hpp"
#include "ipc/dupes_reply_layout.hpp"

namespace wsindex::ipc {
namespace {

using json = nlohmann::json;

// Where the parser is: the objects and arrays of the accepted shape.
enum class Place { Frame, Parameters, Changed, Groups, Group, Files, File, Names, Encoded };

// The keys of each object, as bits (a key seen twice is declined: the DOM keeps the last one).
enum Key : std::uint32_t {
    kNone = 0,
    kContinues = 1u << 0,
    kParameters = 1u << 1,
    kBytesRead = 1u << 2,
    kCached = 1u << 3,
    kCandidates = 1u << 4,
    kChanged = 1u << 5,
    kElapsed = 1u << 6,
    kFilesRead = 1u << 7,
    kGroups = 1u << 8,
    kHashed = 1u << 9,
    kUnreadable = 1u << 10,
    kWasted = 1u << 11,
    kFiles = 1u << 12,
    kSize = 1u << 13,
    kNames = 1u << 14,
    kB64 = 1u << 15,
};

Key key_of(Place place, const std::string& k) {
    switch (place) {
        case Place::Frame:
            if (k == "continues") return kContinues;
            if (k == "parameters") return kParameters;
            return kNone;
        case Place::Parameters:
            if (k == "bytes_read") return kBytesRead;
            if (k == "cached") return kCached;
            if (k == "candidates") return kCandidates;
            if (k == "changed") return kChanged;
            if (k == "elapsed_ms") return kElapsed;
            if (k == "files_read") return kFilesRead;
            if (k == "groups") return kGroups;
            if (k == "hashed") return kHashed;
            if (k == "unreadable") return kUnreadable;
            if (k == "wasted") return kWasted;
            return kNone;  // "progress" and anything new: the DOM way
        case Place::Group:
            if (k == "files") return kFiles;
            if (k == "size") return kSize;
            if (k == "wasted") return kWasted;
            return kNone;
        case Place::File:
            return k == "names" ? kNames : kNone;
        case Place::Encoded:
            return k == "b64" ? kB64 : kNone;
        default:
            return kNone;
    }
}

class Sax {
  public:
    Sax(DupesReply& out, std::string* null_separated) : out_(out), names_out_(null_separated) {}

    bool null() { return false; }
    bool boolean(bool v) {
        if (top() != Place::Frame || key_ != kContinues) return false;
        continues = v;
        return true;
    }
    bool number_integer(json::number_integer_t) { return false; }  // negative
    bool number_unsigned(json::number_unsigned_t v) {
        std::uint64_t* field = counter();
        if (field == nullptr) return false;
        *field = v;
        return true;
    }
    bool number_float(json::number_float_t, const json::string_t&) { return false; }
    bool binary(json::binary_t&) { return false; }
    bool string(json::string_t& s) {
        if (top() == Place::Names && names_out_ != nullptr) {
            names_out_->append(s).push_back('\0');
            return true;
        }
        if (top() == Place::Names || top() == Place::Changed) {
            // A copy, not a move: the lexer keeps its buffer's capacity for the next string
            // (a moved-from buffer grows again character by character), and the copy is one
            // allocation of the right size.
            list()->emplace_back(s);
            return true;
        }
        if (top() != Place::Encoded || key_ != kB64) return false;
        auto bytes = base64_decode(s);
        if (!bytes) return false;
        decoded_ = std::move(*bytes);
        return true;
    }
    bool start_object(std::size_t) {
        if (stack_.empty()) return push(Place::Frame);
        switch (top()) {
            case Place::Frame:
                return key_ == kParameters && push(Place::Parameters);
            case Place::Groups:
                out_.groups.emplace_back();
                return push(Place::Group);
            case Place::Files:
                if (names_out_ == nullptr) out_.groups.back().files.emplace_back();
                return push(Place::File);
            case Place::Names:
            case Place::Changed:
                decoded_.reset();
                return push(Place::Encoded);
            default:
                return false;
        }
    }
    bool key(json::string_t& k) {
        const Key id = key_of(top(), k);
        if (id == kNone || (seen_.back() & id) != 0) return false;
        seen_.back() |= id;
        key_ = id;
        return true;
    }
    bool end_object() {
        const Place place = top();
        if (place == Place::Encoded) {
            // {"b64": ...} and nothing else.
            if (!decoded_) return false;
            pop();
            if (top() == Place::Names && names_out_ != nullptr) {
                names_out_->append(*decoded_).push_back('\0');
            } else {
                list()->push_back(std::move(*decoded_));
            }
            return true;
        }
        if (place == Place::Group && names_out_ != nullptr) names_out_->push_back('\0');
        if (place == Place::Parameters) saw_parameters = true;
        pop();
        return true;
    }
    bool start_array(std::size_t) {
        const Place place = top();
        if (place == Place::Parameters && key_ == kChanged) return push(Place::Changed);
        if (place == Place::Parameters && key_ == kGroups) return push(Place::Groups);
        if (place == Place::Group && key_ == kFiles) return push(Place::Files);
        if (place == Place::File && key_ == kNames) return push(Place::Names);
        return false;
    }
    bool end_array() {
        pop();
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
        return false;
    }

    bool continues = false;
    bool saw_parameters = false;

  private:
    [[nodiscard]] Place top() const { return stack_.empty() ? Place::Frame : stack_.back(); }
    bool push(Place place) {
        stack_.push_back(place);
        seen_.push_back(0);
        key_ = kNone;
        return true;
    }
    void pop() {
        stack_.pop_back();
        seen_.pop_back();
        key_ = kNone;  // the next value in the parent comes after its own key
    }
    // The list a name goes to: the innermost Names or Changed array.
    std::vector<std::string>* list() {
        const Place array =
            stack_.back() == Place::Encoded ? stack_[stack_.size() - 2] : stack_.back();
        if (array == Place::Changed) return &out_.changed;
        return &out_.groups.back().files.back().names;
    }
    std::uint64_t* counter() {
        if (top() == Place::Group) {
            if (key_ == kSize) return &out_.groups.back().size;
            if (key_ == kWasted) return &out_.groups.back().wasted;
            return nullptr;
        }
        if (top() != Place::Parameters) return nullptr;
        switch (key_) {
            case kBytesRead:
                return &out_.bytes_read;
            case kCached:
                return &out_.cached;
            case kCandidates:
                return &out_.candidates;
            case kElapsed:
                return &out_.elapsed_ms;
            case kFilesRead:
                return &out_.files_read;
            case kHashed:
                return &out_.hashed;
            case kUnreadable:
                return &out_.unreadable;
            case kWasted:
                return &out_.wasted;
            default:
                return nullptr;
        }
    }

    DupesReply& out_;
    std::string* names_out_;  // null: names kept in out_
    std::vector<Place> stack_;
    std::vector<std::uint32_t> seen_;  // the keys seen in each open object (0 for arrays)
    Key key_ = kNone;                  // the key whose value comes next
    std::optional<std::string> decoded_;
};

}  // namespace

bool DupesReplyReader::read(std::string_view frame) { return read(frame, nullptr); }

bool DupesReplyReader::read(std::string_view frame, std::string* null_separated) {
    reply_ = DupesReply{};
    continues_ = false;
    // The daemon's own layout without the lexer first (dupes_reply_layout.hpp); anything else
    // through it.
    if (read_dupes_reply_layout(frame, &reply_, &continues_, null_separated)) return true;
    reply_ = DupesReply{};
    continues_ = false;
    const std::size_t had = null_separated != nullptr ? null_separated->size() : 0;
    Sax sax(reply_, null_separated);
    if (!json::sax_parse(frame, &sax, json::input_format_t::json, true) || !sax.saw_parameters) {
        // The caller decodes this frame the DOM way and appends its names then.
        if (null_separated != nullptr) null_separated->resize(had);
        return false;
    }
    continues_ = sax.continues;
    return true;
}

void append_null_separated(const std::vector<DupesGroupInfo>& groups, std::string* out) {
    for (const DupesGroupInfo& g : groups) {
        for (const DupesFileInfo& f : g.files) {
            for (const std::string& name : f.names) out->append(name).push_back('\0');
        }
        out->push_back('\0');
    }
}

}  // namespace wsindex::ipc
