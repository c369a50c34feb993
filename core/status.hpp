// Status: the outcome of a task or a consumer — ok, or an error code with a human message.
//
// GCC 12 in C++20 has no std::expected; failures that are expected (a fatal I/O error in a walk, a
// database that is full) travel as values. Nothing in core/ throws across a worker thread.
#pragma once

#include <string>
#include <system_error>
#include <utility>

namespace wsindex::core {

class Status {
  public:
    Status() = default;  // ok
    Status(std::error_code code, std::string message) : code_(code), message_(std::move(message)) {}

    static Status ok() { return {}; }
    static Status from_errno(int err, std::string context) {
        return {std::error_code(err, std::generic_category()), std::move(context)};
    }

    [[nodiscard]] bool is_ok() const { return !code_; }
    explicit operator bool() const { return is_ok(); }
    [[nodiscard]] const std::error_code& code() const { return code_; }
    [[nodiscard]] const std::string& message() const { return message_; }

    // "context: strerror" — or just the message when there is no code.
    [[nodiscard]] std::string to_string() const {
        if (is_ok()) return "ok";
        if (message_.empty()) return code_.message();
        return message_ + ": " + code_.message();
    }

  private:
    std::error_code code_;
    std::string message_;
};

}  // namespace wsindex::core
