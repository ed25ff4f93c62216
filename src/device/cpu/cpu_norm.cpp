// CPU normalisation kernels: layer norm (per row) and the pieces of batch norm (centred column
// sums, the affine map with given statistics, the input gradient). Column reductions sum in
// double over fixed row chunks (a function of the shape only), chunks added in order, so results
// never depend on the thread count.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <omp.h>

#include "src/device/cpu/cpu_kernels.hpp"

namespace strata::cpu {
namespace {

constexpr std::size_t serial_elements = std::size_t{1} << 15;
/// Row chunks of the column reductions: those of column_sums (cpu_elementwise.cpp).
constexpr index_t min_chunk_rows = 256;
constexpr index_t max_chunks = 64;

bool go_parallel(std::size_t n, int threads) {
    return threads > 1 && n >= serial_elements;
}

index_t chunk_rows_for(index_t rows) {
    return std::max(min_chunk_rows, (rows + max_chunks - 1) / max_chunks);
}

/// Mean and 1/sqrt(biased variance + eps) of one row, in double (two passes), as floats.
struct RowStats {
    float mean;
    float inv_std;
};

RowStats row_stats(const float* xi, index_t cols, float eps) {
    double sum = 0.0;
    for (index_t j = 0; j < cols; ++j) {
        sum += static_cast<double>(xi[j]);
    }
    const double mean = cols > 0 ? sum / static_cast<double>(cols) : 0.0;
    double sq = 0.0;
    for (index_t j = 0; j < cols; ++j) {
        const double d = static_cast<double>(xi[j]) - mean;
        sq += d * d;
    }
    const double var = cols > 0 ? sq / static_cast<double>(cols) : 0.0;
    return {static_cast<float>(mean),
            static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(eps)))};
}

}  // namespace

void layer_norm(const float* x, index_t rows, index_t cols, const float* gamma, const float* beta,
                float eps, float* y, int threads) {
    // Per row i: μ, σ² (biased) in double; r = 1/sqrt(σ² + eps);
    // y[i, j] = (x[i, j] - μ) r gamma[j] + beta[j] (float).   x, y: rows x cols.
    const auto width = static_cast<std::size_t>(cols);
    const std::size_t n = static_cast<std::size_t>(rows) * width;
#pragma omp parallel for num_threads(threads) schedule(static) if (go_parallel(n, threads))
    for (index_t i = 0; i < rows; ++i) {
        const float* xi = x + static_cast<std::size_t>(i) * width;
        float* yi = y + static_cast<std::size_t>(i) * width;
        const RowStats s = row_stats(xi, cols, eps);
        for (index_t j = 0; j < cols; ++j) {
            yi[j] = (xi[j] - s.mean) * s.inv_std * gamma[j] + beta[j];
        }
    }
}

void layer_norm_backward(const float* x, const float* dy, index_t rows, index_t cols,
                         const float* gamma, float eps, float* dx, float beta, float* dgamma,
                         float* dbeta, int threads) {
    // Per row i (μ, r as forward): x̂ = (x - μ) r, g = dy gamma, A = Σ_j g, B = Σ_j g x̂ (double);
    // dx[i, j] = r (g - A/cols - x̂ B/cols) + beta dx;  dgamma[j] += Σ_i dy x̂, dbeta[j] += Σ_i dy
    // (double over the fixed row chunks, chunks added in order). dx may alias dy.
    const auto width = static_cast<std::size_t>(cols);
    const std::size_t n = static_cast<std::size_t>(rows) * width;
    const index_t chunk_rows = chunk_rows_for(rows);
    const index_t chunks = rows == 0 ? 0 : (rows + chunk_rows - 1) / chunk_rows;
    const bool params = dgamma != nullptr || dbeta != nullptr;
    std::vector<double> partial(params ? 2 * static_cast<std::size_t>(chunks) * width : 0, 0.0);
#pragma omp parallel for num_threads(threads) schedule(static) if (go_parallel(n, threads))
    for (index_t c = 0; c < chunks; ++c) {
        double* pg = params ? partial.data() + 2 * static_cast<std::size_t>(c) * width : nullptr;
        double* pb = params ? pg + width : nullptr;
        const index_t last = std::min(rows, (c + 1) * chunk_rows);
        for (index_t i = c * chunk_rows; i < last; ++i) {
            const std::size_t base = static_cast<std::size_t>(i) * width;
            const float* xi = x + base;
            const float* dyi = dy + base;
            const RowStats s = row_stats(xi, cols, eps);
            double a = 0.0;
            double b = 0.0;
            for (index_t j = 0; j < cols; ++j) {
                const float xhat = (xi[j] - s.mean) * s.inv_std;
                const float g = dyi[j] * gamma[j];
                a += static_cast<double>(g);
                b += static_cast<double>(g) * static_cast<double>(xhat);
            }
            const auto mean_g = static_cast<float>(a / static_cast<double>(cols));
            const auto mean_gx = static_cast<float>(b / static_cast<double>(cols));
            for (index_t j = 0; j < cols; ++j) {
                const float xhat = (xi[j] - s.mean) * s.inv_std;
                const float d = dyi[j];
                if (params) {
                    pg[j] += static_cast<double>(d) * static_cast<double>(xhat);
                    pb[j] += static_cast<double>(d);
                }
                if (dx != nullptr) {
                    const float v = s.inv_std * (d * gamma[j] - mean_g - xhat * mean_gx);
                    float* dxi = dx + base;
                    dxi[j] = beta == 0.0f ? v : v + beta * dxi[j];
                }
            }
        }
    }
    for (index_t j = 0; params && j < cols; ++j) {
        double sg = 0.0;
        double sb = 0.0;
        for (index_t c = 0; c < chunks; ++c) {
            sg += partial[2 * static_cast<std::size_t>(c) * width + static_cast<std::size_t>(j)];
            sb += partial[(2 * static_cast<std::size_t>(c) + 1) * width +
                          static_cast<std::size_t>(j)];
        }
        if (dgamma != nullptr) {
            dgamma[j] += static_cast<float>(sg);
        }
        if (dbeta != nullptr) {
            dbeta[j] += static_cast<float>(sb);
        }
    }
}

void centered_column_sums(const float* x, index_t rows, index_t cols, const float* mean,
                          const float* var, float eps, const float* w, float* out, float beta,
                          int threads) {
    // d = (x[i, j] - mean[j]) s[j], s = 1/sqrt(var + eps) (double) or 1;
    // out[j] = Σ_i d (w ? w[i, j] : d) + beta out[j], in double over fixed row chunks.
    const auto width = static_cast<std::size_t>(cols);
    const index_t chunk_rows = chunk_rows_for(rows);
    const index_t chunks = rows == 0 ? 0 : (rows + chunk_rows - 1) / chunk_rows;
    std::vector<double> scale(width, 1.0);
    for (std::size_t j = 0; var != nullptr && j < width; ++j) {
        scale[j] = 1.0 / std::sqrt(static_cast<double>(var[j]) + static_cast<double>(eps));
    }
    std::vector<double> partial(static_cast<std::size_t>(chunks) * width, 0.0);
    const bool parallel = go_parallel(static_cast<std::size_t>(rows) * width, threads);
#pragma omp parallel for num_threads(threads) schedule(static) if (parallel)
    for (index_t c = 0; c < chunks; ++c) {
        double* acc = partial.data() + static_cast<std::size_t>(c) * width;
        const index_t last = std::min(rows, (c + 1) * chunk_rows);
        for (index_t i = c * chunk_rows; i < last; ++i) {
            const std::size_t base = static_cast<std::size_t>(i) * width;
            for (std::size_t j = 0; j < width; ++j) {
                const double d = (static_cast<double>(x[base + j]) - mean[j]) * scale[j];
                acc[j] += d * (w != nullptr ? static_cast<double>(w[base + j]) : d);
            }
        }
    }
    for (std::size_t j = 0; j < width; ++j) {
        double sum = 0.0;
        for (index_t c = 0; c < chunks; ++c) {
            sum += partial[static_cast<std::size_t>(c) * width + j];
        }
        const auto s = static_cast<float>(sum);
        out[j] = beta == 0.0f ? s : s + beta * out[j];
    }
}

void batch_norm(const float* x, index_t rows, index_t cols, const float* mean, const float* var,
                float eps, const float* gamma, const float* beta, float* y, int threads) {
    // r = 1/sqrtf(var[j] + eps);  y[i, j] = (x[i, j] - mean[j]) r gamma[j] + beta[j].
    const auto width = static_cast<std::size_t>(cols);
    const std::size_t n = static_cast<std::size_t>(rows) * width;
#pragma omp parallel for num_threads(threads) schedule(static) if (go_parallel(n, threads))
    for (index_t i = 0; i < rows; ++i) {
        const std::size_t base = static_cast<std::size_t>(i) * width;
        for (std::size_t j = 0; j < width; ++j) {
            const float r = 1.0f / std::sqrt(var[j] + eps);
            y[base + j] = (x[base + j] - mean[j]) * r * gamma[j] + beta[j];
        }
    }
}

void batch_norm_backward(const float* x, const float* dy, index_t rows, index_t cols,
                         const float* mean, const float* var, float eps, const float* gamma,
                         const float* sum_dy, const float* sum_dy_xhat, double count, float* dx,
                         float beta, int threads) {
    // r = 1/sqrtf(var + eps), x̂ = (x - mean) r, m1 = sum_dy/count, m2 = sum_dy_xhat/count
    // (double, then float);  dx = gamma r (dy - m1 - x̂ m2) + beta dx. dx may alias dy.
    const auto width = static_cast<std::size_t>(cols);
    const std::size_t n = static_cast<std::size_t>(rows) * width;
#pragma omp parallel for num_threads(threads) schedule(static) if (go_parallel(n, threads))
    for (index_t i = 0; i < rows; ++i) {
        const std::size_t base = static_cast<std::size_t>(i) * width;
        for (std::size_t j = 0; j < width; ++j) {
            const float r = 1.0f / std::sqrt(var[j] + eps);
            const auto m1 = static_cast<float>(static_cast<double>(sum_dy[j]) / count);
            const auto m2 = static_cast<float>(static_cast<double>(sum_dy_xhat[j]) / count);
            const float xhat = (x[base + j] - mean[j]) * r;
            const float v = gamma[j] * r * (dy[base + j] - m1 - xhat * m2);
            dx[base + j] = beta == 0.0f ? v : v + beta * dx[base + j];
        }
    }
}

}  // namespace strata::cpu
