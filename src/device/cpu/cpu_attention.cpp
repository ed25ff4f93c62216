// CPU graph-attention kernels (Backend::edge_*): rows of A split statically over threads, each
// row computed by the shared per-row formulas of src/device/edge_rows.hpp, so results do not
// depend on the thread count.
#include "src/device/cpu/cpu_kernels.hpp"
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

void edge_dropout(const EdgeStructure& a, const DropoutKey& key, const global_id* row_ids,
                  const global_id* col_ids, float* values, int threads) {
    if (key.rate == 0.0f) {
        return;
    }
    const std::uint64_t stream = dropout_stream(key.seed, key.epoch, key.layer);
    const std::uint32_t threshold = dropout_threshold(key.rate);
    const float scale = 1.0f / (1.0f - key.rate);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (index_t i = 0; i < a.rows; ++i) {
        edge::dropout_row(a.row_ptr, a.col_idx, i, a.heads, stream, threshold, scale, row_ids,
                          col_ids, values);
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
