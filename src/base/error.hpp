// strata::Error, the one exception type, and the checking macros that capture file:line.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace strata {

/// The project's exception. what() is "message (at file:line)"; message() is the user part.
class Error : public std::runtime_error {
public:
    Error(std::string message, const char* file, int line);
    /// The same place as `origin` with another message (a front end adding to a library's).
    Error(std::string message, const Error& origin);
    const std::string& message() const noexcept { return message_; }
    const std::string& where() const noexcept { return where_; }

private:
    std::string message_;
    std::string where_;
};

/// A run option with a value that cannot work (training/run_config.hpp). message() reads
/// "<option> = <value>: <why>", naming the option as the run configuration spells it; option()
/// lets a front end add its own spelling once (the CLI: "(--ways)").
class OptionError : public Error {
public:
    OptionError(std::string option, std::string message, const char* file, int line);
    const std::string& option() const noexcept { return option_; }

private:
    std::string option_;
};

namespace detail {

template <class... Args>
std::string concat(Args&&... args) {
    std::ostringstream out;
    (out << ... << std::forward<Args>(args));
    return out.str();
}

[[noreturn]] void throw_error(std::string message, const char* file, int line);
[[noreturn]] void throw_option_error(std::string option, std::string message, const char* file,
                                     int line);

}  // namespace detail
}  // namespace strata

/// Precondition on arguments, files or shapes; always on. The message parts are streamed.
#define STRATA_CHECK(cond, ...)                                                            \
    do {                                                                                   \
        if (!(cond)) [[unlikely]] {                                                        \
            ::strata::detail::throw_error(::strata::detail::concat(__VA_ARGS__), __FILE__, \
                                          __LINE__);                                       \
        }                                                                                  \
    } while (false)

/// Throws strata::Error unconditionally.
#define STRATA_FAIL(...) \
    ::strata::detail::throw_error(::strata::detail::concat(__VA_ARGS__), __FILE__, __LINE__)

/// A run option's precondition: throws strata::OptionError "<option> = <value>: <why...>".
#define STRATA_CHECK_OPTION(cond, option, value, ...)                                      \
    do {                                                                                   \
        if (!(cond)) [[unlikely]] {                                                        \
            ::strata::detail::throw_option_error(                                          \
                option, ::strata::detail::concat(option, " = ", value, ": ", __VA_ARGS__), \
                __FILE__, __LINE__);                                                       \
        }                                                                                  \
    } while (false)

/// Internal invariant; compiled out in release builds.
#ifdef NDEBUG
#define STRATA_ASSERT(cond) \
    do {                    \
    } while (false)
#else
#define STRATA_ASSERT(cond) STRATA_CHECK(cond, "internal error: assertion failed: " #cond)
#endif
