// Activation formulas shared by the CPU and CUDA kernels (one definition, so both backends apply
// the same operations in the same order): the value, and the derivative from what backward has.
#pragma once

#include "src/device/counter_rng.hpp"  // STRATA_HOST_DEVICE

#include <math.h>  // erff, expf: the same names in host and device code

namespace strata {

/// Activation kinds as plain ints for kernels (the values of enum class Activation).
enum ActivationCode : int {
    act_none = 0,
    act_relu = 1,
    act_elu = 2,
    act_leaky_relu = 3,
    act_gelu = 4
};

/// act(v): relu max(v, 0); elu v > 0 ? v : exp(v) - 1; leaky_relu v > 0 ? v : slope·v;
/// gelu v/2·(1 + erf(v/√2)); none v.
STRATA_HOST_DEVICE inline float activation_value(int code, float slope, float v) {
    switch (code) {
        case act_relu:
            return v > 0.0f ? v : 0.0f;
        case act_elu:
            return v > 0.0f ? v : expf(v) - 1.0f;
        case act_leaky_relu:
            return v > 0.0f ? v : slope * v;
        case act_gelu:
            return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
        default:
            return v;
    }
}

/// act'(v) read from a = act(v) (elu, leaky_relu with slope >= 0: a > 0 iff v > 0):
/// elu a > 0 ? 1 : a + 1 (= exp(v)); leaky_relu a > 0 ? 1 : slope; relu a > 0 ? 1 : 0.
STRATA_HOST_DEVICE inline float activation_slope_from_output(int code, float slope, float a) {
    if (a > 0.0f) {
        return 1.0f;
    }
    switch (code) {
        case act_elu:
            return a + 1.0f;
        case act_leaky_relu:
            return slope;
        default:
            return 0.0f;
    }
}

/// gelu'(v) = Φ(v) + v φ(v) = (1 + erf(v/√2))/2 + v exp(-v²/2)/√(2π).
STRATA_HOST_DEVICE inline float gelu_derivative(float v) {
    const float cdf = 0.5f * (1.0f + erff(v * 0.70710678118654752f));
    const float pdf = 0.39894228040143268f * expf(-0.5f * v * v);
    return cdf + v * pdf;
}

}  // namespace strata
