// out[j] = Σ_i x[i, j] + beta out[j].   x: rows x cols, out: cols (the bias gradient).
// Deterministic and identical to the CPU (src/device/cpu/cpu_elementwise.cpp): rows are cut into
// the same fixed chunks; thread (c, j) sums column j over chunk c in row order in double, then
// thread j adds the chunk partials in chunk order. No atomics, so results are reproducible.
#include <algorithm>

#include "src/device/cuda/cuda_kernels.hpp"
#include "src/device/cuda/cuda_launch.cuh"

namespace strata::cuda::kernels {
namespace {

// The CPU's constants: chunk_rows = max(256, ceil(rows / 64)), so at most 64 chunks.
constexpr std::int32_t min_chunk_rows = 256;
constexpr std::int32_t max_chunks = 64;

std::int32_t chunk_rows_for(std::int32_t rows) {
    return std::max(min_chunk_rows, (rows + max_chunks - 1) / max_chunks);
}

std::int32_t chunks_for(std::int32_t rows) {
    const std::int32_t chunk_rows = chunk_rows_for(rows);
    return rows == 0 ? 0 : (rows + chunk_rows - 1) / chunk_rows;
}

/// partial[c, j] = Σ_{i in chunk c} x[i, j] in double.   grid: (column blocks, chunks).
__global__ void chunk_sums_kernel(global_ptr<const float> __restrict__ x, std::int32_t rows,
                                  std::int32_t cols, std::int32_t chunk_rows,
                                  global_ptr<double> __restrict__ partial) {
    const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (j >= cols) {
        return;
    }
    const std::int32_t c = static_cast<std::int32_t>(blockIdx.y);
    const std::int32_t first = c * chunk_rows;
    const std::int32_t last = min(rows, first + chunk_rows);
    double acc = 0.0;
    for (std::int32_t i = first; i < last; ++i) {
        acc += static_cast<double>(x[static_cast<std::int64_t>(i) * cols + j]);
    }
    partial[static_cast<std::int64_t>(c) * cols + j] = acc;
}

/// out[j] = Σ_c partial[c, j] (chunk order) + beta out[j]; beta == 0 never reads out.
__global__ void finish_kernel(global_ptr<const double> __restrict__ partial, std::int32_t chunks,
                              std::int32_t cols, global_ptr<float> __restrict__ out, float beta) {
    const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (j >= cols) {
        return;
    }
    double sum = 0.0;
    for (std::int32_t c = 0; c < chunks; ++c) {
        sum += partial[static_cast<std::int64_t>(c) * cols + j];
    }
    const auto s = static_cast<float>(sum);
    out[j] = beta == 0.0f ? s : s + beta * out[j];
}

}  // namespace

std::size_t column_sums_workspace_bytes(std::int32_t rows, std::int32_t cols) {
    return static_cast<std::size_t>(chunks_for(rows)) * static_cast<std::size_t>(cols) *
           sizeof(double);
}

cudaError_t column_sums(const float* x, std::int32_t rows, std::int32_t cols, float* out,
                        float beta, void* workspace, cudaStream_t stream) {
    if (cols == 0) {
        return cudaSuccess;
    }
    const std::int32_t chunks = chunks_for(rows);
    auto* partial = static_cast<double*>(workspace);
    const auto column_blocks = static_cast<unsigned>((cols + block_threads - 1) / block_threads);
    if (chunks > 0) {
        STRATA_LAUNCH(chunk_sums_kernel, dim3(column_blocks, static_cast<unsigned>(chunks)),
                      block_threads, stream, x, rows, cols, chunk_rows_for(rows), partial);
    }
    STRATA_LAUNCH(finish_kernel, column_blocks, block_threads, stream, partial, chunks, cols, out,
                  beta);
    return cudaGetLastError();
}

}  // namespace strata::cuda::kernels
