// Connection admission with real connections from several uids (ipc/admission.cpp): a full
// server closes the longest-idle connection of the biggest holder for a caller who holds fewer,
// never a connection with a call running, and keeps reserved slots for privileged callers.
//
// The uids are real: the test thread switches its own effective uid (the raw setresuid system
// call changes only the calling thread, unlike glibc's wrapper) around connect(), and the
// kernel records that uid for SO_PEERCRED. Needs root.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <memory>
#include <vector>

#include "tests/ipc/support/server_fixture.hpp"
#include "tests/support/prerequisite.hpp"

namespace wsindex::ipc::testing {
namespace {

using nlohmann::json;

// Unlikely to exist on the machine; nothing is created under them.
constexpr uid_t kAnn = 61001;
constexpr uid_t kBob = 61002;
constexpr uid_t kCid = 61003;
constexpr uid_t kDee = 61004;

class Admission : public ServerFixture {
  protected:
    void SetUp() override {
        if (::geteuid() != 0) WSINDEX_SKIP_OR_FAIL_IN_CI() << "needs root to connect as other uids";
        ServerFixture::SetUp();
    }

    void start_with(ServerOptions options) {
        start(std::move(options));
        // Reachable by every uid.
        ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
        ASSERT_EQ(::chmod(path_.c_str(), 0666), 0);
    }

    // A connection whose SO_PEERCRED says `uid`. The server decides on it asynchronously:
    // admitted() or busy() wait for that decision.
    std::unique_ptr<RawConnection> connect_as(uid_t uid) {
        EXPECT_EQ(::syscall(SYS_setresuid, -1, uid, -1), 0);
        auto conn = std::make_unique<RawConnection>(path_);
        EXPECT_EQ(::syscall(SYS_setresuid, -1, 0, -1), 0);
        EXPECT_TRUE(conn->ok());
        return conn;
    }

    // True if `conn` is admitted and answers a ping; false if it got Busy and was closed.
    static bool admitted(RawConnection& conn) {
        if (!conn.send(std::string(R"({"method":"test.Ping"})") + '\0')) return false;
        const auto reply = conn.read_frame();
        if (!reply) return false;
        auto parsed = parse_reply(*reply);
        return parsed.ok();
    }
    static bool busy(RawConnection& conn) {
        const auto reply = conn.read_frame();
        if (!reply) return false;
        auto parsed = parse_reply(*reply);
        return !parsed.ok() && parsed.error().kind == ErrorKind::Busy && conn.wait_closed();
    }
    // Connects as `uid` and checks the connection works: registered, and idle since its ping
    // was answered (so the order of hold_as calls is the order of their idle times).
    std::unique_ptr<RawConnection> hold_as(uid_t uid) {
        auto conn = connect_as(uid);
        EXPECT_TRUE(admitted(*conn)) << "uid " << uid;
        return conn;
    }

    static ServerOptions no_reserve() {
        ServerOptions o;
        o.max_connections = 6;
        o.max_connections_per_uid = 3;
        o.reserved_connections = 0;
        o.privileged = [](const PeerCredentials&) { return false; };
        return o;
    }
};

TEST_F(Admission, FullServerClosesTheLongestIdleConnectionOfTheBiggestHolder) {
    start_with(no_reserve());
    std::vector<std::unique_ptr<RawConnection>> ann, bob;
    for (int i = 0; i < 3; ++i) ann.push_back(hold_as(kAnn));
    for (int i = 0; i < 3; ++i) bob.push_back(hold_as(kBob));
    ASSERT_EQ(server_->connection_count(), 6u);

    // Cid holds none: ann's first connection (idle the longest of the biggest holders) goes.
    auto cid1 = connect_as(kCid);
    EXPECT_TRUE(admitted(*cid1));
    EXPECT_TRUE(ann[0]->wait_closed());
    for (std::size_t i = 1; i < 3; ++i) EXPECT_TRUE(admitted(*ann[i])) << "ann " << i;
    for (std::size_t i = 0; i < 3; ++i) EXPECT_TRUE(admitted(*bob[i])) << "bob " << i;
    EXPECT_EQ(server_->connection_count(), 6u);

    // Cid holds 1: bob (3) is now the biggest holder, and his longest-idle one is bob[0]
    // (every other connection answered a ping after it).
    auto cid2 = connect_as(kCid);
    EXPECT_TRUE(admitted(*cid2));
    EXPECT_TRUE(bob[0]->wait_closed());

    // Everyone holds 2: nobody holds more than cid would after a third, so cid gets Busy and
    // nobody is closed.
    auto cid3 = connect_as(kCid);
    EXPECT_TRUE(busy(*cid3));
    for (std::size_t i = 1; i < 3; ++i) {
        EXPECT_TRUE(admitted(*ann[i]));
        EXPECT_TRUE(admitted(*bob[i]));
    }
    EXPECT_TRUE(admitted(*cid1));
    EXPECT_TRUE(admitted(*cid2));
}

TEST_F(Admission, ConnectionsWithACallRunningAreNeverClosed) {
    ServerOptions o = no_reserve();
    o.max_connections = 2;
    o.max_connections_per_uid = 2;
    start_with(o);
    auto a1 = hold_as(kAnn);
    auto a2 = hold_as(kAnn);
    // Both of ann's connections wait for an answer.
    for (auto* c : {a1.get(), a2.get()})
        ASSERT_TRUE(c->send(std::string(R"({"method":"test.Hold"})") + '\0'));
    ASSERT_TRUE(wait_for(held_.mutex, held_.cv, [&] { return held_.responders.size() == 2; }));

    auto bob1 = connect_as(kBob);
    EXPECT_TRUE(busy(*bob1));

    // One call ends: that connection is idle again and may be closed for bob.
    {
        std::lock_guard lock(held_.mutex);
        held_.responders[0].reply(json{{"released", true}});
    }
    // Whichever connection got its answer is the idle one.
    pollfd fds[2] = {{a1->fd(), POLLIN, 0}, {a2->fd(), POLLIN, 0}};
    ASSERT_EQ(::poll(fds, 2, 10000), 1);
    RawConnection& idle = (fds[0].revents & POLLIN) != 0 ? *a1 : *a2;
    RawConnection& still_held = (fds[0].revents & POLLIN) != 0 ? *a2 : *a1;
    ASSERT_TRUE(idle.read_frame());  // the answer to Hold

    auto bob2 = connect_as(kBob);
    EXPECT_TRUE(admitted(*bob2));
    EXPECT_TRUE(idle.wait_closed());
    // The running call was not touched: its answer still arrives.
    {
        std::lock_guard lock(held_.mutex);
        EXPECT_EQ(held_.closed_callbacks, 0);
        held_.responders[1].reply(json{{"released", true}});
    }
    const auto answer = still_held.read_frame();
    ASSERT_TRUE(answer);
    EXPECT_TRUE(parse_reply(*answer).ok());
}

// The starvation case at a small scale: every uid holds an equal share and together they fill
// the shared slots, so closing anyone's connection for anyone else would not be fair; only
// the reserved slots let root in.
TEST_F(Admission, ReservedSlotsLetRootInWhenEqualSharesFillTheRest) {
    ServerOptions o;
    o.max_connections = 6;
    o.max_connections_per_uid = 2;
    o.reserved_connections = 2;
    o.privileged = [](const PeerCredentials& peer) { return peer.uid == 0; };
    start_with(o);
    std::vector<std::unique_ptr<RawConnection>> held;
    for (uid_t uid : {kAnn, kBob, kCid, kDee}) held.push_back(hold_as(uid));
    ASSERT_EQ(server_->connection_count(), 4u);  // the shared slots are taken

    // Nobody holds more than a newcomer would: Busy, and nobody is closed.
    auto fifth = connect_as(kDee + 1);
    EXPECT_TRUE(busy(*fifth));

    // Root is privileged: both reserved slots, nobody closed.
    auto root1 = connect_as(0);
    EXPECT_TRUE(admitted(*root1));
    auto root2 = connect_as(0);
    EXPECT_TRUE(admitted(*root2));
    EXPECT_EQ(server_->connection_count(), 6u);
    for (auto& c : held) EXPECT_TRUE(admitted(*c));
}

}  // namespace
}  // namespace wsindex::ipc::testing
