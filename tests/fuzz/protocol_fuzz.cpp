// libFuzzer target: bytes from a client, through everything the daemon does with them before a
// handler runs, and the client side's decoding of replies.
//
// Input: byte 0 picks how the stream is cut into reads (1..256 bytes each), the rest is what a
// peer writes on the socket. Per read, FrameDecoder (with a small cap, so oversize frames are
// common); per frame, parse_request and the method's from_json<Params> exactly as
// Server::add_typed_method does; every error is encoded as the session would send it. The
// same frame is also decoded as a reply and as every reply type (what wsctl does with a
// daemon's answer). Oracles, beyond the sanitizers: the decoder agrees with a naive NUL split;
// every error encodes to a frame that decodes back to the same kind; every accepted request
// re-encodes (to_json, dump_json) and decodes again to the same JSON (bytes survive losslessly);
// a find's regex that storage/regex_guard lets through compiles within the fuzzer's limits.
#include <regex.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ipc/base64.hpp"
#include "ipc/bytes_codec.hpp"
#include "ipc/frame_decoder.hpp"
#include "ipc/methods.hpp"
#include "ipc/protocol.hpp"
#include "storage/regex_guard.hpp"

namespace {

using namespace wsindex::ipc;
using nlohmann::json;

// Small enough that the fuzzer crosses it often; the daemon's real cap is 1 MiB.
constexpr std::size_t kCap = 4096;
constexpr std::size_t kFramesDecoded = 8;

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "protocol_fuzz: oracle failed: %s\n", what);
    std::abort();
}

void check(bool ok, const char* what) {
    if (!ok) fail(what);
}

// What the session sends for an error must decode back as that error on the client.
void check_error_frame(const Error& error) {
    const std::string frame = encode_error(error);
    check(!frame.empty() && frame.back() == '\0', "error frame ends with NUL");
    check(std::memchr(frame.data(), '\0', frame.size() - 1) == nullptr, "error frame has one NUL");
    auto back = parse_reply(std::string_view(frame.data(), frame.size() - 1));
    check(!back.ok(), "an encoded error decodes as an error");
    check(back.error().kind == error.kind || error.kind == ErrorKind::Unknown ||
              !is_wire_error(error.kind),
          "an encoded error keeps its kind");
}

// The decoded parameters encode, and decode again to the same thing.
template <class T>
void round_trip(const T& value) {
    const json encoded = to_json(value);
    check(dump_json(encoded).has_value(), "to_json yields valid UTF-8 only");
    auto again = from_json<T>(encoded);
    check(again.ok(), "to_json output is accepted by from_json");
    check(to_json(again.value()) == encoded, "from_json(to_json(x)) == x");
}

// The daemon's own check of a find's regex (daemon/query_handlers.cpp): what the guard lets
// through is compiled, under the fuzzer's malloc limit and timeout.
void check_pattern(const FindParams& p) {
    if (p.match != MatchMode::Regex || !p.pattern) return;
    if (wsindex::storage::regex_refusal(*p.pattern)) return;
    regex_t re;
    const int flags = REG_EXTENDED | REG_NOSUB | (p.case_insensitive ? REG_ICASE : 0);
    if (::regcomp(&re, p.pattern->c_str(), flags) == 0) ::regfree(&re);
}

template <class T>
void decode_params(const json& parameters) {
    auto params = from_json<T>(parameters);
    if (!params) {
        check(params.error().kind == ErrorKind::InvalidParameter,
              "bad parameters are InvalidParameter");
        check_error_frame(params.error());
        return;
    }
    round_trip(params.value());
    if constexpr (std::is_same_v<T, FindParams>) check_pattern(params.value());
}

// Server side: what Session::dispatch_next and the typed handlers do with one frame.
void serve(std::string_view frame, const Limits& limits) {
    auto request = parse_request(frame, limits);
    if (!request) {
        const ErrorKind kind = request.error().kind;
        check(kind == ErrorKind::InvalidRequest || kind == ErrorKind::MessageTooLarge,
              "a bad request is InvalidRequest or MessageTooLarge");
        check_error_frame(request.error());
        return;
    }
    check(request->parameters.is_object(), "parameters is always an object");
    const std::string& m = request->method;
    if (m == method::kScan)
        decode_params<ScanParams>(request->parameters);
    else if (m == method::kCancel)
        decode_params<CancelParams>(request->parameters);
    else if (m == method::kFind)
        decode_params<FindParams>(request->parameters);
    else if (m == method::kDu)
        decode_params<DuParams>(request->parameters);
    else if (m == method::kErrors)
        decode_params<ErrorsParams>(request->parameters);
    else if (m == method::kScans)
        decode_params<ScansParams>(request->parameters);
    else if (m == method::kForget)
        decode_params<ForgetParams>(request->parameters);
    else if (m != method::kVersion && m != method::kStatus) {
        check_error_frame(
            make_error(ErrorKind::MethodNotFound, "no method '" + m + "'", json{{"method", m}}));
    }
    // A request re-encodes (the client library's side) within the same limits or says why.
    auto encoded = encode_request(request.value(), limits);
    check(encoded.ok() || encoded.error().kind == ErrorKind::MessageTooLarge,
          "a parsed request re-encodes");
}

// Client side: the same bytes as a daemon's answer, decoded as every reply type.
void read_reply(std::string_view frame, const Limits& limits) {
    auto reply = parse_reply(frame, limits);
    if (!reply) return;
    const json& p = reply->parameters;
    if (auto v = from_json<VersionReply>(p)) round_trip(v.value());
    if (auto v = from_json<ScanReply>(p)) round_trip(v.value());
    if (auto v = from_json<StatusReply>(p)) round_trip(v.value());
    if (auto v = from_json<CancelReply>(p)) round_trip(v.value());
    if (auto v = from_json<FindReply>(p)) round_trip(v.value());
    if (auto v = from_json<DuReply>(p)) round_trip(v.value());
    if (auto v = from_json<ErrorsReply>(p)) round_trip(v.value());
    if (auto v = from_json<ScansReply>(p)) round_trip(v.value());
    if (auto v = from_json<ForgetReply>(p)) round_trip(v.value());
}

// The frames a naive split finds, and whether the stream overflowed the cap before its end.
struct Split {
    std::vector<std::string> frames;
    bool failed = false;
};

Split naive_split(std::string_view stream, std::size_t cap) {
    Split out;
    while (true) {
        const std::size_t nul = stream.find('\0');
        const std::size_t len = nul == std::string_view::npos ? stream.size() : nul;
        if (len > cap) {
            out.failed = true;
            return out;
        }
        if (nul == std::string_view::npos) return out;
        out.frames.emplace_back(stream.substr(0, nul));
        stream.remove_prefix(nul + 1);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::size_t chunk = std::size_t{data[0]} + 1;
    const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);

    Limits limits;
    limits.max_message_bytes = kCap;
    FrameDecoder decoder(kCap);
    std::vector<std::string> frames;
    bool ok = true;
    for (std::size_t at = 0; at < stream.size() && ok; at += chunk) {
        ok = decoder.feed(stream.substr(at, chunk), frames);
        check(decoder.buffered() <= kCap, "the decoder never holds more than its cap");
    }
    const Split expected = naive_split(stream, kCap);
    check(frames == expected.frames, "the decoder agrees with a naive split");
    check(ok == !expected.failed && decoder.failed() == expected.failed,
          "the decoder fails exactly when a frame passes the cap");

    // Frames are independent past the decoder: the first few carry all the coverage, and
    // decoding hundreds of tiny frames per input would cut the fuzzer's speed tenfold.
    for (std::size_t i = 0; i < frames.size() && i < kFramesDecoded; ++i) {
        serve(frames[i], limits);
        read_reply(frames[i], limits);
    }
    // The codecs on their own, on the raw bytes: any byte string survives encode/decode.
    const json encoded = encode_bytes(stream);
    check(dump_json(encoded).has_value(), "encode_bytes yields valid UTF-8");
    auto decoded = decode_bytes(encoded, "x");
    check(decoded.ok() && decoded.value() == stream, "decode_bytes(encode_bytes(b)) == b");
    // Strict base64: whatever it accepts is the one canonical encoding of what it returns.
    if (auto raw = base64_decode(stream))
        check(base64_encode(*raw) == stream, "base64 is canonical");
    return 0;
}
