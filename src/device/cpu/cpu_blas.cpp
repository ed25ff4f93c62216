// CPU GEMM through OpenBLAS's CBLAS (row-major), the only file that includes <cblas.h>.
#include <algorithm>
#include <cstddef>

#include <cblas.h>

#include "src/device/cpu/cpu_kernels.hpp"

namespace strata::cpu {
namespace {

/// OpenBLAS packs the whole of a tall operand before multiplying: C = A W with A of m rows costs
/// a packed copy of A (measured with Debian's 0.3.21, 2 threads: RSS +200 MB for a 200000 x 256
/// A, 128 MiB buffers per thread). Row blocks of about this many floats bound that copy; the
/// time is the same (0.129 s whole, 0.130 s in 16384-row blocks, 200000 x 256 x 256).
constexpr std::size_t block_floats = std::size_t{4} << 20;  // 16 MiB

}  // namespace

void set_blas_threads(int threads) {
    if (openblas_get_num_threads() != threads) {
        openblas_set_num_threads(threads);
    }
}

void gemm(const float* a, index_t lda, bool trans_a, const float* b, index_t ldb, bool trans_b,
          float* c, index_t m, index_t n, index_t k, float alpha, float beta, int threads) {
    // c = alpha op(a) op(b) + beta c.   op(a): m x k, op(b): k x n, c: m x n (ldc = n).
    if (m == 0 || n == 0) {
        return;
    }
    if (k == 0) {  // an empty product: cblas would reject lda = 0
        const std::size_t size = static_cast<std::size_t>(m) * static_cast<std::size_t>(n);
        if (beta == 0.0f) {
            fill(c, size, 0.0f, threads);
        } else if (beta != 1.0f) {
            for (std::size_t i = 0; i < size; ++i) {
                c[i] *= beta;
            }
        }
        return;
    }
    set_blas_threads(threads);  // another backend may have changed the process-wide setting
    // Rows of c are rows of op(a) when a is not transposed: split them into blocks (each block
    // is an independent product, so the split is a function of the shape only).
    const index_t block = trans_a
                              ? m
                              : static_cast<index_t>(std::max<std::size_t>(
                                    256, block_floats / static_cast<std::size_t>(std::max(k, n))));
    for (index_t first = 0; first < m; first += block) {
        const index_t rows = std::min(block, m - first);
        cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                    trans_b ? CblasTrans : CblasNoTrans, rows, n, k, alpha,
                    a + static_cast<std::size_t>(first) * static_cast<std::size_t>(lda), lda, b,
                    ldb, beta, c + static_cast<std::size_t>(first) * static_cast<std::size_t>(n),
                    n);
    }
}

}  // namespace strata::cpu
