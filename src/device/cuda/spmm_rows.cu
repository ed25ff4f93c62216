// y = A[first : first + count] x + beta y, a row range of a CSR matrix, without cuSPARSE: one
// thread per output element (grid-stride).   row_ptr: A's row pointers (absolute offsets into
// col_idx / values), x: ? x f, y: count x f. Row r of y is row first + r of A:
//   y[r, j] = Σ_{k = row_ptr[first + r]}^{row_ptr[first + r + 1] - 1} values[k] · x[col_idx[k], j]
//             (+ beta y[r, j] first, unless beta == 0: then y is never read).
// Terms are added in entry order as on the CPU (src/device/cpu/cpu_spmm.cpp). Neighbouring
// threads take neighbouring columns of one row: x reads are coalesced, col_idx / values are
// broadcast. Only chunked execution uses row ranges; the full matrix goes through cuSPARSE.
#include "src/device/cuda/cuda_kernels.hpp"
#include "src/device/cuda/cuda_launch.cuh"

namespace strata::cuda::kernels {
namespace {

__global__ void spmm_csr_rows_kernel(const std::int32_t* __restrict__ row_ptr,
                                     const std::int32_t* __restrict__ col_idx,
                                     const float* __restrict__ values, std::int32_t first,
                                     std::int64_t n, std::int32_t f, const float* __restrict__ x,
                                     float* __restrict__ y, float beta) {
    for (std::int64_t e = thread_index(); e < n; e += grid_stride()) {
        const std::int64_t r = e / f;
        const std::int64_t j = e - r * f;
        std::int32_t k = row_ptr[first + r];
        const std::int32_t end = row_ptr[first + r + 1];
        float acc = 0.0f;
        if (beta == 0.0f) {  // never read y: it may hold NaN
            if (k < end) {
                acc = values[k] * x[static_cast<std::int64_t>(col_idx[k]) * f + j];
                ++k;
            }
        } else {
            acc = beta == 1.0f ? y[e] : y[e] * beta;
        }
        for (; k < end; ++k) {
            acc += values[k] * x[static_cast<std::int64_t>(col_idx[k]) * f + j];
        }
        y[e] = acc;
    }
}

}  // namespace

cudaError_t spmm_csr_rows(const std::int32_t* row_ptr, const std::int32_t* col_idx,
                          const float* values, std::int32_t first, std::int32_t count,
                          const float* x, std::int32_t f, float* y, float beta,
                          cudaStream_t stream) {
    const auto n = static_cast<std::size_t>(count) * static_cast<std::size_t>(f);
    if (n == 0) {
        return cudaSuccess;
    }
    spmm_csr_rows_kernel<<<grid_blocks(n), block_threads, 0, stream>>>(
        row_ptr, col_idx, values, first, static_cast<std::int64_t>(n), f, x, y, beta);
    return cudaGetLastError();
}

}  // namespace strata::cuda::kernels
