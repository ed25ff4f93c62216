// Elementwise kernels, one thread per element (grid-stride), over n elements:
//   fill: y = value;  scale: y *= beta;  axpby: y = alpha x + beta y (beta == 0 never reads y).
//   In place is allowed where noted in cuda_kernels.hpp (no __restrict__ on aliasable pointers).
#include "src/device/cuda/cuda_kernels.hpp"
#include "src/device/cuda/cuda_launch.cuh"

namespace strata::cuda::kernels {
namespace {

__global__ void fill_kernel(global_ptr<float> y, std::int64_t n, float value) {
    for (std::int64_t e = thread_index(); e < n; e += grid_stride()) {
        y[e] = value;
    }
}

__global__ void scale_kernel(global_ptr<float> y, std::int64_t n, float beta) {
    for (std::int64_t e = thread_index(); e < n; e += grid_stride()) {
        y[e] *= beta;
    }
}

__global__ void axpby_kernel(float alpha, global_ptr<const float> x, float beta,
                             global_ptr<float> y, std::int64_t n) {
    if (beta == 0.0f) {  // never read y: it may hold NaN
        for (std::int64_t e = thread_index(); e < n; e += grid_stride()) {
            y[e] = alpha * x[e];
        }
        return;
    }
    for (std::int64_t e = thread_index(); e < n; e += grid_stride()) {
        y[e] = alpha * x[e] + beta * y[e];
    }
}

}  // namespace

cudaError_t fill(float* y, std::size_t n, float value, cudaStream_t stream) {
    if (n == 0) {
        return cudaSuccess;
    }
    STRATA_LAUNCH(fill_kernel, grid_blocks(n), block_threads, stream, y,
                  static_cast<std::int64_t>(n), value);
    return cudaGetLastError();
}

cudaError_t scale(float* y, std::size_t n, float beta, cudaStream_t stream) {
    if (n == 0) {
        return cudaSuccess;
    }
    STRATA_LAUNCH(scale_kernel, grid_blocks(n), block_threads, stream, y,
                  static_cast<std::int64_t>(n), beta);
    return cudaGetLastError();
}

cudaError_t axpby(float alpha, const float* x, float beta, float* y, std::size_t n,
                  cudaStream_t stream) {
    if (n == 0) {
        return cudaSuccess;
    }
    STRATA_LAUNCH(axpby_kernel, grid_blocks(n), block_threads, stream, alpha, x, beta, y,
                  static_cast<std::int64_t>(n));
    return cudaGetLastError();
}

}  // namespace strata::cuda::kernels
