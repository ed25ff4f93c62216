// CPU GEMM through OpenBLAS's CBLAS (row-major), the only file that includes <cblas.h>.
#include <cstddef>

#include <cblas.h>

#include "src/device/cpu/cpu_kernels.hpp"

namespace strata::cpu {

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
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, n);
}

}  // namespace strata::cpu
