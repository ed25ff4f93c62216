// CPU elementwise kernels: fill, axpby, column sums (the bias gradient), and the fused
// bias + activation + counter-based dropout pair. Each is one OpenMP loop; small inputs run on one
// thread.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <omp.h>

#include "src/device/counter_rng.hpp"
#include "src/device/cpu/cpu_kernels.hpp"

namespace strata::cpu {
namespace {

/// Below this many elements one thread is faster than waking the team.
constexpr std::size_t serial_elements = std::size_t{1} << 15;
/// column_sums: rows per partial sum, and at most this many partials (a function of the shape
/// only, so the summation order never depends on the thread count).
constexpr index_t min_chunk_rows = 256;
constexpr index_t max_chunks = 64;

bool go_parallel(std::size_t n, int threads) {
    return threads > 1 && n >= serial_elements;
}

}  // namespace

void fill(float* y, std::size_t n, float value, int threads) {
    // y[0:n] = value.
    const auto count = static_cast<std::int64_t>(n);
#pragma omp parallel for simd num_threads(threads) schedule(static) if (go_parallel(n, threads))
    for (std::int64_t i = 0; i < count; ++i) {
        y[i] = value;
    }
}

void axpby(float alpha, const float* x, float beta, float* y, std::size_t n, int threads) {
    // y = alpha x + beta y elementwise; y may alias x; beta == 0 never reads y.
    const auto count = static_cast<std::int64_t>(n);
    if (beta == 0.0f) {
#pragma omp parallel for simd num_threads(threads) schedule(static) if (go_parallel(n, threads))
        for (std::int64_t i = 0; i < count; ++i) {
            y[i] = alpha * x[i];
        }
        return;
    }
#pragma omp parallel for simd num_threads(threads) schedule(static) if (go_parallel(n, threads))
    for (std::int64_t i = 0; i < count; ++i) {
        y[i] = alpha * x[i] + beta * y[i];
    }
}

void column_sums(const float* x, index_t rows, index_t cols, float* out, float beta, int threads) {
    // out[j] = Σ_i x[i, j] + beta out[j].   x: rows x cols. Chunk c sums rows
    // [c·chunk_rows, (c+1)·chunk_rows) in double; the chunks are then added in order.
    const auto width = static_cast<std::size_t>(cols);
    const index_t chunk_rows =
        std::max(min_chunk_rows, (rows + max_chunks - 1) / std::max<index_t>(max_chunks, 1));
    const index_t chunks = rows == 0 ? 0 : (rows + chunk_rows - 1) / chunk_rows;
    std::vector<double> partial(static_cast<std::size_t>(chunks) * width, 0.0);
    const bool parallel = go_parallel(static_cast<std::size_t>(rows) * width, threads);
#pragma omp parallel for num_threads(threads) schedule(static) if (parallel)
    for (index_t c = 0; c < chunks; ++c) {
        double* __restrict acc = partial.data() + static_cast<std::size_t>(c) * width;
        const index_t last = std::min(rows, (c + 1) * chunk_rows);
        for (index_t i = c * chunk_rows; i < last; ++i) {
            const float* xi = x + static_cast<std::size_t>(i) * width;
#pragma omp simd
            for (index_t j = 0; j < cols; ++j) {
                acc[j] += static_cast<double>(xi[j]);
            }
        }
    }
    for (index_t j = 0; j < cols; ++j) {
        double sum = 0.0;
        for (index_t c = 0; c < chunks; ++c) {
            sum += partial[static_cast<std::size_t>(c) * width + static_cast<std::size_t>(j)];
        }
        const auto s = static_cast<float>(sum);
        out[j] = beta == 0.0f ? s : s + beta * out[j];  // beta == 0 never reads out
    }
}

void bias_activation(const float* x, const float* bias, index_t rows, index_t cols, Activation act,
                     const DropoutKey& key, const global_id* row_ids, float* y, int threads) {
    // v = x[i, j] + bias[j];  v = max(v, 0) (relu);  y[i, j] = keep(i, j) ? v / (1 - rate) : 0
    // (dropout), keep(i, j) = counter_u32(stream, row_ids[i], j) >= threshold. y may alias x.
    // The same operations in the same order as separate bias, relu and dropout passes.
    const auto width = static_cast<std::size_t>(cols);
    const std::size_t n = static_cast<std::size_t>(rows) * width;
    const bool relu = act == Activation::relu;
    const bool drop = key.rate > 0.0f;
    const std::uint64_t stream = drop ? dropout_stream(key.seed, key.epoch, key.layer) : 0;
    const std::uint32_t threshold = dropout_threshold(key.rate);
    const float scale = drop ? 1.0f / (1.0f - key.rate) : 1.0f;
#pragma omp parallel for num_threads(threads) schedule(static) if (go_parallel(n, threads))
    for (index_t i = 0; i < rows; ++i) {
        const float* xi = x + static_cast<std::size_t>(i) * width;
        float* yi = y + static_cast<std::size_t>(i) * width;
        if (!drop) {
#pragma omp simd
            for (index_t j = 0; j < cols; ++j) {
                float v = bias != nullptr ? xi[j] + bias[j] : xi[j];
                if (relu) {
                    v = v > 0.0f ? v : 0.0f;
                }
                yi[j] = v;
            }
            continue;
        }
        const global_id row = row_ids[i];
        for (index_t j = 0; j < cols; ++j) {
            float v = bias != nullptr ? xi[j] + bias[j] : xi[j];
            if (relu) {
                v = v > 0.0f ? v : 0.0f;
            }
            yi[j] = counter_u32(stream, row, j) >= threshold ? v * scale : 0.0f;
        }
    }
}

void bias_activation_backward(const float* y, const float* dy, index_t rows, index_t cols,
                              Activation act, const DropoutKey& key, const global_id* row_ids,
                              float* dx, float beta, int threads) {
    // g = dy[i, j] · s if y[i, j] > 0 else 0 (relu: y > 0 means kept and positive, s = 1/(1-rate)
    // or 1); without relu g = keep(i, j) ? dy[i, j] · s : 0 (mask regenerated) or g = dy.
    // dx = g + beta dx; dx may alias dy; beta == 0 never reads dx.
    const auto width = static_cast<std::size_t>(cols);
    const std::size_t n = static_cast<std::size_t>(rows) * width;
    const bool drop = key.rate > 0.0f;
    const float scale = drop ? 1.0f / (1.0f - key.rate) : 1.0f;
    const bool regenerate = drop && act != Activation::relu;
    const std::uint64_t stream = regenerate ? dropout_stream(key.seed, key.epoch, key.layer) : 0;
    const std::uint32_t threshold = dropout_threshold(key.rate);
#pragma omp parallel for num_threads(threads) schedule(static) if (go_parallel(n, threads))
    for (index_t i = 0; i < rows; ++i) {
        const std::size_t base = static_cast<std::size_t>(i) * width;
        const float* dyi = dy + base;
        float* dxi = dx + base;
        if (act == Activation::relu) {
            const float* yi = y + base;
#pragma omp simd
            for (index_t j = 0; j < cols; ++j) {
                const float g = yi[j] > 0.0f ? (drop ? dyi[j] * scale : dyi[j]) : 0.0f;
                dxi[j] = beta == 0.0f ? g : g + beta * dxi[j];
            }
        } else if (regenerate) {
            const global_id row = row_ids[i];
            for (index_t j = 0; j < cols; ++j) {
                const float g = counter_u32(stream, row, j) >= threshold ? dyi[j] * scale : 0.0f;
                dxi[j] = beta == 0.0f ? g : g + beta * dxi[j];
            }
        } else {
#pragma omp simd
            for (index_t j = 0; j < cols; ++j) {
                dxi[j] = beta == 0.0f ? dyi[j] : dyi[j] + beta * dxi[j];
            }
        }
    }
}

}  // namespace strata::cpu
