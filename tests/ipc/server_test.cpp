// Server over a real socket: bad input, limits, timeouts, streaming, disconnects, concurrency.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "ipc/bytes_codec.hpp"
#include "ipc/methods.hpp"
#include "tests/ipc/support/server_fixture.hpp"

namespace wsindex::ipc::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

std::string frame(const std::string& json_text) { return json_text + std::string(1, '\0'); }

// The error name of a raw reply frame, "" if it is not an error.
std::string error_of(const std::optional<std::string>& reply) {
    if (!reply) return "<no reply>";
    auto parsed = parse_reply(*reply);
    return parsed.ok() ? "" : parsed.error().name;
}

class IpcServer : public ServerFixture {};

TEST_F(IpcServer, PingRoundTrip) {
    start();
    Client client = connect();
    auto reply = client.call("test.Ping", json::object());
    ASSERT_TRUE(reply.ok()) << reply.error().to_string();
    EXPECT_EQ(reply.value(), (json{{"pong", true}}));
}

TEST_F(IpcServer, PeerCredentialsAreReported) {
    start();
    Client client = connect();
    auto reply = client.call("test.Peer", json::object());
    ASSERT_TRUE(reply.ok());
    EXPECT_TRUE(reply->at("valid").get<bool>());
    EXPECT_EQ(reply->at("pid").get<pid_t>(), ::getpid());
    EXPECT_EQ(reply->at("uid").get<uid_t>(), ::getuid());
    EXPECT_EQ(reply->at("gid").get<gid_t>(), ::getgid());
}

TEST_F(IpcServer, GarbageGetsInvalidRequestThenClose) {
    start();
    RawConnection raw(path_);
    ASSERT_TRUE(raw.ok());
    ASSERT_TRUE(raw.send(frame("this is not json")));
    EXPECT_EQ(error_of(raw.read_frame()), "wsindex.InvalidRequest");
    EXPECT_TRUE(raw.wait_closed());
    // Everyone else is still served.
    EXPECT_TRUE(connect().call("test.Ping", json::object()).ok());
}

TEST_F(IpcServer, NonObjectAndMissingMethodAreInvalidRequest) {
    start();
    for (const std::string& bad :
         std::vector<std::string>{std::string("[1,2,3]"), std::string("{\"parameters\":{}}"),
                                  std::string("{\"method\":\"test.Ping\",\"parameters\":[]}"),
                                  std::string("\xFF\xFE")}) {
        RawConnection raw(path_);
        ASSERT_TRUE(raw.send(frame(bad)));
        EXPECT_EQ(error_of(raw.read_frame()), "wsindex.InvalidRequest") << bad;
        EXPECT_TRUE(raw.wait_closed());
    }
}

TEST_F(IpcServer, OversizeGetsMessageTooLargeThenClose) {
    ServerOptions options;
    options.limits.max_message_bytes = 1024;
    start(options);
    RawConnection raw(path_);
    // A valid request first: answered in order before the oversize one's error.
    ASSERT_TRUE(raw.send(frame(R"({"method":"test.Ping"})")));
    ASSERT_TRUE(raw.send(std::string(4096, 'a')));  // no NUL: detected as soon as it passes 1 KiB
    auto first = raw.read_frame();
    ASSERT_TRUE(first);
    EXPECT_EQ(error_of(first), "");
    EXPECT_EQ(error_of(raw.read_frame()), "wsindex.MessageTooLarge");
    EXPECT_TRUE(raw.wait_closed());
    EXPECT_TRUE(connect().call("test.Ping", json::object()).ok());
}

TEST_F(IpcServer, UnknownMethodKeepsTheConnectionUsable) {
    start();
    Client client = connect();
    auto reply = client.call("wsindex.NoSuchThing", json::object());
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.error().kind, ErrorKind::MethodNotFound);
    EXPECT_EQ(reply.error().details.value("method", ""), "wsindex.NoSuchThing");
    EXPECT_TRUE(client.connected());
    EXPECT_TRUE(client.call("test.Ping", json::object()).ok());
}

TEST_F(IpcServer, WrongParameterTypesNameTheField) {
    start();
    Client client = connect();
    auto reply = client.call("test.Typed", json{{"limit", "ten"}});
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.error().kind, ErrorKind::InvalidParameter);
    EXPECT_NE(reply.error().message.find("'limit'"), std::string::npos) << reply.error().message;
    EXPECT_EQ(reply.error().details.value("parameter", ""), "limit");
    auto good = client.call("test.Typed", json{{"limit", 3}});
    ASSERT_TRUE(good.ok());
    EXPECT_EQ(good->at("limit"), 3);
}

TEST_F(IpcServer, ThrowingOrSilentHandlersAnswerInternal) {
    start();
    Client client = connect();
    auto thrown = client.call("test.Throw", json::object());
    ASSERT_FALSE(thrown.ok());
    EXPECT_EQ(thrown.error().kind, ErrorKind::Internal);
    auto dropped = client.call("test.Drop", json::object());
    ASSERT_FALSE(dropped.ok());
    EXPECT_EQ(dropped.error().kind, ErrorKind::Internal);
    EXPECT_TRUE(client.call("test.Ping", json::object()).ok());
}

TEST_F(IpcServer, PipelinedRequestsAreAnsweredInOrder) {
    start();
    RawConnection raw(path_);
    std::string batch;
    for (int i = 0; i < 10; ++i)
        batch += frame(R"({"method":"test.Echo","parameters":{"i":)" + std::to_string(i) + "}}");
    ASSERT_TRUE(raw.send(batch));
    for (int i = 0; i < 10; ++i) {
        auto reply = raw.read_frame();
        ASSERT_TRUE(reply);
        auto parsed = parse_reply(*reply);
        ASSERT_TRUE(parsed.ok());
        EXPECT_EQ(parsed->parameters.at("i"), i);
    }
}

TEST_F(IpcServer, HalfClosedClientStillGetsItsReply) {
    start();
    RawConnection raw(path_);
    ASSERT_TRUE(raw.send(frame(R"({"method":"test.Ping"})")));
    raw.shutdown_write();
    EXPECT_EQ(error_of(raw.read_frame()), "");
    EXPECT_TRUE(raw.wait_closed());
}

TEST_F(IpcServer, StreamedRepliesArriveInOrderWithContinues) {
    start();
    Client client = connect();
    std::uint64_t next = 0;
    bool saw_final = false;
    auto error = client.call_more("test.Stream", json{{"count", 500}, {"size", 100}},
                                  [&](const json& p, bool continues) {
                                      if (continues) {
                                          EXPECT_EQ(p.at("seq").get<std::uint64_t>(), next);
                                          ++next;
                                      } else {
                                          saw_final = true;
                                          EXPECT_EQ(p.at("count"), 500);
                                      }
                                      return true;
                                  });
    ASSERT_FALSE(error) << error->to_string();
    EXPECT_EQ(next, 500u);
    EXPECT_TRUE(saw_final);
    EXPECT_TRUE(client.call("test.Ping", json::object()).ok());
}

// Responder::more_text / reply_text: serialised parameters arrive as sent, and are refused
// like a DOM would be (invalid UTF-8: Internal; over the cap: MessageTooLarge; no "more").
TEST_F(IpcServer, SerialisedRepliesArriveAsSent) {
    start();
    Client client = connect();
    std::vector<json> got;
    std::vector<bool> continued;
    auto error = client.call_more(
        "test.Text", json{{"texts", {R"({"a":1})", R"({"b":"x\"y"})", R"({"entries":[]})"}}},
        [&](const json& p, bool continues) {
            got.push_back(p);
            continued.push_back(continues);
            return true;
        });
    ASSERT_FALSE(error) << error->to_string();
    EXPECT_EQ(got, (std::vector<json>{json{{"a", 1}}, json{{"b", "x\"y"}},
                                      json{{"entries", json::array()}}}));
    EXPECT_EQ(continued, (std::vector<bool>{true, true, false}));
    std::lock_guard lock(text_mutex_);
    EXPECT_EQ(text_results_,
              (std::vector<SendResult>{SendResult::Sent, SendResult::Sent, SendResult::Sent}));
}

TEST_F(IpcServer, SerialisedRepliesAreCheckedLikeTheDom) {
    ServerOptions options;
    options.limits.max_message_bytes = 1000;
    start(options);
    Client client = connect();
    auto call = [&](const std::string& text, std::size_t pad) -> std::optional<Error> {
        auto reply = client.call("test.Text", json{{"texts", {encode_bytes(text)}}, {"pad", pad}});
        return reply.ok() ? std::nullopt : std::optional<Error>(reply.error());
    };
    auto bad = call("{\"path\":\"\xFF\"}", 0);
    ASSERT_TRUE(bad);
    EXPECT_EQ(bad->kind, ErrorKind::Internal);
    {
        std::lock_guard lock(text_mutex_);
        EXPECT_EQ(text_results_, std::vector<SendResult>{SendResult::EncodeFailed});
    }
    EXPECT_FALSE(call("{}", 1000 - 17));  // {"parameters":{} and pad}: exactly the cap
    auto big = call("{}", 1000 - 16);
    ASSERT_TRUE(big);
    EXPECT_EQ(big->kind, ErrorKind::MessageTooLarge);
    {
        std::lock_guard lock(text_mutex_);
        EXPECT_EQ(text_results_, std::vector<SendResult>{SendResult::TooLarge});
    }
    // more_text on a call without "more" fails the call (test.Text streams all but the last).
    Client plain = connect();
    auto reply = plain.call("test.Text", json{{"texts", {"{}", "{}"}}});
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.error().kind, ErrorKind::Internal);
    std::lock_guard lock(text_mutex_);
    ASSERT_EQ(text_results_.size(), 2u);
    EXPECT_EQ(text_results_[0], SendResult::NotStreaming);
    EXPECT_EQ(text_results_[1], SendResult::AlreadyFinished);
}

TEST_F(IpcServer, StreamingToACallWithoutMoreIsAnError) {
    start();
    Client client = connect();
    auto reply = client.call("test.Stream", json{{"count", 3}});
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.error().kind, ErrorKind::Internal);
    ASSERT_TRUE(wait_for(stream_.mutex, stream_.cv, [&] { return stream_.done; }));
    EXPECT_EQ(stream_.last, SendResult::NotStreaming);
}

TEST_F(IpcServer, BackpressureBoundsTheBufferAndLosesNothing) {
    ServerOptions options;
    options.max_buffered_reply_bytes = 64 * 1024;
    start(options);
    RawConnection raw(path_);
    constexpr std::uint64_t kCount = 600;
    ASSERT_TRUE(raw.send(frame(
        R"({"method":"test.Stream","more":true,"parameters":{"count":600,"size":10000,"try_first":true}})")));
    // We read nothing: the socket fills, then the call's buffer, and try_more says WouldBlock.
    ASSERT_TRUE(wait_for(stream_.mutex, stream_.cv, [&] { return stream_.saw_would_block; }));
    {
        std::lock_guard lock(stream_.mutex);
        EXPECT_LE(stream_.buffered_at_would_block, options.max_buffered_reply_bytes + 11000);
        EXPECT_LT(stream_.sent, kCount);
    }
    // Now read everything: the producer continues with blocking more(), nothing is lost.
    for (std::uint64_t i = 0; i < kCount; ++i) {
        auto reply = raw.read_frame();
        ASSERT_TRUE(reply) << "at " << i;
        auto parsed = parse_reply(*reply);
        ASSERT_TRUE(parsed.ok());
        ASSERT_TRUE(parsed->continues);
        ASSERT_EQ(parsed->parameters.at("seq").get<std::uint64_t>(), i);
    }
    auto last = raw.read_frame();
    ASSERT_TRUE(last);
    EXPECT_FALSE(parse_reply(*last)->continues);
    ASSERT_TRUE(wait_for(stream_.mutex, stream_.cv, [&] { return stream_.done; }));
    std::lock_guard lock(stream_.mutex);
    EXPECT_EQ(stream_.last, SendResult::Sent);
    // Every more() returned with the budget respected (one frame may exceed it when alone).
    EXPECT_LE(stream_.max_buffered, options.max_buffered_reply_bytes + 11000);
}

TEST_F(IpcServer, ClientDisconnectingMidStreamStopsTheProducer) {
    start();
    {
        Client client = connect();
        int seen = 0;
        auto error = client.call_more("test.Stream", json{{"count", 100000000}, {"size", 1000}},
                                      [&](const json&, bool) { return ++seen < 3; });
        EXPECT_FALSE(error);
        EXPECT_EQ(seen, 3);
        EXPECT_FALSE(client.connected());  // stopping early hangs up
    }
    ASSERT_TRUE(wait_for(stream_.mutex, stream_.cv, [&] { return stream_.done; }));
    {
        std::lock_guard lock(stream_.mutex);
        EXPECT_EQ(stream_.last, SendResult::Closed);
        EXPECT_LT(stream_.sent, 100000000u);
    }
    EXPECT_TRUE(connect().call("test.Ping", json::object()).ok());
    EXPECT_TRUE(eventually([&] { return server_->connection_count() == 0; }));
}

TEST_F(IpcServer, HangUpDuringASilentCallIsNoticedWithoutWriting) {
    start();
    {
        RawConnection raw(path_);
        ASSERT_TRUE(raw.send(frame(R"({"method":"test.Hold","more":true})")));
        ASSERT_TRUE(wait_for(held_.mutex, held_.cv, [&] { return held_.responders.size() == 1; }));
    }  // closed: the server sees EOF, then POLLHUP, and closes the call
    ASSERT_TRUE(wait_for(held_.mutex, held_.cv, [&] { return held_.closed_callbacks == 1; }));
    std::lock_guard lock(held_.mutex);
    EXPECT_FALSE(held_.responders[0].is_open());
    EXPECT_EQ(held_.responders[0].reply(json::object()), SendResult::Closed);
}

TEST_F(IpcServer, HalfCloseDuringACallDoesNotCancelIt) {
    start();
    RawConnection raw(path_);
    ASSERT_TRUE(raw.send(frame(R"({"method":"test.Hold"})")));
    ASSERT_TRUE(wait_for(held_.mutex, held_.cv, [&] { return held_.responders.size() == 1; }));
    raw.shutdown_write();
    {
        std::lock_guard lock(held_.mutex);
        EXPECT_EQ(held_.responders[0].reply(json{{"late", true}}), SendResult::Sent);
    }
    auto reply = raw.read_frame();
    ASSERT_TRUE(reply);
    EXPECT_EQ(parse_reply(*reply)->parameters.at("late"), true);
    EXPECT_TRUE(raw.wait_closed());
    std::lock_guard lock(held_.mutex);
    EXPECT_EQ(held_.closed_callbacks, 0);
}

TEST_F(IpcServer, RepliesFromAnotherThreadAfterTheHandlerReturned) {
    start();
    Client client = connect();
    std::thread answer([&] {
        ASSERT_TRUE(wait_for(held_.mutex, held_.cv, [&] { return held_.responders.size() == 1; }));
        std::lock_guard lock(held_.mutex);
        held_.responders[0].reply(json{{"from", "worker"}});
    });
    auto reply = client.call("test.Hold", json::object());
    answer.join();
    ASSERT_TRUE(reply.ok());
    EXPECT_EQ(reply->at("from"), "worker");
}

TEST_F(IpcServer, ManyConcurrentClients) {
    start();
    constexpr int kThreads = 24;
    constexpr int kCalls = 20;
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            auto client = Client::connect(path_);
            if (!client) {
                ++failures;
                return;
            }
            for (int i = 0; i < kCalls; ++i) {
                const json params{
                    {"t", t}, {"i", i}, {"name", std::string("n\xC3\xA9") + std::to_string(i)}};
                auto reply = client->call("test.Echo", params);
                if (!reply || reply.value() != params) ++failures;
            }
        });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(failures.load(), 0);
}

TEST_F(IpcServer, SilentClientsDoNotBlockOthersAndAreTimedOut) {
    ServerOptions options;
    options.idle_timeout = 3s;
    options.request_timeout = 3s;
    start(options);
    std::vector<std::unique_ptr<RawConnection>> silent;
    for (int i = 0; i < 50; ++i) {
        silent.push_back(std::make_unique<RawConnection>(path_));
        ASSERT_TRUE(silent.back()->ok());
    }
    ASSERT_TRUE(silent.back()->send("{\"method\":"));  // a partial request, never finished
    // Others are served while the silent ones are still connected: not after a timeout cut
    // them (the order is what is checked, not a duration).
    Client client = connect();
    EXPECT_TRUE(client.call("test.Ping", json::object()).ok());
    for (auto& raw : silent) EXPECT_TRUE(raw->quiet_now()) << "a silent client was cut first";
    for (auto& raw : silent) EXPECT_TRUE(raw->wait_closed());
}

TEST_F(IpcServer, TricklingRequestIsCutByTheRequestTimeout) {
    ServerOptions options;
    options.idle_timeout = 60s;
    options.request_timeout = 300ms;
    start(options);
    RawConnection idle(path_);
    RawConnection trickle(path_);
    ASSERT_TRUE(trickle.send("{\"met"));
    EXPECT_TRUE(trickle.wait_closed());
    EXPECT_TRUE(idle.quiet_now());  // an idle connection has a minute, not 300 ms
}

TEST_F(IpcServer, ClientThatStopsReadingIsCutByTheWriteTimeout) {
    ServerOptions options;
    options.write_timeout = 300ms;
    start(options);
    RawConnection raw(path_);
    ASSERT_TRUE(raw.send(frame(
        R"({"method":"test.Stream","more":true,"parameters":{"count":100000000,"size":10000}})")));
    ASSERT_TRUE(wait_for(stream_.mutex, stream_.cv, [&] { return stream_.done; }));
    std::lock_guard lock(stream_.mutex);
    EXPECT_EQ(stream_.last, SendResult::Closed);
}

TEST_F(IpcServer, ConnectionCapAnswersBusy) {
    ServerOptions options;
    options.max_connections = 3;
    start(options);
    std::vector<std::unique_ptr<RawConnection>> held;
    for (int i = 0; i < 3; ++i) held.push_back(std::make_unique<RawConnection>(path_));
    ASSERT_TRUE(eventually([&] { return server_->connection_count() == 3; }));
    RawConnection extra(path_);
    EXPECT_EQ(error_of(extra.read_frame()), "wsindex.Busy");
    EXPECT_TRUE(extra.wait_closed());
    // The client library reports it as a typed error.
    auto client = Client::connect(path_);
    ASSERT_TRUE(client.ok());
    auto reply = client->call("test.Ping", json::object());
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.error().kind, ErrorKind::Busy);
    held.pop_back();
    ASSERT_TRUE(eventually([&] { return server_->connection_count() == 2; }));
    EXPECT_TRUE(connect().call("test.Ping", json::object()).ok());
}

TEST_F(IpcServer, PerUidCap) {
    ServerOptions options;
    options.max_connections_per_uid = 2;
    start(options);
    RawConnection a(path_);
    RawConnection b(path_);
    ASSERT_TRUE(eventually([&] { return server_->connection_count() == 2; }));
    RawConnection c(path_);
    EXPECT_EQ(error_of(c.read_frame()), "wsindex.Busy");
}

TEST_F(IpcServer, StopClosesRunningCallsAndClients) {
    start();
    Client client = connect();
    std::thread caller([&] {
        auto reply = client.call("test.Hold", json::object());
        ASSERT_FALSE(reply.ok());
        EXPECT_EQ(reply.error().kind, ErrorKind::Disconnected);
    });
    ASSERT_TRUE(wait_for(held_.mutex, held_.cv, [&] { return held_.responders.size() == 1; }));
    stop_server();
    caller.join();
    std::lock_guard lock(held_.mutex);
    EXPECT_EQ(held_.closed_callbacks, 1);
    struct stat st {};
    EXPECT_NE(::lstat(path_.c_str(), &st), 0) << "the socket file is removed on stop";
}

TEST_F(IpcServer, ReplyTimeoutOnTheClient) {
    start();
    ClientOptions options;
    options.reply_timeout = 200ms;
    Client client = connect(options);
    auto reply = client.call("test.Hold", json::object());
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.error().kind, ErrorKind::Timeout);
    EXPECT_FALSE(client.connected());
}

}  // namespace
}  // namespace wsindex::ipc::testing
