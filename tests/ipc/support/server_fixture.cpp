// ServerFixture: the test handlers and the server's lifetime around each test.
#include "tests/ipc/support/server_fixture.hpp"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "ipc/bytes_codec.hpp"
#include "ipc/methods.hpp"

namespace wsindex::ipc::testing {

using nlohmann::json;

void ServerFixture::SetUp() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "wsindex-ipc-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/wsindexd.sock";
}

void ServerFixture::TearDown() {
    stop_server();
    // Producers wake with Closed once the server has stopped; join them last.
    std::vector<std::thread> workers;
    {
        std::lock_guard lock(workers_mutex_);
        workers.swap(workers_);
    }
    for (auto& t : workers) t.join();
    {
        std::lock_guard lock(held_.mutex);
        held_.responders.clear();
    }
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
}

void ServerFixture::stop_server() {
    if (server_) server_->stop();
    if (io_thread_.joinable()) io_thread_.join();
    server_.reset();
}

Client ServerFixture::connect(ClientOptions options) {
    auto client = Client::connect(path_, options);
    EXPECT_TRUE(client.ok()) << (client.ok() ? "" : client.error().to_string());
    return std::move(client).value();
}

void ServerFixture::start(ServerOptions options) {
    server_ = std::make_unique<Server>(io_, std::move(options));
    server_->add_method("test.Ping", [](Call, Responder r) { r.reply(json{{"pong", true}}); });
    server_->add_method("test.Echo", [](Call call, Responder r) { r.reply(call.parameters); });
    server_->add_method("test.Peer", [](Call call, Responder r) {
        r.reply(json{{"pid", call.peer.pid},
                     {"uid", call.peer.uid},
                     {"gid", call.peer.gid},
                     {"valid", call.peer.valid}});
    });
    server_->add_typed_method<FindParams>("test.Typed", [](const Call&, FindParams p, Responder r) {
        r.reply(json{{"limit", p.limit}});
    });
    server_->add_method("test.Throw",
                        [](Call, Responder) -> void { throw std::runtime_error("boom"); });
    server_->add_method("test.Drop", [](Call, Responder) {});
    server_->add_method("test.Hold", [this](Call, Responder r) {
        r.on_close([this] {
            std::lock_guard lock(held_.mutex);
            ++held_.closed_callbacks;
            held_.cv.notify_all();
        });
        std::lock_guard lock(held_.mutex);
        held_.responders.push_back(std::move(r));
        held_.cv.notify_all();
    });
    // test.Text {texts: [bytes, ...], pad}: parameters already serialised (each followed by
    // `pad` spaces, to make replies larger than their request). Every text but the last goes
    // out with more_text, the last with reply_text; what each returned is in text_results_.
    server_->add_method("test.Text", [this](Call call, Responder r) {
        const auto pad = call.parameters.value("pad", std::size_t{0});
        std::vector<std::string> texts;
        for (const json& t : call.parameters.value("texts", json::array())) {
            texts.push_back(decode_bytes(t, "texts").value() + std::string(pad, ' '));
        }
        std::vector<SendResult> results;
        for (std::size_t i = 0; i < texts.size(); ++i) {
            results.push_back(i + 1 < texts.size() ? r.more_text(texts[i])
                                                   : r.reply_text(texts[i]));
        }
        std::lock_guard lock(text_mutex_);
        text_results_ = std::move(results);
    });
    // test.Stream {count, size, try_first}: a worker thread streams `count` replies of about
    // `size` bytes with sequence numbers, then a final reply. With try_first it uses try_more
    // until the first WouldBlock, then blocking more().
    server_->add_method("test.Stream", [this](Call call, Responder r) {
        const auto count = call.parameters.value("count", std::uint64_t{10});
        const auto size = call.parameters.value("size", std::size_t{16});
        const bool try_first = call.parameters.value("try_first", false);
        std::lock_guard workers_lock(workers_mutex_);
        workers_.emplace_back([this, r = std::move(r), count, size, try_first]() mutable {
            {
                std::lock_guard lock(stream_.mutex);
                stream_.started = true;
            }
            const std::string payload(size, 'p');
            bool trying = try_first;
            SendResult result = SendResult::Sent;
            std::uint64_t i = 0;
            for (; i < count; ++i) {
                const json part{{"seq", i}, {"payload", payload}};
                if (trying) {
                    result = r.try_more(part);
                    if (result == SendResult::WouldBlock) {
                        trying = false;
                        {
                            std::lock_guard lock(stream_.mutex);
                            stream_.saw_would_block = true;
                            stream_.buffered_at_would_block = r.buffered_bytes();
                            stream_.cv.notify_all();
                        }
                        result = r.more(part);  // now wait for the client to read
                    }
                } else {
                    result = r.more(part);
                }
                if (result != SendResult::Sent) break;
                std::lock_guard lock(stream_.mutex);
                stream_.sent = i + 1;
                stream_.max_buffered = std::max(stream_.max_buffered, r.buffered_bytes());
            }
            if (result == SendResult::Sent)
                result = r.reply(json{{"done", true}, {"count", count}});
            std::lock_guard lock(stream_.mutex);
            stream_.last = result;
            stream_.done = true;
            stream_.cv.notify_all();
        });
    });

    ASSERT_TRUE(server_->listen(path_).is_ok());
    server_->start();
    io_thread_ = std::thread([this] { io_.run(); });
}

}  // namespace wsindex::ipc::testing
