// CPU Adam: one fused pass over a flat parameter range (moments, bias correction, update).
#include <cmath>
#include <cstddef>
#include <cstdint>

#include <omp.h>

#include "src/device/cpu/cpu_kernels.hpp"

namespace strata::cpu {

namespace {

/// The update of adam() with the decoupled test out of the loop (one instance per form): a
/// branch inside kept the loop from vectorizing (-fopt-info-vec: "control flow in loop"), and
/// so did std::sqrt's errno path before -fno-math-errno. The same operations per element.
template <bool Decoupled>
void adam_update(float* __restrict params, const float* __restrict grads, float* __restrict m,
                 float* __restrict v, std::int64_t count, const AdamStep& step, float correction1,
                 float correction2, int threads) {
    const float lr = step.lr;
    const float wd = step.weight_decay;
    const float b1 = step.beta1;
    const float b2 = step.beta2;
    const float eps = step.eps;
    const bool parallel = threads > 1 && count >= 32768;
#pragma omp parallel for simd num_threads(threads) schedule(static) if (parallel)
    for (std::int64_t i = 0; i < count; ++i) {
        float p = params[i];
        float g = grads[i];
        if constexpr (Decoupled) {
            p -= lr * wd * p;
        } else {
            g += wd * p;
        }
        const float mi = b1 * m[i] + (1.0f - b1) * g;
        const float vi = b2 * v[i] + (1.0f - b2) * g * g;
        m[i] = mi;
        v[i] = vi;
        params[i] = p - lr * (mi / correction1) / (std::sqrt(vi / correction2) + eps);
    }
}

}  // namespace

void adam(float* params, const float* grads, float* m, float* v, std::size_t n,
          const AdamStep& step, int threads) {
    // Per element, t = step.step:
    //   L2 (decoupled = false):  g = grad + wd·p
    //   AdamW (decoupled = true): g = grad;  p = p - lr·wd·p   (with the old p, before the update)
    //   m = β1·m + (1-β1)·g;  v = β2·v + (1-β2)·g²
    //   p = p - lr · (m / (1-β1^t)) / (sqrt(v / (1-β2^t)) + eps)
    const auto t = static_cast<double>(step.step);
    const auto correction1 = static_cast<float>(1.0 - std::pow(static_cast<double>(step.beta1), t));
    const auto correction2 = static_cast<float>(1.0 - std::pow(static_cast<double>(step.beta2), t));
    const auto count = static_cast<std::int64_t>(n);
    if (step.decoupled) {
        adam_update<true>(params, grads, m, v, count, step, correction1, correction2, threads);
    } else {
        adam_update<false>(params, grads, m, v, count, step, correction1, correction2, threads);
    }
}

}  // namespace strata::cpu
