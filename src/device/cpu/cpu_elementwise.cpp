// CPU elementwise kernels: fill, bias and its gradient (column sums), ReLU forward/backward and
// counter-based dropout. Each is one OpenMP loop; small inputs run on one thread.
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

void add_bias(float* y, index_t rows, index_t cols, const float* bias, int threads) {
    // y[i, :] += bias[:].   y: rows x cols.
    const auto width = static_cast<std::size_t>(cols);
    const bool parallel = go_parallel(static_cast<std::size_t>(rows) * width, threads);
#pragma omp parallel for num_threads(threads) schedule(static) if (parallel)
    for (index_t i = 0; i < rows; ++i) {
        float* __restrict yi = y + static_cast<std::size_t>(i) * width;
#pragma omp simd
        for (index_t j = 0; j < cols; ++j) {
            yi[j] += bias[j];
        }
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

void relu(const float* x, float* y, std::size_t n, int threads) {
    // y = max(x, 0) elementwise; y may alias x.
    const auto count = static_cast<std::int64_t>(n);
#pragma omp parallel for simd num_threads(threads) schedule(static) if (go_parallel(n, threads))
    for (std::int64_t i = 0; i < count; ++i) {
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    }
}

void relu_backward(const float* y, const float* dy, float* dx, std::size_t n, int threads) {
    // dx = dy ⊙ [y > 0] elementwise; dx may alias dy.
    const auto count = static_cast<std::int64_t>(n);
#pragma omp parallel for simd num_threads(threads) schedule(static) if (go_parallel(n, threads))
    for (std::int64_t i = 0; i < count; ++i) {
        dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
    }
}

void dropout(const float* x, float* y, index_t rows, index_t cols, const DropoutKey& key,
             const global_id* row_ids, int threads) {
    // y[i, j] = x[i, j] · [counter_u32(stream, row_ids[i], j) >= threshold] / (1 - rate).
    const auto width = static_cast<std::size_t>(cols);
    const std::size_t n = static_cast<std::size_t>(rows) * width;
    if (key.rate == 0.0f) {
        if (x != y) {
            std::copy(x, x + n, y);
        }
        return;
    }
    const std::uint64_t stream = dropout_stream(key.seed, key.epoch, key.layer);
    const std::uint32_t threshold = dropout_threshold(key.rate);
    const float scale = 1.0f / (1.0f - key.rate);
#pragma omp parallel for num_threads(threads) schedule(static) if (go_parallel(n, threads))
    for (index_t i = 0; i < rows; ++i) {
        const global_id row = row_ids[i];
        const float* xi = x + static_cast<std::size_t>(i) * width;
        float* yi = y + static_cast<std::size_t>(i) * width;
        for (index_t j = 0; j < cols; ++j) {
            yi[j] = counter_u32(stream, row, j) >= threshold ? xi[j] * scale : 0.0f;
        }
    }
}

}  // namespace strata::cpu
