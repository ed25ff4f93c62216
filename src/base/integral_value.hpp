// Reading integers stored as doubles (checkpoint figures): a value out of an integer type's
// range makes static_cast undefined, so a file's value is checked before it is converted.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>

namespace strata {

/// `v` as an integer when it is a whole number in [lo, hi], else nothing. lo and hi must lie
/// within ±2^53 (where every integer is a double).
[[nodiscard]] inline std::optional<std::int64_t> integral_value(double v, std::int64_t lo,
                                                                std::int64_t hi) {
    if (!(v >= static_cast<double>(lo) && v <= static_cast<double>(hi)) || v != std::floor(v)) {
        return std::nullopt;  // also NaN
    }
    return static_cast<std::int64_t>(v);
}

}  // namespace strata
