// CPU graph-attention kernels (Backend::edge_*): rows of A split statically over threads, each
// row computed by the shared per-row formulas of src/device/edge_rows.hpp (the dropout: the same
// formula in loops the compiler vectorizes), so results do not depend on the thread count.
#include <algorithm>
#include <bit>
#include <cstdint>

#include "src/device/cpu/cpu_kernels.hpp"
#include "src/device/cpu/simd_clones.hpp"
#include "src/device/edge_rows.hpp"

namespace strata::cpu {

void edge_scores(const EdgeStructure& a, const float* s_dst, const float* s_src, float slope,
                 float* e, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (index_t i = 0; i < a.rows; ++i) {
        edge::scores_row(a.row_ptr, a.col_idx, i, s_dst, s_src, a.heads, slope, e);
    }
}

void edge_softmax(const EdgeStructure& a, const float* e, float* alpha, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (index_t i = 0; i < a.rows; ++i) {
        edge::softmax_row(a.row_ptr, i, a.heads, e, alpha);
    }
}

void edge_softmax_backward(const EdgeStructure& a, const float* alpha, const float* dalpha,
                           const float* e, float slope, float* dz, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (index_t i = 0; i < a.rows; ++i) {
        edge::softmax_backward_row(a.row_ptr, i, a.heads, alpha, dalpha, e, slope, dz);
    }
}

namespace {

/// keep ? v scale : +0, as edge::dropout_row computes it, on the bits (a float select kept a
/// branch in the loop and stopped it vectorizing).
inline float dropped(float v, float scale, std::uint32_t mask, std::uint32_t threshold) {
    const std::uint32_t keep = mask >= threshold ? ~0U : 0U;
    return std::bit_cast<float>(std::bit_cast<std::uint32_t>(v * scale) & keep);
}

/// edge::dropout_row for rows [first, last): the same mask and values, in loops the compiler
/// vectorizes, so that the mask's 32-bit multiplies run 8 wide (AVX2 clone): over a row's
/// entries at one head (the sparse features' input dropout), over the heads of an entry
/// otherwise (GAT's attention dropout).
STRATA_SIMD_CLONES void dropout_rows(const EdgeStructure& a, index_t first, index_t last,
                                     std::uint64_t stream, std::uint32_t threshold, float scale,
                                     const global_id* row_ids, const global_id* col_ids,
                                     float* values) {
    const std::int64_t hs = a.heads;
    for (index_t i = first; i < last; ++i) {
        const std::uint64_t row_key = counter_row_key(stream, row_ids[i]);
        const index_t end = a.row_ptr[i + 1];
        if (hs == 1) {
#pragma omp simd
            for (index_t k = a.row_ptr[i]; k < end; ++k) {
                const auto col = static_cast<std::uint32_t>(col_ids[a.col_idx[k]]);
                values[k] = dropped(values[k], scale, counter_at(row_key, col), threshold);
            }
            continue;
        }
        for (index_t k = a.row_ptr[i]; k < end; ++k) {
            const auto col = static_cast<std::uint32_t>(col_ids[a.col_idx[k]] * hs);
            float* v = values + k * hs;
#pragma omp simd
            for (std::int64_t h = 0; h < hs; ++h) {
                const auto c = col + static_cast<std::uint32_t>(h);
                v[h] = dropped(v[h], scale, counter_at(row_key, c), threshold);
            }
        }
    }
}

}  // namespace

void edge_dropout(const EdgeStructure& a, const DropoutKey& key, const global_id* row_ids,
                  const global_id* col_ids, float* values, int threads) {
    if (key.rate == 0.0f) {
        return;
    }
    const std::uint64_t stream = dropout_stream(key.seed, key.epoch, key.layer);
    const std::uint32_t threshold = dropout_threshold(key.rate);
    const float scale = 1.0f / (1.0f - key.rate);
    const index_t parts = std::max(1, threads);
    const index_t per = (a.rows + parts - 1) / parts;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (index_t c = 0; c < parts; ++c) {
        dropout_rows(a, std::min(a.rows, c * per), std::min(a.rows, (c + 1) * per), stream,
                     threshold, scale, row_ids, col_ids, values);
    }
}

void edge_spmm(const EdgeStructure& a, const index_t* edge_ids, const float* alpha, const float* x,
               index_t x_cols, float* y, index_t y_cols, float beta, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (index_t i = 0; i < a.rows; ++i) {
        float* yi = y + static_cast<std::size_t>(i) * static_cast<std::size_t>(y_cols);
        for (index_t c = 0; c < y_cols; ++c) {
            const float sum = edge::spmm_element(a.row_ptr, a.col_idx, edge_ids, i, c, alpha,
                                                 a.heads, x, x_cols, y_cols);
            yi[c] = beta == 0.0f ? sum : sum + beta * yi[c];
        }
    }
}

void edge_dots(const EdgeStructure& a, const float* x, index_t x_cols, const float* z,
               index_t z_cols, float* out, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (index_t i = 0; i < a.rows; ++i) {
        edge::dots_row(a.row_ptr, a.col_idx, i, x, x_cols, z, z_cols, a.heads, out);
    }
}

}  // namespace strata::cpu
