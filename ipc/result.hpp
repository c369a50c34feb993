// Result<T>: a value or an ipc::Error — GCC 12 in C++20 has no std::expected.
#pragma once

#include <cassert>
#include <utility>
#include <variant>

#include "ipc/error.hpp"

namespace wsindex::ipc {

template <class T>
class Result {
  public:
    Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}      // NOLINT: implicit
    Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT: implicit

    [[nodiscard]] bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }

    // Preconditions: ok() for value(), !ok() for error().
    T& value() & {
        assert(ok());
        return std::get<0>(v_);
    }
    const T& value() const& {
        assert(ok());
        return std::get<0>(v_);
    }
    T&& value() && {
        assert(ok());
        return std::get<0>(std::move(v_));
    }
    Error& error() & {
        assert(!ok());
        return std::get<1>(v_);
    }
    const Error& error() const& {
        assert(!ok());
        return std::get<1>(v_);
    }

    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

  private:
    std::variant<T, Error> v_;
};

}  // namespace wsindex::ipc
