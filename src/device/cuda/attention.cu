// Graph-attention edge kernels (Backend::edge_*): one thread per CSR row (scores, softmax and
// its backward, dropout, dots) or per output element (edge SpMM), grid-stride, each computing
// the shared per-row formulas of src/device/edge_rows.hpp exactly as the CPU does.
//   A: rows x ? CSR structure (row_ptr, col_idx); edge values nnz x H; node matrices row-major.
#include "src/device/cuda/cuda_kernels.hpp"
#include "src/device/cuda/cuda_launch.cuh"
#include "src/device/edge_rows.hpp"

namespace strata::cuda::kernels {
namespace {

__global__ void edge_scores_kernel(EdgeCsr a, global_ptr<const float> __restrict__ s_dst,
                                   global_ptr<const float> __restrict__ s_src, float slope,
                                   global_ptr<float> e) {
    for (std::int64_t i = thread_index(); i < a.rows; i += grid_stride()) {
        edge::scores_row(a.row_ptr, a.col_idx, static_cast<index_t>(i), s_dst, s_src, a.heads,
                         slope, e);
    }
}

__global__ void edge_softmax_kernel(EdgeCsr a, global_ptr<const float> e, global_ptr<float> alpha) {
    for (std::int64_t i = thread_index(); i < a.rows; i += grid_stride()) {
        edge::softmax_row(a.row_ptr, static_cast<index_t>(i), a.heads, e, alpha);
    }
}

__global__ void edge_softmax_backward_kernel(EdgeCsr a, global_ptr<const float> __restrict__ alpha,
                                             global_ptr<const float> dalpha,
                                             global_ptr<const float> __restrict__ e, float slope,
                                             global_ptr<float> dz) {
    for (std::int64_t i = thread_index(); i < a.rows; i += grid_stride()) {
        edge::softmax_backward_row(a.row_ptr, static_cast<index_t>(i), a.heads, alpha, dalpha, e,
                                   slope, dz);
    }
}

__global__ void edge_dropout_kernel(EdgeCsr a, DropoutMask mask,
                                    global_ptr<const std::int64_t> __restrict__ row_ids,
                                    global_ptr<const std::int64_t> __restrict__ col_ids,
                                    global_ptr<float> values) {
    for (std::int64_t i = thread_index(); i < a.rows; i += grid_stride()) {
        edge::dropout_row(a.row_ptr, a.col_idx, static_cast<index_t>(i), a.heads, mask.stream_key,
                          mask.threshold, mask.scale, row_ids, col_ids, values);
    }
}

__global__ void edge_spmm_kernel(EdgeCsr a, global_ptr<const std::int32_t> __restrict__ edge_ids,
                                 global_ptr<const float> __restrict__ alpha,
                                 global_ptr<const float> __restrict__ x, std::int32_t x_cols,
                                 global_ptr<float> __restrict__ y, std::int32_t y_cols, float beta,
                                 std::int64_t n) {
    for (std::int64_t at = thread_index(); at < n; at += grid_stride()) {
        const auto i = static_cast<index_t>(at / y_cols);
        const auto c = static_cast<index_t>(at - static_cast<std::int64_t>(i) * y_cols);
        const float sum = edge::spmm_element(a.row_ptr, a.col_idx, edge_ids, i, c, alpha, a.heads,
                                             x, x_cols, y_cols);
        y[at] = beta == 0.0f ? sum : sum + beta * y[at];
    }
}

__global__ void edge_dots_kernel(EdgeCsr a, global_ptr<const float> __restrict__ x,
                                 std::int32_t x_cols, global_ptr<const float> __restrict__ z,
                                 std::int32_t z_cols, global_ptr<float> __restrict__ out) {
    for (std::int64_t i = thread_index(); i < a.rows; i += grid_stride()) {
        edge::dots_row(a.row_ptr, a.col_idx, static_cast<index_t>(i), x, x_cols, z, z_cols, a.heads,
                       out);
    }
}

}  // namespace

cudaError_t edge_scores(const EdgeCsr& a, const float* s_dst, const float* s_src, float slope,
                        float* e, cudaStream_t stream) {
    if (a.rows == 0) {
        return cudaSuccess;
    }
    STRATA_LAUNCH(edge_scores_kernel, grid_blocks(static_cast<std::size_t>(a.rows)), block_threads,
                  stream, a, s_dst, s_src, slope, e);
    return cudaGetLastError();
}

cudaError_t edge_softmax(const EdgeCsr& a, const float* e, float* alpha, cudaStream_t stream) {
    if (a.rows == 0) {
        return cudaSuccess;
    }
    STRATA_LAUNCH(edge_softmax_kernel, grid_blocks(static_cast<std::size_t>(a.rows)), block_threads,
                  stream, a, e, alpha);
    return cudaGetLastError();
}

cudaError_t edge_softmax_backward(const EdgeCsr& a, const float* alpha, const float* dalpha,
                                  const float* e, float slope, float* dz, cudaStream_t stream) {
    if (a.rows == 0) {
        return cudaSuccess;
    }
    STRATA_LAUNCH(edge_softmax_backward_kernel, grid_blocks(static_cast<std::size_t>(a.rows)),
                  block_threads, stream, a, alpha, dalpha, e, slope, dz);
    return cudaGetLastError();
}

cudaError_t edge_dropout(const EdgeCsr& a, const DropoutMask& mask, const std::int64_t* row_ids,
                         const std::int64_t* col_ids, float* values, cudaStream_t stream) {
    if (a.rows == 0 || !mask.drop) {
        return cudaSuccess;
    }
    STRATA_LAUNCH(edge_dropout_kernel, grid_blocks(static_cast<std::size_t>(a.rows)), block_threads,
                  stream, a, mask, row_ids, col_ids, values);
    return cudaGetLastError();
}

cudaError_t edge_spmm(const EdgeCsr& a, const std::int32_t* edge_ids, const float* alpha,
                      const float* x, std::int32_t x_cols, float* y, std::int32_t y_cols,
                      float beta, cudaStream_t stream) {
    const auto n = static_cast<std::size_t>(a.rows) * static_cast<std::size_t>(y_cols);
    if (n == 0) {
        return cudaSuccess;
    }
    STRATA_LAUNCH(edge_spmm_kernel, grid_blocks(n), block_threads, stream, a, edge_ids, alpha, x,
                  x_cols, y, y_cols, beta, static_cast<std::int64_t>(n));
    return cudaGetLastError();
}

cudaError_t edge_dots(const EdgeCsr& a, const float* x, std::int32_t x_cols, const float* z,
                      std::int32_t z_cols, float* out, cudaStream_t stream) {
    if (a.rows == 0) {
        return cudaSuccess;
    }
    STRATA_LAUNCH(edge_dots_kernel, grid_blocks(static_cast<std::size_t>(a.rows)), block_threads,
                  stream, a, x, x_cols, z, z_cols, out);
    return cudaGetLastError();
}

}  // namespace strata::cuda::kernels
