// Approximate comparisons and random matrices for tests.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

#include "src/tensor/host_matrix.hpp"

namespace strata::test {

/// rows x cols with entries uniform in [lo, hi), reproducible from `seed` (std::mt19937_64):
/// the one random matrix of every test (src, layers, gpu).
inline HostMatrix random_matrix(index_t rows, index_t cols, std::uint64_t seed, float lo = -1.0f,
                                float hi = 1.0f) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> uniform(lo, hi);
    HostMatrix m(rows, cols);
    for (auto& v : m.values) {
        v = uniform(rng);
    }
    return m;
}

/// max |a - b| / (|b| + floor) over all elements.
inline double max_relative_difference(const HostMatrix& a, const HostMatrix& b,
                                      double floor = 1e-6) {
    double worst = 0.0;
    for (std::size_t i = 0; i < a.values.size(); ++i) {
        const double d = std::abs(static_cast<double>(a.values[i]) - b.values[i]) /
                         (std::abs(static_cast<double>(b.values[i])) + floor);
        worst = std::max(worst, d);
    }
    return worst;
}

}  // namespace strata::test
