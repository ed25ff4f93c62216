// Error construction: keep the user message and the source location apart.
#include "src/base/error.hpp"

#include <cstring>

namespace strata {
namespace {

std::string short_path(const char* file) {
    // Report repository-relative paths: strip everything up to the last top-level folder.
    std::string path(file);
    for (const char* root :
         {"/src/", "/datasets/", "/partition/", "/layers/", "/training/", "/planner/", "/apps/",
          "/tests/", "/bench/", "/examples/", "/python/"}) {
        if (auto pos = path.rfind(root); pos != std::string::npos) {
            return path.substr(pos + 1);
        }
    }
    return path;
}

}  // namespace

Error::Error(std::string message, const char* file, int line)
    : std::runtime_error(message + " (at " + short_path(file) + ":" + std::to_string(line) + ")"),
      message_(std::move(message)),
      where_(short_path(file) + ":" + std::to_string(line)) {}

Error::Error(std::string message, const Error& origin)
    : std::runtime_error(message + " (at " + origin.where() + ")"),
      message_(std::move(message)),
      where_(origin.where()) {}

OptionError::OptionError(std::string option, std::string message, const char* file, int line)
    : Error(std::move(message), file, line), option_(std::move(option)) {}

namespace detail {

void throw_error(std::string message, const char* file, int line) {
    throw Error(std::move(message), file, line);
}

void throw_option_error(std::string option, std::string message, const char* file, int line) {
    throw OptionError(std::move(option), std::move(message), file, line);
}

}  // namespace detail
}  // namespace strata
