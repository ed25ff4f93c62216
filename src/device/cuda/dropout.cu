// Counter-based dropout, y[i, j] = x[i, j] · scale if counter_u32(key, row_ids[i], j) >=
// threshold else 0.   x, y: rows x cols (y may alias x), row_ids: rows (global ids).
// The mask comes from src/device/counter_rng.hpp, shared with the CPU: masks agree bit for bit.
#include "src/device/counter_rng.hpp"
#include "src/device/cuda/cuda_kernels.hpp"
#include "src/device/cuda/cuda_launch.cuh"

namespace strata::cuda::kernels {
namespace {

__global__ void dropout_kernel(const float* x, float* y, std::int64_t n, std::int32_t cols,
                               std::uint64_t stream_key, std::uint32_t threshold, float scale,
                               const std::int64_t* __restrict__ row_ids) {
    for (std::int64_t e = thread_index(); e < n; e += grid_stride()) {
        const std::int64_t i = e / cols;
        const std::int64_t j = e - i * cols;
        y[e] = counter_u32(stream_key, row_ids[i], j) >= threshold ? x[e] * scale : 0.0f;
    }
}

}  // namespace

cudaError_t dropout(const float* x, float* y, std::int32_t rows, std::int32_t cols,
                    std::uint64_t stream_key, std::uint32_t threshold, float scale,
                    const std::int64_t* row_ids, cudaStream_t stream) {
    const auto n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    if (n == 0) {
        return cudaSuccess;
    }
    dropout_kernel<<<grid_blocks(n), block_threads, 0, stream>>>(
        x, y, static_cast<std::int64_t>(n), cols, stream_key, threshold, scale, row_ids);
    return cudaGetLastError();
}

}  // namespace strata::cuda::kernels
