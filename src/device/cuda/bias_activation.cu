// Fused bias + activation + counter-based dropout and its backward pass, one thread per element
// (grid-stride).   x, y, dy, dx: rows x cols; bias: cols (or null); row_ids: rows (global ids).
//   forward:  v = x[i, j] + bias[j];  v = max(v, 0) (relu);
//             y[i, j] = keep(i, j) ? v · scale : 0 (dropout), else y[i, j] = v.
//   backward: g = y[i, j] > 0 ? (dropout ? dy · scale : dy) : 0 (relu; y > 0 means kept and
//             positive), g = keep(i, j) ? dy · scale : 0 (no relu, dropout: mask regenerated),
//             g = dy otherwise;  dx = g + beta dx (beta == 0 never reads dx).
// keep(i, j) = counter_u32(stream_key, row_ids[i], j) >= threshold (src/device/counter_rng.hpp,
// shared with the CPU). The operations and their order are those of the CPU kernels
// (src/device/cpu/cpu_elementwise.cpp): with -fmad=false the results agree bit for bit.
// y may alias x, dx may alias dy (no __restrict__ on them).
#include "src/device/counter_rng.hpp"
#include "src/device/cuda/cuda_kernels.hpp"
#include "src/device/cuda/cuda_launch.cuh"

namespace strata::cuda::kernels {
namespace {

__global__ void bias_activation_kernel(const float* x, const float* __restrict__ bias,
                                       std::int64_t n, std::int32_t cols, bool relu, bool drop,
                                       std::uint64_t stream_key, std::uint32_t threshold,
                                       float scale, const std::int64_t* __restrict__ row_ids,
                                       float* y) {
    for (std::int64_t e = thread_index(); e < n; e += grid_stride()) {
        const std::int64_t i = e / cols;
        const std::int64_t j = e - i * cols;
        float v = bias != nullptr ? x[e] + bias[j] : x[e];
        if (relu) {
            v = v > 0.0f ? v : 0.0f;
        }
        if (drop) {
            v = counter_u32(stream_key, row_ids[i], j) >= threshold ? v * scale : 0.0f;
        }
        y[e] = v;
    }
}

__global__ void bias_activation_backward_kernel(const float* y, const float* dy, std::int64_t n,
                                                std::int32_t cols, bool relu, bool drop,
                                                std::uint64_t stream_key, std::uint32_t threshold,
                                                float scale,
                                                const std::int64_t* __restrict__ row_ids, float* dx,
                                                float beta) {
    for (std::int64_t e = thread_index(); e < n; e += grid_stride()) {
        float g = 0.0f;
        if (relu) {
            g = y[e] > 0.0f ? (drop ? dy[e] * scale : dy[e]) : 0.0f;
        } else if (drop) {
            const std::int64_t i = e / cols;
            const std::int64_t j = e - i * cols;
            g = counter_u32(stream_key, row_ids[i], j) >= threshold ? dy[e] * scale : 0.0f;
        } else {
            g = dy[e];
        }
        dx[e] = beta == 0.0f ? g : g + beta * dx[e];
    }
}

}  // namespace

cudaError_t bias_activation(const float* x, const float* bias, std::int32_t rows, std::int32_t cols,
                            bool relu, const DropoutMask& mask, const std::int64_t* row_ids,
                            float* y, cudaStream_t stream) {
    const auto n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    if (n == 0) {
        return cudaSuccess;
    }
    bias_activation_kernel<<<grid_blocks(n), block_threads, 0, stream>>>(
        x, bias, static_cast<std::int64_t>(n), cols, relu, mask.drop, mask.stream_key,
        mask.threshold, mask.scale, row_ids, y);
    return cudaGetLastError();
}

cudaError_t bias_activation_backward(const float* y, const float* dy, std::int32_t rows,
                                     std::int32_t cols, bool relu, const DropoutMask& mask,
                                     const std::int64_t* row_ids, float* dx, float beta,
                                     cudaStream_t stream) {
    const auto n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    if (n == 0) {
        return cudaSuccess;
    }
    bias_activation_backward_kernel<<<grid_blocks(n), block_threads, 0, stream>>>(
        y, dy, static_cast<std::int64_t>(n), cols, relu, mask.drop, mask.stream_key, mask.threshold,
        mask.scale, row_ids, dx, beta);
    return cudaGetLastError();
}

}  // namespace strata::cuda::kernels
