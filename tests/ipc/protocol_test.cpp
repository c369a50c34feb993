// Protocol: request/reply parsing and encoding, error names, unknown fields, depth and size caps.
#include "ipc/protocol.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ipc/error.hpp"

namespace wsindex::ipc {
namespace {

using nlohmann::json;
using namespace std::string_literals;

TEST(Protocol, ParsesAFullRequest) {
    auto request =
        parse_request(R"({"method":"wsindex.Find","parameters":{"pattern":"x"},"more":true})");
    ASSERT_TRUE(request.ok()) << request.error().to_string();
    EXPECT_EQ(request->method, "wsindex.Find");
    EXPECT_EQ(request->parameters, (json{{"pattern", "x"}}));
    EXPECT_TRUE(request->more);
}

TEST(Protocol, ParametersAndMoreAreOptionalAndUnknownFieldsIgnored) {
    auto request =
        parse_request(R"({"method":"wsindex.Status","oneway":false,"future":{"x":[1]}})");
    ASSERT_TRUE(request.ok());
    EXPECT_TRUE(request->parameters.is_object());
    EXPECT_TRUE(request->parameters.empty());
    EXPECT_FALSE(request->more);
}

TEST(Protocol, StructuralErrorsAreInvalidRequest) {
    for (const std::string& bad : std::vector<std::string>{
             "", "garbage", "[1,2]", "\"str\"", "{}", R"({"method":5})", R"({"method":""})",
             R"({"method":"m","parameters":[1]})", R"({"method":"m","parameters":"x"})",
             R"({"method":"m","more":"yes"})", R"({"method":"m")", "{\"method\":\"m\xFF\"}"}) {
        auto request = parse_request(bad);
        ASSERT_FALSE(request.ok()) << bad;
        EXPECT_EQ(request.error().kind, ErrorKind::InvalidRequest) << bad;
        EXPECT_FALSE(request.error().message.empty());
        // The message may quote input; it must still be dumpable.
        EXPECT_FALSE(encode_error(request.error()).empty());
    }
}

TEST(Protocol, DeepNestingIsRefusedBeforeParsing) {
    const std::string deep = R"({"method":"m","parameters":{"x":)" + std::string(100000, '[') +
                             std::string(100000, ']') + "}}";
    auto request = parse_request(deep);
    ASSERT_FALSE(request.ok());
    EXPECT_EQ(request.error().kind, ErrorKind::InvalidRequest);
    // Brackets inside strings do not count.
    auto fine =
        parse_request(R"({"method":"m","parameters":{"x":")" + std::string(1000, '[') + "\"}}");
    EXPECT_TRUE(fine.ok());
}

TEST(Protocol, OversizeFrameIsMessageTooLarge) {
    Limits limits;
    limits.max_message_bytes = 64;
    auto request = parse_request(
        R"({"method":"m","parameters":{"x":")" + std::string(100, 'a') + "\"}}", limits);
    ASSERT_FALSE(request.ok());
    EXPECT_EQ(request.error().kind, ErrorKind::MessageTooLarge);
}

TEST(Protocol, EncodedRequestRoundTrips) {
    Request request{"wsindex.Du", json{{"depth", 2}}, true};
    auto frame = encode_request(request);
    ASSERT_TRUE(frame.ok());
    ASSERT_EQ(frame->back(), '\0');
    EXPECT_EQ(frame->find('\0'), frame->size() - 1);
    auto parsed = parse_request(std::string_view(*frame).substr(0, frame->size() - 1));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(parsed->method, "wsindex.Du");
    EXPECT_EQ(parsed->parameters, request.parameters);
    EXPECT_TRUE(parsed->more);
}

TEST(Protocol, RepliesRoundTrip) {
    auto frame = encode_reply(Reply{json{{"n", 1}}, true});
    ASSERT_TRUE(frame.ok());
    auto reply = parse_reply(std::string_view(*frame).substr(0, frame->size() - 1));
    ASSERT_TRUE(reply.ok());
    EXPECT_TRUE(reply->continues);
    EXPECT_EQ(reply->parameters, (json{{"n", 1}}));

    auto last = parse_reply(R"({"parameters":{}})");
    ASSERT_TRUE(last.ok());
    EXPECT_FALSE(last->continues);
}

TEST(Protocol, ErrorRepliesBecomeTypedErrors) {
    const std::string frame =
        encode_error(make_error(ErrorKind::NoSuchPath, "no such path: /x", json{{"path", "/x"}}));
    EXPECT_EQ(json::parse(frame.substr(0, frame.size() - 1)),
              (json{{"error", "wsindex.NoSuchPath"},
                    {"parameters", {{"message", "no such path: /x"}, {"path", "/x"}}}}));
    auto reply = parse_reply(frame.substr(0, frame.size() - 1));
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.error().kind, ErrorKind::NoSuchPath);
    EXPECT_EQ(reply.error().message, "no such path: /x");
    EXPECT_EQ(reply.error().details, (json{{"path", "/x"}}));
}

TEST(Protocol, UnknownErrorNamesAreKept) {
    auto reply = parse_reply(R"({"error":"wsindex.SomethingNew","parameters":{"message":"m"}})");
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.error().kind, ErrorKind::Unknown);
    EXPECT_EQ(reply.error().name, "wsindex.SomethingNew");
}

TEST(Protocol, MalformedRepliesAreProtocolErrors) {
    for (const std::string& bad :
         std::vector<std::string>{"nope", "[]", R"({"parameters":1})", R"({"error":3})",
                                  R"({"parameters":{},"continues":"x"})"}) {
        auto reply = parse_reply(bad);
        ASSERT_FALSE(reply.ok()) << bad;
        EXPECT_EQ(reply.error().kind, ErrorKind::Protocol) << bad;
    }
}

TEST(Protocol, EncodingNeverThrowsOnInvalidUtf8) {
    // A handler bug: raw bytes in a reply. The encoder reports it instead of throwing.
    auto frame = encode_reply(Reply{json{{"path", "bad\xFF"}}, false});
    ASSERT_FALSE(frame.ok());
    EXPECT_EQ(frame.error().kind, ErrorKind::Internal);
    // Errors are always encodable: message and details are sanitised or dropped.
    Error error = make_error(ErrorKind::NoSuchPath, "no such path: /bad\xFF");
    error.details = json{{"raw", "\xFE"}};
    const std::string text = encode_error(error);
    auto parsed = parse_reply(text.substr(0, text.size() - 1));
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.error().kind, ErrorKind::NoSuchPath);
}

TEST(Protocol, OversizeReplyIsRefusedByTheEncoder) {
    Limits limits;
    limits.max_message_bytes = 100;
    auto frame = encode_reply(Reply{json{{"x", std::string(200, 'a')}}, false}, limits);
    ASSERT_FALSE(frame.ok());
    EXPECT_EQ(frame.error().kind, ErrorKind::MessageTooLarge);
}

TEST(ErrorNames, EveryWireKindRoundTrips) {
    for (int k = 0; k <= static_cast<int>(ErrorKind::Unknown); ++k) {
        const auto kind = static_cast<ErrorKind>(k);
        if (!is_wire_error(kind)) continue;
        const std::string_view name = error_name(kind);
        EXPECT_TRUE(name.starts_with("wsindex.")) << name;
        EXPECT_EQ(error_kind_from_name(name), kind) << name;
    }
    EXPECT_EQ(error_kind_from_name("local.Timeout"), ErrorKind::Unknown);  // never from the wire
    EXPECT_FALSE(is_wire_error(ErrorKind::NotRunning));
}

}  // namespace
}  // namespace wsindex::ipc
