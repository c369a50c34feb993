// Binding and connecting: stale sockets, live ones, non-sockets, modes, inherited fds, and the
// client's messages when the daemon is not there or not ours to talk to.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "ipc/client.hpp"
#include "ipc/server.hpp"
#include "ipc/unix_socket.hpp"
#include "tests/ipc/support/server_fixture.hpp"

namespace wsindex::ipc::testing {
namespace {

using nlohmann::json;

// A socket file that nothing listens on, as a crashed daemon leaves behind.
void make_stale_socket(const std::string& path) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.data(), path.size());
    ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
    ::close(fd);
}

class Socket : public ServerFixture {};

TEST_F(Socket, StaleSocketIsReplaced) {
    make_stale_socket(path_);
    start();
    EXPECT_TRUE(connect().call("test.Ping", json::object()).ok());
}

TEST_F(Socket, LiveSocketIsRefused) {
    start();
    boost::asio::io_context other_io;
    ipc::Server second(other_io);
    const core::Status status = second.listen(path_);
    ASSERT_FALSE(status.is_ok());
    EXPECT_NE(status.message().find("already listening"), std::string::npos) << status.to_string();
    EXPECT_TRUE(connect().call("test.Ping", json::object()).ok())
        << "the first server is untouched";
}

TEST_F(Socket, NonSocketIsNeverRemoved) {
    { std::ofstream(path_) << "precious"; }
    boost::asio::io_context io;
    ipc::Server server(io);
    const core::Status status = server.listen(path_);
    ASSERT_FALSE(status.is_ok());
    EXPECT_NE(status.message().find("not a socket"), std::string::npos) << status.to_string();
    std::ifstream in(path_);
    std::string content;
    in >> content;
    EXPECT_EQ(content, "precious");
}

TEST_F(Socket, ModeAndCleanup) {
    boost::asio::io_context io;
    {
        ipc::Server server(io);
        BindOptions options;
        options.mode = 0660;
        ASSERT_TRUE(server.listen(path_, options).is_ok());
        struct stat st {};
        ASSERT_EQ(::lstat(path_.c_str(), &st), 0);
        EXPECT_TRUE(S_ISSOCK(st.st_mode));
        EXPECT_EQ(st.st_mode & 07777, 0660u);
        server.stop();
        io.run();
    }
    struct stat st {};
    EXPECT_NE(::lstat(path_.c_str(), &st), 0);
}

TEST_F(Socket, TooLongPathIsAClearError) {
    boost::asio::io_context io;
    ipc::Server server(io);
    const core::Status status = server.listen(dir_ + "/" + std::string(200, 's'));
    ASSERT_FALSE(status.is_ok());
    EXPECT_NE(status.message().find("bytes"), std::string::npos);
}

TEST_F(Socket, AdoptsAListeningFd) {
    BoundSocket bound;
    ASSERT_TRUE(bind_unix_socket(path_, {}, bound).is_ok());
    server_ = std::make_unique<ipc::Server>(io_);
    server_->add_method("test.Ping", [](Call, Responder r) { r.reply(json{{"pong", true}}); });
    ASSERT_TRUE(server_->from_fd(bound.fd).is_ok());
    server_->start();
    io_thread_ = std::thread([this] { io_.run(); });
    EXPECT_TRUE(connect().call("test.Ping", json::object()).ok());
}

TEST_F(Socket, RefusesAnFdThatIsNotListening) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    boost::asio::io_context io;
    ipc::Server server(io);
    EXPECT_FALSE(server.from_fd(fd).is_ok());
    ::close(fd);
    const int file = ::open("/dev/null", O_RDONLY);
    EXPECT_FALSE(server.from_fd(file).is_ok());
    ::close(file);
}

TEST_F(Socket, ClientSaysNotRunningWhenThereIsNoSocket) {
    auto client = Client::connect(path_);
    ASSERT_FALSE(client.ok());
    EXPECT_EQ(client.error().kind, ErrorKind::NotRunning);
    EXPECT_EQ(client.error().message, "wsindexd is not running (no socket at " + path_ + ")");
}

TEST_F(Socket, ClientSaysNotRunningForAStaleSocket) {
    make_stale_socket(path_);
    auto client = Client::connect(path_);
    ASSERT_FALSE(client.ok());
    EXPECT_EQ(client.error().kind, ErrorKind::NotRunning);
    EXPECT_NE(client.error().message.find("nothing listens"), std::string::npos)
        << client.error().message;
}

TEST_F(Socket, ClientSaysPermissionDenied) {
    ServerOptions options;
    start(options);
    ASSERT_EQ(::chmod(path_.c_str(), 0600), 0);
    ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
    // Root ignores permission bits: drop privileges for real, in a child process.
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(3);
        auto client = Client::connect(path_);
        if (client.ok()) ::_exit(1);
        const bool clear = client.error().kind == ErrorKind::PermissionDenied &&
                           client.error().message.find("permission denied") != std::string::npos;
        ::_exit(clear ? 0 : 2);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "1: connected anyway, 2: unclear error, 3: setuid failed";
}

}  // namespace
}  // namespace wsindex::ipc::testing
