// Checks of numeric flags whose refusal says what was wanted and what was given, in one line:
// "--epochs: must be a positive number, got 0", "--epochs: 'ten' is not a number" (CLI11's
// own PositiveNumber/Range print "Value 0 not in range 0.000000 to 1.797693e+308").
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

namespace strata::app {

/// A finite number for which `ok` holds, else "must be <wanted>, got <text>"; `description` is
/// what --help shows for the value ("POSITIVE", "[0, 1)").
[[nodiscard]] CLI::Validator numeric(std::function<bool(double)> ok, const std::string& wanted,
                                     const std::string& description);

/// A finite number (the range is the library's to check: run options name it themselves).
[[nodiscard]] CLI::Validator a_number();
/// A finite number > 0.
[[nodiscard]] CLI::Validator positive();
/// A finite number >= 0.
[[nodiscard]] CLI::Validator non_negative();
/// A finite number in [lo, hi].
[[nodiscard]] CLI::Validator in_range(double lo, double hi);

}  // namespace strata::app
