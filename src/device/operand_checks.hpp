// The argument checks of the Backend operations (shapes, sizes, aliasing, rates): check_name for
// each operation of backend_operations.hpp, with the operation's own parameters, called by its
// entry point (backend.cpp) before any backend runs it, so every backend rejects a bad call with
// the same one-line message. Definitions in operand_checks.cpp. Values in backend memory (row
// ids, labels) are not read here: each backend checks them where it reads them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "src/base/types.hpp"
#include "src/device/backend.hpp"
#include "src/tensor/matrix_view.hpp"

namespace strata {

/// Whether the ranges [a, a + a_size) and [b, b + b_size) of floats share an element.
inline bool overlaps(const float* a, std::size_t a_size, const float* b, std::size_t b_size) {
    return a_size > 0 && b_size > 0 && a < b + b_size && b < a + a_size;
}

/// Throws "<op>: <name_a> is r x c but <name_b> is r' x c'" unless the shapes agree.
void check_same_shape(const char* op, const char* name_a, index_t rows_a, index_t cols_a,
                      const char* name_b, index_t rows_b, index_t cols_b);

// One check per operation: check_spmm(a, rows, x, y, beta), check_gemm(a, ta, b, tb, c, alpha,
// beta), ... (throw strata::Error naming the operation, the operand and the sizes).
#define STRATA_BACKEND_OPERATION(result, name, parameters, arguments) void check_##name parameters;
#include "src/device/backend_operations.hpp"
#undef STRATA_BACKEND_OPERATION

/// The sizes of c = op(a) op(b) (m x k times k x n), for gemm's implementations (checked by
/// check_gemm before they run).
struct GemmShape {
    index_t m = 0;
    index_t n = 0;
    index_t k = 0;
    bool trans_a = false;
    bool trans_b = false;
};
[[nodiscard]] GemmShape gemm_shape(ConstMatrixView a, Transpose ta, ConstMatrixView b,
                                   Transpose tb);

}  // namespace strata
