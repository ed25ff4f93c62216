// The graph-attention edge operations (Backend::edge_*), one CSR row (or one output element) at
// a time, shared by the CPU kernels (an OpenMP loop over rows) and the CUDA kernels (a thread
// per row or element): both backends compute the same formulas in the same order.
//   A: CSR structure (row_ptr, col_idx; values unused), H heads, edge values nnz x H row-major.
// The pointer types are template parameters (Index: index_t ids, In: const float values, Out:
// float values, Ids: global ids): raw pointers on the CPU and the GPU, the emulation's
// bounds-checked pointers in the CUDA emulation (tests/emulation).
#pragma once

#include <cmath>
#include <cstdint>

#include "src/base/types.hpp"
#include "src/device/counter_rng.hpp"

namespace strata::edge {

/// e[k, h] = LeakyReLU(s_dst[i, h] + s_src[c_k, h]) for the entries k of row i.
template <class Index, class In, class Out>
STRATA_HOST_DEVICE inline void scores_row(Index row_ptr, Index col_idx, index_t i, In s_dst,
                                          In s_src, index_t heads, float slope, Out e) {
    const std::int64_t hs = heads;
    for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
        for (index_t h = 0; h < heads; ++h) {
            const float z = s_dst[i * hs + h] + s_src[col_idx[k] * hs + h];
            e[k * hs + h] = z > 0.0f ? z : slope * z;
        }
    }
}

/// alpha[k, h] = exp(e[k, h] - max) / Σ exp(e[k', h] - max) over row i. alpha may alias e.
template <class Index, class In, class Out>
STRATA_HOST_DEVICE inline void softmax_row(Index row_ptr, index_t i, index_t heads, In e,
                                           Out alpha) {
    const std::int64_t hs = heads;
    const index_t first = row_ptr[i];
    const index_t end = row_ptr[i + 1];
    for (index_t h = 0; h < heads; ++h) {
        float m = -INFINITY;
        for (index_t k = first; k < end; ++k) {
            m = e[k * hs + h] > m ? e[k * hs + h] : m;
        }
        float sum = 0.0f;
        for (index_t k = first; k < end; ++k) {
            const float v = expf(e[k * hs + h] - m);
            alpha[k * hs + h] = v;
            sum += v;
        }
        for (index_t k = first; k < end; ++k) {
            alpha[k * hs + h] = alpha[k * hs + h] / sum;
        }
    }
}

/// dz[k, h] = alpha (dalpha - Σ_row alpha dalpha) · (e > 0 ? 1 : slope). dz may alias dalpha.
template <class Index, class In, class Out>
STRATA_HOST_DEVICE inline void softmax_backward_row(Index row_ptr, index_t i, index_t heads,
                                                    In alpha, In dalpha, In e, float slope,
                                                    Out dz) {
    const std::int64_t hs = heads;
    const index_t first = row_ptr[i];
    const index_t end = row_ptr[i + 1];
    for (index_t h = 0; h < heads; ++h) {
        float dot = 0.0f;
        for (index_t k = first; k < end; ++k) {
            dot += alpha[k * hs + h] * dalpha[k * hs + h];
        }
        for (index_t k = first; k < end; ++k) {
            const std::int64_t at = k * hs + h;
            const float g = alpha[at] * (dalpha[at] - dot);
            dz[at] = e[at] > 0.0f ? g : g * slope;
        }
    }
}

/// Inverted dropout of row i's edge values, keyed by the edge's global ids and the head.
template <class Index, class Ids, class Out>
STRATA_HOST_DEVICE inline void dropout_row(Index row_ptr, Index col_idx, index_t i, index_t heads,
                                           std::uint64_t stream, std::uint32_t threshold,
                                           float scale, Ids row_ids, Ids col_ids, Out values) {
    const std::int64_t hs = heads;
    const std::uint64_t row_key = counter_row_key(stream, row_ids[i]);  // counter_u32, hoisted
    for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
        const global_id col = col_ids[col_idx[k]] * hs;
        for (index_t h = 0; h < heads; ++h) {
            const bool keep = counter_at(row_key, static_cast<std::uint32_t>(col + h)) >= threshold;
            values[k * hs + h] = keep ? values[k * hs + h] * scale : 0.0f;
        }
    }
}

/// (Σ over row i of the weighted x) at output column c of edge_spmm (without the beta term).
/// x_cols == y_cols: per head; x_cols == H·y_cols: heads mean; y_cols == H·x_cols: its
/// transpose (Backend::edge_spmm).
template <class Index, class In>
STRATA_HOST_DEVICE inline float spmm_element(Index row_ptr, Index col_idx, Index edge_ids,
                                             index_t i, index_t c, In alpha, index_t heads, In x,
                                             index_t x_cols, index_t y_cols) {
    const std::int64_t hs = heads;
    const std::int64_t xs = x_cols;
    float sum = 0.0f;
    if (x_cols == y_cols) {
        const index_t h = c / (y_cols / heads);
        for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
            const std::int64_t edge = edge_ids != nullptr ? edge_ids[k] : k;
            sum += alpha[edge * hs + h] * x[col_idx[k] * xs + c];
        }
        return sum;
    }
    if (x_cols > y_cols) {  // mean over heads: y has F = y_cols columns
        for (index_t h = 0; h < heads; ++h) {
            for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
                const std::int64_t edge = edge_ids != nullptr ? edge_ids[k] : k;
                sum += alpha[edge * hs + h] * x[col_idx[k] * xs + h * y_cols + c];
            }
        }
        return sum / static_cast<float>(heads);
    }
    const index_t h = c / x_cols;  // mean's transpose: x has F = x_cols columns
    const index_t f = c - h * x_cols;
    for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
        const std::int64_t edge = edge_ids != nullptr ? edge_ids[k] : k;
        sum += alpha[edge * hs + h] * x[col_idx[k] * xs + f];
    }
    return sum / static_cast<float>(heads);
}

/// out[k, h] for the entries of row i: Σ_f x[i, hF + f] z[c_k, hF + f] (x_cols == z_cols) or
/// 1/H Σ_f x[i, f] z[c_k, hF + f] (x_cols == F).
template <class Index, class In, class Out>
STRATA_HOST_DEVICE inline void dots_row(Index row_ptr, Index col_idx, index_t i, In x,
                                        index_t x_cols, In z, index_t z_cols, index_t heads,
                                        Out out) {
    const std::int64_t hs = heads;
    const index_t f_count = z_cols / heads;
    const bool shared = x_cols != z_cols;
    const In xi = x + i * static_cast<std::int64_t>(x_cols);
    for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
        const In zk = z + col_idx[k] * static_cast<std::int64_t>(z_cols);
        for (index_t h = 0; h < heads; ++h) {
            const In xh = shared ? xi : xi + h * f_count;
            float sum = 0.0f;
            for (index_t f = 0; f < f_count; ++f) {
                sum += xh[f] * zk[h * f_count + f];
            }
            out[k * hs + h] = shared ? sum / static_cast<float>(heads) : sum;
        }
    }
}

}  // namespace strata::edge
