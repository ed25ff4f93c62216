// y = A[first : first + count] x + beta y, a row range of a CSR matrix, without cuSPARSE: one
// thread per output element (grid-stride).   row_ptr: A's row pointers (absolute offsets into
// col_idx / values), x: ? x f, y: count x f. Row r of y is row first + r of A:
//   y[r, j] = Σ_{k = row_ptr[first + r]}^{row_ptr[first + r + 1] - 1} values[k] · x[col_idx[k], j]
//             (+ beta y[r, j] first, unless beta == 0: then y is never read).
// Terms are added in entry order as on the CPU (src/device/cpu/cpu_spmm.cpp). Neighbouring
// threads take neighbouring columns of one row: x reads are coalesced, col_idx / values are
// broadcast. Only chunked execution uses row ranges; the full matrix goes through cuSPARSE.
// Also the compressed-row scatter (Backend::spmm_scatter_add): A: m x n CSR, out_rows: m ids,
//   y[out_rows[r], j] += Σ_{k = row_ptr[r]}^{row_ptr[r + 1] - 1} values[k] · x[col_idx[k], j]
// added in entry order onto y's value, as the CPU's spmm_csr with y_rows.
#include "src/device/cuda/cuda_kernels.hpp"
#include "src/device/cuda/cuda_launch.cuh"

namespace strata::cuda::kernels {
namespace {

__global__ void spmm_csr_rows_kernel(global_ptr<const std::int32_t> __restrict__ row_ptr,
                                     global_ptr<const std::int32_t> __restrict__ col_idx,
                                     global_ptr<const float> __restrict__ values,
                                     std::int32_t first, std::int64_t n, std::int32_t f,
                                     global_ptr<const float> __restrict__ x,
                                     global_ptr<float> __restrict__ y, float beta) {
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

__global__ void spmm_csr_scatter_add_kernel(global_ptr<const std::int32_t> __restrict__ row_ptr,
                                            global_ptr<const std::int32_t> __restrict__ col_idx,
                                            global_ptr<const float> __restrict__ values,
                                            global_ptr<const std::int32_t> __restrict__ out_rows,
                                            std::int64_t n, std::int32_t f,
                                            global_ptr<const float> __restrict__ x,
                                            global_ptr<float> __restrict__ y) {
    for (std::int64_t e = thread_index(); e < n; e += grid_stride()) {
        const std::int64_t r = e / f;
        const std::int64_t j = e - r * f;
        const std::int64_t at = static_cast<std::int64_t>(out_rows[r]) * f + j;
        float acc = y[at];
        for (std::int32_t k = row_ptr[r]; k < row_ptr[r + 1]; ++k) {
            acc += values[k] * x[static_cast<std::int64_t>(col_idx[k]) * f + j];
        }
        y[at] = acc;
    }
}

}  // namespace

cudaError_t spmm_csr_scatter_add(const std::int32_t* row_ptr, const std::int32_t* col_idx,
                                 const float* values, const std::int32_t* out_rows,
                                 std::int32_t rows, const float* x, std::int32_t f, float* y,
                                 cudaStream_t stream) {
    const auto n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(f);
    if (n == 0) {
        return cudaSuccess;
    }
    STRATA_LAUNCH(spmm_csr_scatter_add_kernel, grid_blocks(n), block_threads, stream, row_ptr,
                  col_idx, values, out_rows, static_cast<std::int64_t>(n), f, x, y);
    return cudaGetLastError();
}

cudaError_t spmm_csr_rows(const std::int32_t* row_ptr, const std::int32_t* col_idx,
                          const float* values, std::int32_t first, std::int32_t count,
                          const float* x, std::int32_t f, float* y, float beta,
                          cudaStream_t stream) {
    const auto n = static_cast<std::size_t>(count) * static_cast<std::size_t>(f);
    if (n == 0) {
        return cudaSuccess;
    }
    STRATA_LAUNCH(spmm_csr_rows_kernel, grid_blocks(n), block_threads, stream, row_ptr, col_idx,
                  values, first, static_cast<std::int64_t>(n), f, x, y, beta);
    return cudaGetLastError();
}

}  // namespace strata::cuda::kernels
