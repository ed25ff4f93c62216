// Argument checks shared by every Backend implementation (shapes, aliasing), so each backend
// reports a bad call with the same message.
#pragma once

#include <cstddef>

#include "src/base/error.hpp"
#include "src/base/types.hpp"

namespace strata {

/// Whether the ranges [a, a + a_size) and [b, b + b_size) of floats share an element.
inline bool overlaps(const float* a, std::size_t a_size, const float* b, std::size_t b_size) {
    return a_size > 0 && b_size > 0 && a < b + b_size && b < a + a_size;
}

/// Throws "<op>: <name_a> is r x c but <name_b> is r' x c'" unless the shapes agree.
inline void check_same_shape(const char* op, const char* name_a, index_t rows_a, index_t cols_a,
                             const char* name_b, index_t rows_b, index_t cols_b) {
    STRATA_CHECK(rows_a == rows_b && cols_a == cols_b, op, ": ", name_a, " is ", rows_a, " x ",
                 cols_a, " but ", name_b, " is ", rows_b, " x ", cols_b);
}

}  // namespace strata
