// Fused bias + activation + counter-based dropout and its backward pass, one thread per element
// (grid-stride).   x, y, dy, dx, saved: rows x cols; bias: cols (or null); row_ids: rows.
//   forward:  v = x[i, j] + bias[j];  v = act(v) (activation_math.hpp);
//             y[i, j] = keep(i, j) ? v · scale : 0 (dropout), else y[i, j] = v.
//   backward: relu:            g = y > 0 ? (dropout ? dy · scale : dy) : 0 (y > 0 means kept
//                              and positive; no mask regenerated);
//             elu, leaky_relu: g = keep ? dy · scale · act'(a) : 0, a = y · keep_rate (the
//                              pre-dropout value; saved = y);
//             gelu:            g = keep ? dy · scale · gelu'(v) : 0, v = x + bias (saved = x);
//             none:            g = keep ? dy · scale : 0 with dropout, else dy;
//             without dropout keep = 1 and scale is not applied;  dx = g + beta dx.
// keep(i, j) = counter_u32(stream_key, row_ids[i], j) >= threshold (src/device/counter_rng.hpp,
// shared with the CPU). The operations and their order are those of the CPU kernels
// (src/device/cpu/cpu_elementwise.cpp): with -fmad=false none, relu and leaky_relu agree bit for
// bit; elu and gelu differ only by the rounding of expf/erff.
// y may alias x, dx may alias dy (no __restrict__ on them).
#include "src/device/activation_math.hpp"
#include "src/device/counter_rng.hpp"
#include "src/device/cuda/cuda_kernels.hpp"
#include "src/device/cuda/cuda_launch.cuh"

namespace strata::cuda::kernels {
namespace {

__global__ void bias_activation_kernel(global_ptr<const float> x,
                                       global_ptr<const float> __restrict__ bias, std::int64_t n,
                                       std::int32_t cols, int act, float slope, DropoutMask mask,
                                       global_ptr<const std::int64_t> __restrict__ row_ids,
                                       global_ptr<float> y) {
    for (std::int64_t e = thread_index(); e < n; e += grid_stride()) {
        const std::int64_t i = e / cols;
        const std::int64_t j = e - i * cols;
        float v = bias != nullptr ? x[e] + bias[j] : x[e];
        v = activation_value(act, slope, v);
        if (mask.drop) {
            v = counter_u32(mask.stream_key, row_ids[i], j) >= mask.threshold ? v * mask.scale
                                                                              : 0.0f;
        }
        y[e] = v;
    }
}

__global__ void bias_activation_backward_kernel(global_ptr<const float> saved,
                                                global_ptr<const float> __restrict__ bias,
                                                global_ptr<const float> dy, std::int64_t n,
                                                std::int32_t cols, int act, float slope,
                                                DropoutMask mask,
                                                global_ptr<const std::int64_t> __restrict__ row_ids,
                                                global_ptr<float> dx, float beta) {
    const bool drop = mask.drop;
    for (std::int64_t e = thread_index(); e < n; e += grid_stride()) {
        float g = 0.0f;
        if (act == act_relu) {
            g = saved[e] > 0.0f ? (drop ? dy[e] * mask.scale : dy[e]) : 0.0f;
        } else {
            const std::int64_t i = e / cols;
            const std::int64_t j = e - i * cols;
            if (!drop || counter_u32(mask.stream_key, row_ids[i], j) >= mask.threshold) {
                float d = 1.0f;
                if (act == act_gelu) {
                    d = gelu_derivative(bias != nullptr ? saved[e] + bias[j] : saved[e]);
                } else if (act != act_none) {
                    d = activation_slope_from_output(act, slope,
                                                     drop ? saved[e] * mask.keep_rate : saved[e]);
                }
                g = drop ? dy[e] * mask.scale * d : dy[e] * d;
            }
        }
        dx[e] = beta == 0.0f ? g : g + beta * dx[e];
    }
}

}  // namespace

cudaError_t bias_activation(const float* x, const float* bias, std::int32_t rows, std::int32_t cols,
                            int act, float slope, const DropoutMask& mask,
                            const std::int64_t* row_ids, float* y, cudaStream_t stream) {
    const auto n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    if (n == 0) {
        return cudaSuccess;
    }
    STRATA_LAUNCH(bias_activation_kernel, grid_blocks(n), block_threads, stream, x, bias,
                  static_cast<std::int64_t>(n), cols, act, slope, mask, row_ids, y);
    return cudaGetLastError();
}

cudaError_t bias_activation_backward(const float* saved, const float* bias, const float* dy,
                                     std::int32_t rows, std::int32_t cols, int act, float slope,
                                     const DropoutMask& mask, const std::int64_t* row_ids,
                                     float* dx, float beta, cudaStream_t stream) {
    const auto n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    if (n == 0) {
        return cudaSuccess;
    }
    STRATA_LAUNCH(bias_activation_backward_kernel, grid_blocks(n), block_threads, stream, saved,
                  bias, dy, static_cast<std::int64_t>(n), cols, act, slope, mask, row_ids, dx,
                  beta);
    return cudaGetLastError();
}

}  // namespace strata::cuda::kernels
