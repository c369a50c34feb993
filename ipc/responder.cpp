// Responder: a shared handle on a CallState; the last copy's destruction abandons the call.
#include "ipc/responder.hpp"

#include "ipc/call_state.hpp"

namespace wsindex::ipc {

// One Token per call, shared by every Responder copy; its destructor means "no one can
// reply any more".
struct Responder::Token {
    explicit Token(std::shared_ptr<detail::CallState> s) : state(std::move(s)) {}
    ~Token() { state->abandon(); }
    Token(const Token&) = delete;
    Token& operator=(const Token&) = delete;
    std::shared_ptr<detail::CallState> state;
};

Responder::Responder(std::shared_ptr<detail::CallState> state)
    : token_(std::make_shared<Token>(std::move(state))) {}

SendResult Responder::reply(const nlohmann::json& parameters) {
    if (!token_) return SendResult::Closed;
    return token_->state->push_reply(parameters, false, false);
}

SendResult Responder::more(const nlohmann::json& parameters) {
    if (!token_) return SendResult::Closed;
    return token_->state->push_reply(parameters, true, true);
}

SendResult Responder::try_more(const nlohmann::json& parameters) {
    if (!token_) return SendResult::Closed;
    return token_->state->push_reply(parameters, true, false);
}

SendResult Responder::reply_text(std::string_view parameters) {
    if (!token_) return SendResult::Closed;
    return token_->state->push_reply_text(parameters, false, false);
}

SendResult Responder::more_text(std::string_view parameters) {
    if (!token_) return SendResult::Closed;
    return token_->state->push_reply_text(parameters, true, true);
}

SendResult Responder::try_more_text(std::string_view parameters) {
    if (!token_) return SendResult::Closed;
    return token_->state->push_reply_text(parameters, true, false);
}

SendResult Responder::fail(const Error& error) {
    if (!token_) return SendResult::Closed;
    return token_->state->push_error(error);
}

bool Responder::is_open() const { return token_ && token_->state->is_open(); }

bool Responder::streaming() const { return token_ && token_->state->more(); }

std::size_t Responder::buffered_bytes() const {
    return token_ ? token_->state->buffered_bytes() : 0;
}

void Responder::on_close(std::function<void()> fn) {
    if (!token_) {
        fn();
        return;
    }
    token_->state->on_close(std::move(fn));
}

}  // namespace wsindex::ipc
