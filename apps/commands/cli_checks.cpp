#include "apps/commands/cli_checks.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>
#include <sstream>
#include <string>

namespace strata::app {
namespace {

/// The whole of `text` as a finite number, else nothing.
std::optional<double> number(const std::string& text) {
    if (text.empty()) {
        return std::nullopt;
    }
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v)) {
        return std::nullopt;
    }
    return v;
}

std::string shortest(double v) {
    std::ostringstream out;
    out << v;
    return out.str();
}

}  // namespace

CLI::Validator numeric(std::function<bool(double)> ok, const std::string& wanted,
                       const std::string& description) {
    return CLI::Validator(
        [ok = std::move(ok), wanted](std::string& text) -> std::string {
            const std::optional<double> v = number(text);
            if (!v) {
                return "'" + text + "' is not a number";
            }
            return ok(*v) ? std::string() : "must be " + wanted + ", got " + text;
        },
        description);
}

CLI::Validator a_number() {
    return numeric([](double) { return true; }, "a number", "NUMBER");
}

CLI::Validator positive() {
    return numeric([](double v) { return v > 0; }, "a positive number", "POSITIVE");
}

CLI::Validator non_negative() {
    return numeric([](double v) { return v >= 0; }, "at least 0", "NONNEGATIVE");
}

CLI::Validator in_range(double lo, double hi) {
    const std::string range = "[" + shortest(lo) + ", " + shortest(hi) + "]";
    return numeric([lo, hi](double v) { return v >= lo && v <= hi; }, "in " + range, range);
}

}  // namespace strata::app
