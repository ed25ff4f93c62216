// Elementwise kernels, one thread per element (grid-stride):
//   fill: y = value;  scale: y *= beta;  add_bias: y[i, j] += bias[j] (y: rows x cols);
//   relu: y = max(x, 0);  relu_backward: dx = dy ⊙ [y > 0]. In place is allowed where noted in
//   cuda_kernels.hpp (no __restrict__ on aliasable pointers).
#include "src/device/cuda/cuda_kernels.hpp"
#include "src/device/cuda/cuda_launch.cuh"

namespace strata::cuda::kernels {
namespace {

__global__ void fill_kernel(float* y, std::int64_t n, float value) {
    for (std::int64_t e = thread_index(); e < n; e += grid_stride()) {
        y[e] = value;
    }
}

__global__ void scale_kernel(float* y, std::int64_t n, float beta) {
    for (std::int64_t e = thread_index(); e < n; e += grid_stride()) {
        y[e] *= beta;
    }
}

__global__ void add_bias_kernel(float* __restrict__ y, std::int64_t n, std::int32_t cols,
                                const float* __restrict__ bias) {
    for (std::int64_t e = thread_index(); e < n; e += grid_stride()) {
        y[e] += bias[e % cols];
    }
}

__global__ void relu_kernel(const float* x, float* y, std::int64_t n) {
    for (std::int64_t e = thread_index(); e < n; e += grid_stride()) {
        const float v = x[e];
        y[e] = v > 0.0f ? v : 0.0f;
    }
}

__global__ void relu_backward_kernel(const float* y, const float* dy, float* dx, std::int64_t n) {
    for (std::int64_t e = thread_index(); e < n; e += grid_stride()) {
        dx[e] = y[e] > 0.0f ? dy[e] : 0.0f;
    }
}

}  // namespace

cudaError_t fill(float* y, std::size_t n, float value, cudaStream_t stream) {
    if (n == 0) {
        return cudaSuccess;
    }
    fill_kernel<<<grid_blocks(n), block_threads, 0, stream>>>(y, static_cast<std::int64_t>(n),
                                                              value);
    return cudaGetLastError();
}

cudaError_t scale(float* y, std::size_t n, float beta, cudaStream_t stream) {
    if (n == 0) {
        return cudaSuccess;
    }
    scale_kernel<<<grid_blocks(n), block_threads, 0, stream>>>(y, static_cast<std::int64_t>(n),
                                                               beta);
    return cudaGetLastError();
}

cudaError_t add_bias(float* y, std::int32_t rows, std::int32_t cols, const float* bias,
                     cudaStream_t stream) {
    const auto n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    if (n == 0) {
        return cudaSuccess;
    }
    add_bias_kernel<<<grid_blocks(n), block_threads, 0, stream>>>(y, static_cast<std::int64_t>(n),
                                                                  cols, bias);
    return cudaGetLastError();
}

cudaError_t relu(const float* x, float* y, std::size_t n, cudaStream_t stream) {
    if (n == 0) {
        return cudaSuccess;
    }
    relu_kernel<<<grid_blocks(n), block_threads, 0, stream>>>(x, y, static_cast<std::int64_t>(n));
    return cudaGetLastError();
}

cudaError_t relu_backward(const float* y, const float* dy, float* dx, std::size_t n,
                          cudaStream_t stream) {
    if (n == 0) {
        return cudaSuccess;
    }
    relu_backward_kernel<<<grid_blocks(n), block_threads, 0, stream>>>(
        y, dy, dx, static_cast<std::int64_t>(n));
    return cudaGetLastError();
}

}  // namespace strata::cuda::kernels
