// Plain CPU kernels behind CpuBackend: raw pointers and sizes in, OpenMP inside. Row-major
// float32; `threads` is the OpenMP team size. Results never depend on `threads`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "src/base/types.hpp"
#include "src/device/backend.hpp"

namespace strata::cpu {

// --- sparse (cpu_spmm.cpp) -------------------------------------------------------------------

/// Row bounds (parts + 1 entries, 0 .. rows) splitting rows into `parts` contiguous ranges of
/// about equal work, counting each stored entry and each row (its write of y) as one unit.
[[nodiscard]] std::vector<index_t> balanced_row_bounds(const index_t* row_ptr, index_t rows,
                                                       int parts);

/// y = A x + beta y.  A: rows x ? CSR (row_ptr rows+1, col_idx/values nnz), x: ? x f, y: rows x f.
/// Part p of `bounds` (parts + 1 entries) is computed by thread p. beta == 0 never reads y.
/// row_ptr may point at row r0 of a larger matrix (its entries stay absolute offsets into
/// col_idx/values): then y holds rows r0 .. r0 + rows of the product.
/// With y_rows (rows entries, distinct), row r of the product is y[y_rows[r]] instead of y[r]
/// (a compressed-row block scattered into a taller y; Backend::spmm_scatter_add).
void spmm_csr(const index_t* row_ptr, const index_t* col_idx, const float* values, index_t rows,
              const float* x, index_t f, float* y, float beta, const index_t* bounds, int parts,
              const index_t* y_rows = nullptr);

// --- packed halo records (cpu_packed.cpp) -----------------------------------------------------

/// y[y_rows[r], :] += A[r, :] decode(x) for rows r < rows of A (spmm_csr with beta 1 and y_rows,
/// x read as packed bf16 or int8 records): the same floats as unpacking x first. Thread p
/// computes part p of `bounds`, as spmm_csr.
void spmm_csr_packed(const index_t* row_ptr, const index_t* col_idx, const float* values,
                     index_t rows, ConstPackedMatrix x, float* y, const index_t* y_rows,
                     const index_t* bounds, int parts);

/// out[rows[i], :] += decode(x record i), i < num_rows (scatter_add_rows over packed records,
/// the same floats as unpacking them first; threads split the columns, as there).
void scatter_add_packed_rows(ConstPackedMatrix x, const index_t* rows, std::size_t num_rows,
                             float* out, int threads);

// --- dense linear algebra (cpu_blas.cpp, cpu_gather.cpp) ---------------------------------------

/// Sets OpenBLAS's (process-wide) thread count: 1, since the caller's OpenMP team runs the GEMM
/// blocks (cpu_blas.cpp); `threads` under STRATA_GEMM_THREADS=openblas (the ablation).
void set_blas_threads(int threads);

/// c = alpha op(a) op(b) + beta c with OpenBLAS.  op(a): m x k, op(b): k x n, c: m x n;
/// a, b stored row-major with leading dimensions lda, ldb. Zero sizes are handled here
/// (cblas rejects ld = 0); k = 0 gives c = beta c, and beta == 0 never reads c.
void gemm(const float* a, index_t lda, bool trans_a, const float* b, index_t ldb, bool trans_b,
          float* c, index_t m, index_t n, index_t k, float alpha, float beta, int threads);

/// out[i, :] = x[rows[i], :].   x: ? x f, out: num_rows x f.
void gather_rows(const float* x, index_t f, const index_t* rows, std::size_t num_rows, float* out,
                 int threads);

/// out[rows[i], :] += x[i, :].   x: num_rows x f, out: ? x f. Repeated ids are summed in order
/// of i (threads split the columns, so no two threads touch one element).
void scatter_add_rows(const float* x, index_t f, const index_t* rows, std::size_t num_rows,
                      float* out, int threads);

/// out[rows[i], :] = x[i, :].   x: num_rows x f, out: ? x f. Ids must be distinct (rows are
/// split between threads; a repeated id leaves one of its rows, unspecified which).
void scatter_rows(const float* x, index_t f, const index_t* rows, std::size_t num_rows, float* out,
                  int threads);

// --- elementwise (cpu_elementwise.cpp) -------------------------------------------------------

/// y[0:n] = value.
void fill(float* y, std::size_t n, float value, int threads);

/// y[0:n] = alpha x + beta y.   y may alias x; beta == 0 never reads y.
void axpby(float alpha, const float* x, float beta, float* y, std::size_t n, int threads);

/// out[j] = Σ_i x[i, j] + beta out[j].   x: rows x cols, out: cols. Summed in double over fixed
/// row chunks, chunks added in order; beta == 0 never reads out.
void column_sums(const float* x, index_t rows, index_t cols, float* out, float beta, int threads);

/// y = dropout(act(x + bias)) (Backend::bias_activation). bias may be null; key.rate == 0 skips
/// dropout (row_ids may then be null). x, y: rows x cols; y may alias x.
void bias_activation(const float* x, const float* bias, index_t rows, index_t cols,
                     ActivationSpec act, const DropoutKey& key, const global_id* row_ids, float* y,
                     int threads);

/// dx = dy ⊙ ∂y/∂(x + bias) + beta dx (Backend::bias_activation_backward): `saved` is y (relu,
/// elu, leaky_relu) or x (gelu, with bias, which may be null); the mask is regenerated except
/// with relu. dx may alias dy; beta == 0 never reads dx.
void bias_activation_backward(const float* saved, const float* bias, const float* dy, index_t rows,
                              index_t cols, ActivationSpec act, const DropoutKey& key,
                              const global_id* row_ids, float* dx, float beta, int threads);

/// y[0:n] = (shift + s[0]) x + beta y.   y may alias x; beta == 0 never reads y.
void axpby_scalar(float shift, const float* s, const float* x, float beta, float* y, std::size_t n,
                  int threads);

/// Σ_k a[k] b[k] over n elements, in double over fixed chunks (thread-count independent).
[[nodiscard]] double dot(const float* a, const float* b, std::size_t n, int threads);

// --- normalisation (cpu_norm.cpp) ------------------------------------------------------------

/// Backend::layer_norm: per row, mean and biased variance in double (two passes).
void layer_norm(const float* x, index_t rows, index_t cols, const float* gamma, const float* beta,
                float eps, float* y, int threads);

/// Backend::layer_norm_backward: dx (may be null), dgamma and dbeta (each may be null; summed
/// in double over fixed row chunks, then added).
void layer_norm_backward(const float* x, const float* dy, index_t rows, index_t cols,
                         const float* gamma, float eps, float* dx, float beta, float* dgamma,
                         float* dbeta, int threads);

/// Backend::centered_column_sums (var and w may be null).
void centered_column_sums(const float* x, index_t rows, index_t cols, const float* mean,
                          const float* var, float eps, const float* w, float* out, float beta,
                          int threads);

/// Backend::batch_norm.
void batch_norm(const float* x, index_t rows, index_t cols, const float* mean, const float* var,
                float eps, const float* gamma, const float* beta, float* y, int threads);

/// Backend::batch_norm_backward.
void batch_norm_backward(const float* x, const float* dy, index_t rows, index_t cols,
                         const float* mean, const float* var, float eps, const float* gamma,
                         const float* sum_dy, const float* sum_dy_xhat, double count, float* dx,
                         float beta, int threads);

// --- graph attention (cpu_attention.cpp): Backend::edge_*, rows of A split over threads ------

/// The CSR structure of A (values unused) and its head count.
struct EdgeStructure {
    const index_t* row_ptr;
    const index_t* col_idx;
    index_t rows;
    index_t heads;
};

void edge_scores(const EdgeStructure& a, const float* s_dst, const float* s_src, float slope,
                 float* e, int threads);
void edge_softmax(const EdgeStructure& a, const float* e, float* alpha, int threads);
void edge_softmax_backward(const EdgeStructure& a, const float* alpha, const float* dalpha,
                           const float* e, float slope, float* dz, int threads);
/// row_ids, col_ids may be null at rate 0.
void edge_dropout(const EdgeStructure& a, const DropoutKey& key, const global_id* row_ids,
                  const global_id* col_ids, float* values, int threads);
/// edge_ids may be null (entry k uses alpha row k). y: rows x y_cols.
void edge_spmm(const EdgeStructure& a, const index_t* edge_ids, const float* alpha, const float* x,
               index_t x_cols, float* y, index_t y_cols, float beta, int threads);
void edge_dots(const EdgeStructure& a, const float* x, index_t x_cols, const float* z,
               index_t z_cols, float* out, int threads);

// --- loss and optimizer (cpu_loss.cpp, cpu_adam.cpp) -----------------------------------------

/// Softmax cross-entropy of rows i with mask[i] != 0 and labels[i] >= 0 (see Backend).
/// logits, dlogits: rows x classes (dlogits may be null). Sums in double in a fixed order.
[[nodiscard]] LossSums softmax_cross_entropy(const float* logits, index_t rows, index_t classes,
                                             const index_t* labels, const std::uint8_t* mask,
                                             float grad_scale, float* dlogits, int threads);

/// One Adam step on n parameters (see AdamStep; formulas in cpu_adam.cpp).
void adam(float* params, const float* grads, float* m, float* v, std::size_t n,
          const AdamStep& step, int threads);

}  // namespace strata::cpu
