// CPU row gather, scatter-add (halo packing and its transpose) and overwrite scatter. Scatter-add
// splits columns between threads, so repeated row ids never race and are summed in a fixed
// order; the overwrite scatter takes distinct ids and splits rows.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <omp.h>

#include "src/device/cpu/cpu_kernels.hpp"

namespace strata::cpu {
namespace {

/// Column blocks are whole cache lines so that two threads never write the same line.
constexpr index_t column_block = 16;
/// Below this much work one thread is faster than waking the team.
constexpr std::size_t serial_elements = std::size_t{1} << 14;

}  // namespace

void gather_rows(const float* x, index_t f, const index_t* rows, std::size_t num_rows, float* out,
                 int threads) {
    // out[i, :] = x[rows[i], :].   x: ? x f, out: num_rows x f.
    const auto width = static_cast<std::size_t>(f);
    const auto n = static_cast<std::int64_t>(num_rows);
    const bool parallel = num_rows * width >= serial_elements && threads > 1;
#pragma omp parallel for num_threads(threads) schedule(static) if (parallel)
    for (std::int64_t i = 0; i < n; ++i) {
        const float* src = x + static_cast<std::size_t>(rows[i]) * width;
        std::copy(src, src + width, out + static_cast<std::size_t>(i) * width);
    }
}

void scatter_add_rows(const float* x, index_t f, const index_t* rows, std::size_t num_rows,
                      float* out, int threads) {
    // out[rows[i], :] += x[i, :].   x: num_rows x f. Each column block is one thread's, walked
    // in order of i: the sum order is the same for every thread count.
    const auto width = static_cast<std::size_t>(f);
    const index_t blocks = (f + column_block - 1) / column_block;
    const bool parallel = num_rows * width >= serial_elements && threads > 1 && blocks > 1;
    const index_t parts = parallel ? std::min<index_t>(threads, blocks) : 1;
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (index_t p = 0; p < parts; ++p) {
        const index_t first = std::min(f, blocks * p / parts * column_block);
        const index_t last = std::min(f, blocks * (p + 1) / parts * column_block);
        for (std::size_t i = 0; i < num_rows; ++i) {
            const float* src = x + i * width;
            float* dst = out + static_cast<std::size_t>(rows[i]) * width;
#pragma omp simd
            for (index_t j = first; j < last; ++j) {
                dst[j] += src[j];
            }
        }
    }
}

void scatter_rows(const float* x, index_t f, const index_t* rows, std::size_t num_rows, float* out,
                  int threads) {
    // out[rows[i], :] = x[i, :].   x: num_rows x f, out: ? x f; ids distinct.
    const auto width = static_cast<std::size_t>(f);
    const auto n = static_cast<std::int64_t>(num_rows);
    const bool parallel = num_rows * width >= serial_elements && threads > 1;
#pragma omp parallel for num_threads(threads) schedule(static) if (parallel)
    for (std::int64_t i = 0; i < n; ++i) {
        const float* src = x + static_cast<std::size_t>(i) * width;
        std::copy(src, src + width, out + static_cast<std::size_t>(rows[i]) * width);
    }
}

}  // namespace strata::cpu
