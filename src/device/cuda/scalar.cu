// A scale read from device memory and a dot product:
//   axpby_scalar: y = (shift + s[0]) x + beta y, one thread per element (grid-stride); s[0] is a
//                 learnable scalar (GIN's ε), read on the device (no host round trip).
//   dot:          out[0] = Σ_k a[k] b[k] + beta out[0]: each block sums its grid-stride share in
//                 double and reduces it in shared memory (fixed tree); one thread adds the block
//                 partials in block order. The grid depends on n only: deterministic.
#include "src/device/cuda/cuda_kernels.hpp"
#include "src/device/cuda/cuda_launch.cuh"

namespace strata::cuda::kernels {
namespace {

/// Blocks of the dot product (partials): at most this many.
constexpr std::size_t dot_max_blocks = 1024;

std::size_t dot_blocks(std::size_t n) {
    return std::min<std::size_t>(dot_max_blocks, (n + block_threads - 1) / block_threads);
}

__global__ void axpby_scalar_kernel(float shift, global_ptr<const float> __restrict__ s,
                                    global_ptr<const float> x, float beta, global_ptr<float> y,
                                    std::int64_t n) {
    const float alpha = shift + s[0];
    for (std::int64_t e = thread_index(); e < n; e += grid_stride()) {
        y[e] = beta == 0.0f ? alpha * x[e] : alpha * x[e] + beta * y[e];
    }
}

__global__ void dot_partial_kernel(global_ptr<const float> __restrict__ a,
                                   global_ptr<const float> __restrict__ b, std::int64_t n,
                                   global_ptr<double> __restrict__ partial) {
    __shared__ double acc[block_threads];
    double sum = 0.0;
    for (std::int64_t e = thread_index(); e < n; e += grid_stride()) {
        sum += static_cast<double>(a[e]) * static_cast<double>(b[e]);
    }
    acc[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned half = block_threads / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            acc[threadIdx.x] += acc[threadIdx.x + half];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = acc[0];
    }
}

__global__ void dot_finish_kernel(global_ptr<const double> __restrict__ partial, unsigned blocks,
                                  global_ptr<float> __restrict__ out, float beta) {
    double sum = 0.0;
    for (unsigned k = 0; k < blocks; ++k) {
        sum += partial[k];
    }
    const auto s = static_cast<float>(sum);
    out[0] = beta == 0.0f ? s : s + beta * out[0];
}

}  // namespace

cudaError_t axpby_scalar(float shift, const float* s, const float* x, float beta, float* y,
                         std::size_t n, cudaStream_t stream) {
    if (n == 0) {
        return cudaSuccess;
    }
    STRATA_LAUNCH(axpby_scalar_kernel, grid_blocks(n), block_threads, stream, shift, s, x, beta, y,
                  static_cast<std::int64_t>(n));
    return cudaGetLastError();
}

std::size_t dot_workspace_bytes(std::size_t n) {
    return std::max<std::size_t>(1, dot_blocks(n)) * sizeof(double);
}

cudaError_t dot(const float* a, const float* b, std::size_t n, float* out, float beta,
                void* workspace, cudaStream_t stream) {
    const std::size_t blocks = dot_blocks(n);
    auto* partial = static_cast<double*>(workspace);
    if (blocks > 0) {
        STRATA_LAUNCH(dot_partial_kernel, static_cast<unsigned>(blocks), block_threads, stream, a,
                      b, static_cast<std::int64_t>(n), partial);
    }
    STRATA_LAUNCH(dot_finish_kernel, 1, 1, stream, partial, static_cast<unsigned>(blocks), out,
                  beta);
    return cudaGetLastError();
}

}  // namespace strata::cuda::kernels
