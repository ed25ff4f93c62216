// One Adam step over a flat parameter range, one thread per parameter. Per element:
//   L2 (decoupled = false): g = grad + wd·p;   AdamW (decoupled = true): g = grad, p -= lr·wd·p
//   m = β1·m + (1-β1)·g;  v = β2·v + (1-β2)·g²;  p -= lr · (m / c1) / (sqrt(v / c2) + eps)
// with c1 = 1-β1^t, c2 = 1-β2^t from the host. params, grads, m, v: n floats. Same operation
// order as src/device/cpu/cpu_adam.cpp (and no contracted multiply-adds: -fmad=false).
#include "src/device/cuda/cuda_kernels.hpp"
#include "src/device/cuda/cuda_launch.cuh"

namespace strata::cuda::kernels {
namespace {

__global__ void adam_kernel(global_ptr<float> __restrict__ params,
                            global_ptr<const float> __restrict__ grads,
                            global_ptr<float> __restrict__ m, global_ptr<float> __restrict__ v,
                            std::int64_t n, AdamScalars s) {
    for (std::int64_t i = thread_index(); i < n; i += grid_stride()) {
        float p = params[i];
        float g = grads[i];
        if (s.decoupled) {
            p -= s.lr * s.weight_decay * p;
        } else {
            g += s.weight_decay * p;
        }
        const float mi = s.beta1 * m[i] + (1.0f - s.beta1) * g;
        const float vi = s.beta2 * v[i] + (1.0f - s.beta2) * g * g;
        m[i] = mi;
        v[i] = vi;
        params[i] = p - s.lr * (mi / s.correction1) / (sqrtf(vi / s.correction2) + s.eps);
    }
}

}  // namespace

cudaError_t adam(float* params, const float* grads, float* m, float* v, std::size_t n,
                 const AdamScalars& s, cudaStream_t stream) {
    if (n == 0) {
        return cudaSuccess;
    }
    STRATA_LAUNCH(adam_kernel, grid_blocks(n), block_threads, stream, params, grads, m, v,
                  static_cast<std::int64_t>(n), s);
    return cudaGetLastError();
}

}  // namespace strata::cuda::kernels
