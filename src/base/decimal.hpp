// The shortest decimal of a float: the double that prints as few digits as possible and still
// converts back to the same float, for text outputs (JSON) that should show 0.01, not the
// float's exact binary value 0.009999999776482582.
#pragma once

#include <array>
#include <cstdio>
#include <cstdlib>

namespace strata {

/// The double nearest the shortest decimal (6 to 9 significant digits) that reads back as `value`.
[[nodiscard]] inline double shortest_decimal(float value) {
    std::array<char, 32> text{};
    for (int digits = 6; digits <= 9; ++digits) {
        std::snprintf(text.data(), text.size(), "%.*g", digits, static_cast<double>(value));
        if (static_cast<float>(std::strtod(text.data(), nullptr)) == value) {
            break;
        }
    }
    return std::strtod(text.data(), nullptr);
}

}  // namespace strata
