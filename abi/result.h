// Result<T>: errors as values on the syscall path.
//
// Every fallible step of the command pipeline (decode, policy, translate, forward) returns a
// Result carrying either a value or an Error: the errno the proxy hands back to the app and a
// one-line reason for the log. Exceptions never cross the syscall path; only the CLI edge
// turns an Error into an exception or an exit status.
#pragma once

#include <fmt/format.h>

#include <cerrno>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace rxp {

// A failed step: `errnum` is a positive errno value (EINVAL, EOPNOTSUPP, ...), `reason` a
// single line a person can act on. The function that decides an error writes the reason.
struct Error {
  int errnum = EINVAL;
  std::string reason;

  // "EINVAL: <reason>", the form used in logs and CLI messages.
  std::string ToString() const;
};

// Builds an Error with a fmt-formatted reason: Fail(EINVAL, "in_words {} != {}", a, b).
template <typename... Args>
Error Fail(int errnum, fmt::format_string<Args...> format, Args&&... args) {
  return Error{errnum, fmt::format(format, std::forward<Args>(args)...)};
}

// Either a T or an Error. Cheap to move; no heap use beyond the reason string.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT(implicit)
  Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT(implicit)

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const& { return std::get<1>(state_); }
  Error&& error() && { return std::get<1>(std::move(state_)); }

 private:
  std::variant<T, Error> state_;
};

// Result<void>: success carries nothing. The Error exists only on failure: a command makes
// dozens of these on its success path, which then build and destroy no string.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)) {}  // NOLINT(implicit)

  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const& { return *error_; }
  Error&& error() && { return std::move(*error_); }

 private:
  std::optional<Error> error_;
};

inline Result<void> Ok() { return {}; }

}  // namespace rxp

// Propagates an error from an expression returning Result<...>:
//   RXP_TRY(ValidateHeader(h));
#define RXP_TRY(expr)                                          \
  do {                                                         \
    if (auto rxp_try_result_ = (expr); !rxp_try_result_.ok()) \
      return std::move(rxp_try_result_).error();               \
  } while (0)
