// Helpers of the GPU tests: awkward random inputs, the same data on the CPU and CUDA backends,
// and comparisons (bitwise, relative, and scaled by the magnitude of the summed terms).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "src/device/backend.hpp"
#include "src/tensor/host_csr.hpp"
#include "src/tensor/host_matrix.hpp"
#include "tests/support/matrices.hpp"  // random_matrix

namespace strata::test {

/// The reference and the device under test.
struct Backends {
    std::unique_ptr<Backend> cpu = make_cpu_backend(2);
    std::unique_ptr<Backend> gpu = make_cuda_backend(0);
};

/// rows x cols CSR: entry (r, c) present with probability `density`, every 5th row empty, and,
/// if long_row >= 0, that row holding min(cols, long_nnz) entries (a row longer than a block).
inline HostCsr random_csr(index_t rows, index_t cols, double density, std::uint32_t seed,
                          index_t long_row = -1, index_t long_nnz = 0) {
    std::mt19937 gen(seed);
    std::bernoulli_distribution present(density);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    HostCsr a;
    a.rows = rows;
    a.cols = cols;
    for (index_t r = 0; r < rows; ++r) {
        if (r == long_row) {
            const index_t n = std::min(cols, long_nnz);
            for (index_t c = 0; c < n; ++c) {
                a.col_idx.push_back(static_cast<index_t>(static_cast<std::int64_t>(c) * cols /
                                                         std::max<index_t>(n, 1)));
                a.values.push_back(value(gen));
            }
        } else if (r % 5 != 0) {
            for (index_t c = 0; c < cols; ++c) {
                if (present(gen)) {
                    a.col_idx.push_back(c);
                    a.values.push_back(value(gen));
                }
            }
        }
        a.row_ptr.push_back(static_cast<index_t>(a.col_idx.size()));
    }
    return a;
}

/// max |a - b| / (|b| + floor) over all elements (a.size() must equal b.size()).
inline double max_relative_difference(const std::vector<float>& a, const std::vector<float>& b,
                                      double floor = 1e-3) {
    double worst = a.size() == b.size() ? 0.0 : INFINITY;
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
        const double d = std::abs(static_cast<double>(a[i]) - b[i]) /
                         (std::abs(static_cast<double>(b[i])) + floor);
        worst = std::isnan(d) ? INFINITY : std::max(worst, d);
    }
    return worst;
}

/// |m| elementwise (NaN stays NaN): the reference run on absolute values gives the scale of
/// max_scaled_difference.
inline HostMatrix abs_of(HostMatrix m) {
    for (float& v : m.values) {
        v = std::abs(v);
    }
    return m;
}
inline HostCsr abs_of(HostCsr a) {
    for (float& v : a.values) {
        v = std::abs(v);
    }
    return a;
}

/// max |a - b| / scale over all elements, scale[i] = Σ |terms| of element i (for y = A x + beta y0
/// the CPU result of |A| |x| + |beta| |y0|). A float sum of n terms in any order, with or without
/// fused multiply-adds (cuSPARSE, cuBLAS), is within about n·u·scale of the exact sum, so this
/// does not blow up where the terms cancel, as a relative difference does. Equal elements count
/// 0 (-0 == +0); a difference where the scale is 0 (or NaN) is infinite.
inline double max_scaled_difference(const std::vector<float>& a, const std::vector<float>& b,
                                    const std::vector<float>& scale) {
    if (a.size() != b.size() || a.size() != scale.size()) {
        return INFINITY;
    }
    double worst = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i] == b[i] || std::memcmp(&a[i], &b[i], sizeof(float)) == 0) {
            continue;  // equal, or the same NaN
        }
        const double d = std::abs(static_cast<double>(a[i]) - b[i]) / scale[i];
        worst = std::isnan(d) || !(scale[i] > 0.0f) ? INFINITY : std::max(worst, d);
    }
    return worst;
}

/// True when the two vectors hold the same bits (NaN == NaN, -0 != +0).
inline bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() &&
           (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

}  // namespace strata::test
