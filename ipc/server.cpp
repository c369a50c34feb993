// Server and ServerCore: listening, accepting with connection caps, stopping.
#include "ipc/server.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

#include "ipc/server_core.hpp"

namespace wsindex::ipc {

namespace detail {

ServerCore::ServerCore(asio::io_context& io, ServerOptions options)
    : io_(io), options_(std::move(options)), acceptor_(io), accept_pause_(io) {}

ServerCore::~ServerCore() {
    if (!socket_path_.empty()) remove_socket_file(socket_path_, socket_dev_, socket_ino_);
}

void ServerCore::log(LogLevel level, std::string_view text) const {
    if (options_.log) options_.log(level, text);
}

const Handler* ServerCore::find_handler(std::string_view method) const {
    const auto it = handlers_.find(method);
    return it == handlers_.end() ? nullptr : &it->second;
}

void ServerCore::start_accepting() {
    if (stopped_ || !acceptor_.is_open()) return;
    do_accept();
}

void ServerCore::do_accept() {
    acceptor_.async_accept([self = shared_from_this()](const boost::system::error_code& ec,
                                                       stream_protocol::socket socket) {
        self->on_accept(ec, std::move(socket));
    });
}

void ServerCore::on_accept(const boost::system::error_code& ec, stream_protocol::socket socket) {
    if (stopped_ || ec == asio::error::operation_aborted) return;
    if (ec) {
        // Out of descriptors or memory: the listener stays readable, so pause instead of
        // spinning; other errors (the peer left before accept) are per connection.
        const int value = ec.value();
        if (value == EMFILE || value == ENFILE || value == ENOBUFS || value == ENOMEM) {
            log(LogLevel::Warning, "accept: " + ec.message() + "; pausing accepts for 100 ms");
            accept_pause_.expires_after(std::chrono::milliseconds(100));
            accept_pause_.async_wait(
                [self = shared_from_this()](const boost::system::error_code& wait_ec) {
                    if (!wait_ec) self->start_accepting();
                });
            return;
        }
        log(LogLevel::Debug, "accept: " + ec.message());
        do_accept();
        return;
    }

    const PeerCredentials peer = peer_credentials(socket.native_handle());
    if (const std::string refusal = admit(peer); !refusal.empty()) {
        // Best effort, never blocking: a fresh socket's send buffer is empty.
        const std::string frame = encode_error(make_error(ErrorKind::Busy, refusal));
        [[maybe_unused]] const auto sent =
            ::send(socket.native_handle(), frame.data(), frame.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
        boost::system::error_code ignored;
        socket.close(ignored);
        // A flood of connections must not become a flood of log lines: one per 10 s.
        ++refused_since_log_;
        const auto now = std::chrono::steady_clock::now();
        if (now - last_refusal_log_ >= std::chrono::seconds(10)) {
            log(LogLevel::Warning, "refused " + std::to_string(refused_since_log_) +
                                       " connection(s) at the connection limit (last from uid " +
                                       std::to_string(peer.uid) + ")");
            refused_since_log_ = 0;
            last_refusal_log_ = now;
        }
        do_accept();
        return;
    }

    const std::uint64_t id = next_id_++;
    auto session = std::make_shared<Session>(shared_from_this(), std::move(socket), peer, id);
    sessions_.emplace(id, session);
    ++per_uid_[peer.uid];
    connection_count_.fetch_add(1, std::memory_order_relaxed);  // a statistic; no ordering
    session->start();
    do_accept();
}

void ServerCore::unregister(std::uint64_t id, uid_t uid) {
    if (sessions_.erase(id) == 0) return;
    connection_count_.fetch_sub(1, std::memory_order_relaxed);
    const auto it = per_uid_.find(uid);
    if (it != per_uid_.end() && --it->second == 0) per_uid_.erase(it);
}

void ServerCore::shutdown() {
    if (stopped_) return;
    stopped_ = true;
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    accept_pause_.cancel();
    // Session::close unregisters, which edits sessions_: close from a copy.
    std::vector<std::shared_ptr<Session>> open;
    for (auto& [id, weak] : sessions_) {
        if (auto session = weak.lock()) open.push_back(std::move(session));
    }
    for (auto& session : open) session->close("server stopping");
    if (!socket_path_.empty()) {
        remove_socket_file(socket_path_, socket_dev_, socket_ino_);
        socket_path_.clear();
    }
    log(LogLevel::Info, "ipc server stopped");
}

}  // namespace detail

Server::Server(boost::asio::io_context& io, ServerOptions options)
    : core_(std::make_shared<detail::ServerCore>(io, std::move(options))) {}

Server::~Server() { stop(); }

void Server::add_method(std::string name, Handler handler) {
    core_->handlers_.insert_or_assign(std::move(name), std::move(handler));
}

core::Status Server::listen(const std::string& path, const BindOptions& options) {
    BoundSocket bound;
    core::Status status = bind_unix_socket(path, options, bound);
    if (!status) return status;
    boost::system::error_code ec;
    core_->acceptor_.assign(detail::stream_protocol(), bound.fd, ec);
    if (ec) {
        ::close(bound.fd);
        remove_socket_file(path, bound.dev, bound.ino);
        return {ec, "cannot adopt the listening socket"};
    }
    core_->socket_path_ = path;
    socket_path_ = path;
    core_->socket_dev_ = bound.dev;
    core_->socket_ino_ = bound.ino;
    core_->log(LogLevel::Info, "listening on " + path);
    return {};
}

core::Status Server::from_fd(int fd) {
    core::Status status = check_listening_socket(fd);
    if (!status) return status;
    boost::system::error_code ec;
    core_->acceptor_.assign(detail::stream_protocol(), fd, ec);
    if (ec) return {ec, "cannot adopt fd " + std::to_string(fd)};
    core_->log(LogLevel::Info, "listening on inherited fd " + std::to_string(fd));
    return {};
}

void Server::start() {
    boost::asio::dispatch(core_->io_, [core = core_] { core->start_accepting(); });
}

void Server::stop() {
    boost::asio::dispatch(core_->io_, [core = core_] { core->shutdown(); });
}

std::size_t Server::connection_count() const {
    return core_->connection_count_.load(std::memory_order_relaxed);
}

const std::string& Server::socket_path() const { return socket_path_; }

}  // namespace wsindex::ipc
