// Every Backend operation, declared once: its contract, result, name, parameters and the
// arguments that forward them. Included (no include guard, on purpose) wherever a declaration
// or definition is made for each operation, with STRATA_BACKEND_OPERATION(result, name,
// parameters, arguments) defined to what that place needs:
//   src/device/backend.hpp         the public entry point `name` and the private virtual
//                                  `name_impl` a backend implements
//   src/device/backend.cpp         the entry point: check_name(arguments), then name_impl
//   src/device/operand_checks.hpp  the argument check `check_name`, same parameters (its
//                                  definition is written in operand_checks.cpp)
//   src/device/cpu/cpu_backend.hpp, src/device/cuda/cuda_backend.hpp   the overrides
// So a new operation is one entry here, its check in operand_checks.cpp and one `name_impl` per
// backend (docs/layers.md, "A backend operation").
//
// Row-major float32 throughout. Every pointer and span passed to an operation lives in the
// backend's memory. `y` is overwritten unless a beta is given. Operations are ordered on the
// backend's compute stream (synchronous on the CPU).

#ifndef STRATA_BACKEND_OPERATION
#error "define STRATA_BACKEND_OPERATION(result, name, parameters, arguments) before including"
#endif

// --- linear algebra ---------------------------------------------------------------------------

/// y = A[rows] x + beta y: rows [rows.first, rows.first + rows.count) of A times x.
/// A: m x n (CSR), x: n x f, y: rows.count x f. beta == 0 never reads y.
STRATA_BACKEND_OPERATION(void, spmm,
                         (const CsrMatrix& a, RowRange rows, ConstMatrixView x, MatrixView y,
                          float beta),
                         (a, rows, x, y, beta))
/// y[rows[r], :] += Σ_k A[r, c_k] x[c_k, :] for every row r of A: a compressed-row block
/// (HostDcsr, src/tensor/host_dcsr.hpp) whose row r is row rows[r] of a taller matrix; other
/// rows of y are untouched. Terms are added to y[rows[r]] in entry order, as spmm with
/// beta 1 on the expanded matrix (the same floats on the CPU).
/// A: m x n (CSR), rows: m distinct ids in [0, y.rows), x: n x f, y: ? x f.
STRATA_BACKEND_OPERATION(void, spmm_scatter_add,
                         (const CsrMatrix& a, std::span<const index_t> rows, ConstMatrixView x,
                          MatrixView y),
                         (a, rows, x, y))
/// spmm_scatter_add reading x as packed records (bf16 or int8, src/tensor/packed_rows.hpp) in
/// host memory: y[rows[r], :] += Σ_k A[r, c_k] decode(x[c_k]), the same floats as decoding x
/// into fp32 rows (unpack_rows) and calling spmm_scatter_add, without the fp32 copy.
/// A: m x n (CSR), rows: m distinct ids in [0, y.rows), x: n records of f values, y: ? x f.
/// The CPU backend's; CUDA throws (compressed halos are refused there).
STRATA_BACKEND_OPERATION(void, spmm_scatter_add_packed,
                         (const CsrMatrix& a, std::span<const index_t> rows, ConstPackedMatrix x,
                          MatrixView y),
                         (a, rows, x, y))
/// c = alpha op(a) op(b) + beta c.
STRATA_BACKEND_OPERATION(void, gemm,
                         (ConstMatrixView a, Transpose ta, ConstMatrixView b, Transpose tb,
                          MatrixView c, float alpha, float beta),
                         (a, ta, b, tb, c, alpha, beta))
/// out[i, :] = x[rows[i], :].   out: rows.size() x f. A row id outside [0, x.rows) throws
/// strata::Error where the ids are read (gather and scatters alike): at once on the CPU, at the
/// next synchronisation on CUDA (the kernel flags it).
STRATA_BACKEND_OPERATION(void, gather_rows,
                         (ConstMatrixView x, std::span<const index_t> rows, MatrixView out),
                         (x, rows, out))
/// out[rows[i], :] += x[i, :].   x: rows.size() x f. Repeated row ids are allowed, but
/// the CUDA backend sums them with float atomics in an unspecified order: callers whose
/// result must be reproducible pass distinct ids per call (the sums then run in call order,
/// bit for bit the CPU's).
STRATA_BACKEND_OPERATION(void, scatter_add_rows,
                         (ConstMatrixView x, std::span<const index_t> rows, MatrixView out),
                         (x, rows, out))
/// scatter_add_rows reading x as packed records (host memory): out[rows[i], :] +=
/// decode(x[i]), the same floats as unpacking x and calling scatter_add_rows. x: rows.size()
/// records of out.cols values. The CPU backend's; CUDA throws, as spmm_scatter_add_packed.
STRATA_BACKEND_OPERATION(void, scatter_add_packed_rows,
                         (ConstPackedMatrix x, std::span<const index_t> rows, MatrixView out),
                         (x, rows, out))
/// out[rows[i], :] = x[i, :].   x: rows.size() x f. Row ids must be distinct (a repeated id
/// leaves one of its rows, unspecified which).
STRATA_BACKEND_OPERATION(void, scatter_rows,
                         (ConstMatrixView x, std::span<const index_t> rows, MatrixView out),
                         (x, rows, out))

// --- elementwise ------------------------------------------------------------------------------

/// y[:] = value.
STRATA_BACKEND_OPERATION(void, fill, (MatrixView y, float value), (y, value))
/// y = alpha x + beta y.   x, y: same shape; beta == 0 never reads y; y may alias x.
STRATA_BACKEND_OPERATION(void, axpby, (float alpha, ConstMatrixView x, float beta, MatrixView y),
                         (alpha, x, beta, y))
/// out[j] = Σ_i x[i, j] + beta out[j].   (bias gradient)
STRATA_BACKEND_OPERATION(void, column_sums, (ConstMatrixView x, std::span<float> out, float beta),
                         (x, out, beta))
/// Fused y = dropout(act(x + bias)): bias (x.cols entries) is skipped when empty; dropout
/// (mask from `key` and row_ids[i], the global id of row i, kept entries scaled by
/// 1/(1-rate)) is skipped when key.rate == 0. x, y: rows x cols; y may alias x.
/// 0 <= rate < 1 and a leaky_relu slope >= 0.
STRATA_BACKEND_OPERATION(void, bias_activation,
                         (ConstMatrixView x, std::span<const float> bias, ActivationSpec act,
                          const DropoutKey& key, std::span<const global_id> row_ids, MatrixView y),
                         (x, bias, act, key, row_ids, y))
/// The mirror: dx = dy ⊙ ∂y/∂(x + bias) + beta dx. `saved` is what the derivative is read
/// from: the forward output y for relu, elu and leaky_relu (relu: y > 0 says both "kept" and
/// "positive", no mask is regenerated; elu, leaky_relu: the mask is regenerated from key and
/// row_ids and the derivative taken from the pre-dropout value y·(1-rate)); the forward
/// input x for gelu (not invertible from y), with `bias` the forward bias (empty: none);
/// not read without activation (a dropout mask is regenerated). `bias` is read only for
/// gelu. saved, dy, dx: rows x cols; dx may alias dy; beta == 0 never reads dx.
STRATA_BACKEND_OPERATION(void, bias_activation_backward,
                         (ConstMatrixView saved, std::span<const float> bias, ConstMatrixView dy,
                          ActivationSpec act, const DropoutKey& key,
                          std::span<const global_id> row_ids, MatrixView dx, float beta),
                         (saved, bias, dy, act, key, row_ids, dx, beta))
/// y = (shift + s[0]) x + beta y: a scale held in backend memory (a learnable scalar such as
/// GIN's ε, read without a host round trip). s: 1 entry; y may alias x; beta == 0 never
/// reads y.
STRATA_BACKEND_OPERATION(void, axpby_scalar,
                         (float shift, std::span<const float> s, ConstMatrixView x, float beta,
                          MatrixView y),
                         (shift, s, x, beta, y))
/// out[0] = Σ_ij a[i, j] b[i, j] + beta out[0] (summed in double in a fixed order).
/// a, b: same shape; out: 1 entry; beta == 0 never reads out.
STRATA_BACKEND_OPERATION(void, dot,
                         (ConstMatrixView a, ConstMatrixView b, std::span<float> out, float beta),
                         (a, b, out, beta))

// --- normalisation ----------------------------------------------------------------------------

/// Layer norm of each row: y[i, :] = (x[i, :] - μ_i) r_i ⊙ gamma + beta, μ_i the row mean,
/// σ²_i the biased row variance, r_i = 1/sqrt(σ²_i + eps). x, y: rows x cols (y may not
/// overlap x); gamma, beta: cols.
STRATA_BACKEND_OPERATION(void, layer_norm,
                         (ConstMatrixView x, std::span<const float> gamma,
                          std::span<const float> beta, float eps, MatrixView y),
                         (x, gamma, beta, eps, y))
/// Its backward from x (row statistics recomputed): with x̂ = (x - μ_i) r_i, g = dy ⊙ gamma,
/// dx[i, :] = r_i (g - mean_j g - x̂ mean_j(g ⊙ x̂)) + beta dx (skipped when dx.data is null;
/// beta == 0 never reads dx; dx may alias dy); dgamma[j] += Σ_i dy[i, j] x̂[i, j],
/// dbeta[j] += Σ_i dy[i, j] (each skipped when empty).
STRATA_BACKEND_OPERATION(void, layer_norm_backward,
                         (ConstMatrixView x, ConstMatrixView dy, std::span<const float> gamma,
                          float eps, MatrixView dx, float beta, std::span<float> dgamma,
                          std::span<float> dbeta),
                         (x, dy, gamma, eps, dx, beta, dgamma, dbeta))
/// Column sums around a centre, for batch statistics (double, fixed row chunks):
/// out[j] = Σ_i d[i, j] · (w.data ? w[i, j] : d[i, j]) + beta out[j] with
/// d = (x[i, j] - mean[j]) s[j], s[j] = 1/sqrt(var[j] + eps) when var is given, else 1.
/// (Σ (x - μ)² with neither w nor var; Σ dy ⊙ x̂ with both.) x, w: rows x cols; mean, var,
/// out: cols; beta == 0 never reads out.
STRATA_BACKEND_OPERATION(void, centered_column_sums,
                         (ConstMatrixView x, std::span<const float> mean,
                          std::span<const float> var, float eps, ConstMatrixView w,
                          std::span<float> out, float beta),
                         (x, mean, var, eps, w, out, beta))
/// Batch norm with given statistics: y = (x - mean[j]) / sqrt(var[j] + eps) · gamma[j] +
/// beta[j]. x, y: rows x cols (y may alias x); mean, var, gamma, beta: cols.
STRATA_BACKEND_OPERATION(void, batch_norm,
                         (ConstMatrixView x, std::span<const float> mean,
                          std::span<const float> var, float eps, std::span<const float> gamma,
                          std::span<const float> beta, MatrixView y),
                         (x, mean, var, eps, gamma, beta, y))
/// Its input gradient for batch statistics over `count` rows in all (all ranks):
/// dx = gamma[j] r[j] (dy - sum_dy[j]/count - x̂ sum_dy_xhat[j]/count) + beta dx,
/// r = 1/sqrt(var + eps), x̂ = (x - mean) r; sum_dy, sum_dy_xhat the global column sums of dy
/// and dy ⊙ x̂. x, dy, dx: rows x cols (dx may alias dy); beta == 0 never reads dx.
STRATA_BACKEND_OPERATION(void, batch_norm_backward,
                         (ConstMatrixView x, ConstMatrixView dy, std::span<const float> mean,
                          std::span<const float> var, float eps, std::span<const float> gamma,
                          std::span<const float> sum_dy, std::span<const float> sum_dy_xhat,
                          double count, MatrixView dx, float beta),
                         (x, dy, mean, var, eps, gamma, sum_dy, sum_dy_xhat, count, dx, beta))

// --- graph attention: edge-valued sparse operations (GAT) -------------------------------------
// A: m x n CSR whose structure is used and whose values are never read; entry k of row i has
// column c_k. Edge values are nnz x H matrices (one column per attention head), row k for
// entry k. Formulas per entry in src/device/edge_rows.hpp (shared with the CUDA kernels).

/// SDDMM-style scores: e[k, h] = LeakyReLU(s_dst[i, h] + s_src[c_k, h]) with slope
/// `negative_slope` below 0.   s_dst: m x H, s_src: n x H, e: nnz x H.
STRATA_BACKEND_OPERATION(void, edge_scores,
                         (const CsrMatrix& a, ConstMatrixView s_dst, ConstMatrixView s_src,
                          float negative_slope, MatrixView e),
                         (a, s_dst, s_src, negative_slope, e))
/// Segment (row) softmax per head: alpha[k, h] = exp(e[k, h] - m_ih) / Σ_{k' in row i}
/// exp(e[k', h] - m_ih), m_ih the row's maximum.   e, alpha: nnz x H; alpha may alias e.
STRATA_BACKEND_OPERATION(void, edge_softmax,
                         (const CsrMatrix& a, ConstMatrixView e, MatrixView alpha), (a, e, alpha))
/// Its backward through the LeakyReLU that made the scores: dz[k, h] = alpha[k, h]
/// (dalpha[k, h] - Σ_{k' in row i} alpha[k', h] dalpha[k', h]) · (e[k, h] > 0 ? 1 :
/// negative_slope) (slope 1: the softmax's backward alone). alpha, dalpha, e, dz: nnz x H;
/// dz may alias dalpha.
STRATA_BACKEND_OPERATION(void, edge_softmax_backward,
                         (const CsrMatrix& a, ConstMatrixView alpha, ConstMatrixView dalpha,
                          ConstMatrixView e, float negative_slope, MatrixView dz),
                         (a, alpha, dalpha, e, negative_slope, dz))
/// Inverted dropout on edge values, in place: v[k, h] = keep ? v[k, h] / (1 - rate) : 0,
/// keep iff counter_u32(dropout_stream(seed, epoch, layer), row_ids[i], col_ids[c_k] · H + h)
/// >= dropout_threshold(rate): a function of the edge's global ids, not of ranks or threads.
/// No-op at rate 0.   row_ids: m, col_ids: n, values: nnz x H.
STRATA_BACKEND_OPERATION(void, edge_dropout,
                         (const CsrMatrix& a, const DropoutKey& key,
                          std::span<const global_id> row_ids, std::span<const global_id> col_ids,
                          MatrixView values),
                         (a, key, row_ids, col_ids, values))
/// Attention-weighted SpMM, per head: w_kh = alpha[edge_ids[k], h] (alpha[k, h] when
/// edge_ids is empty: edge_ids lets a transposed structure use the values of A's entries).
/// With H heads of F features (x.cols and y.cols decide):
///   x.cols == y.cols == H·F:  y[i, hF + f] = Σ_k w_kh x[c_k, hF + f]        (heads concat)
///   x.cols == H·F, y.cols == F: y[i, f] = 1/H Σ_h Σ_k w_kh x[c_k, hF + f]    (heads mean)
///   x.cols == F, y.cols == H·F: y[i, hF + f] = 1/H Σ_k w_kh x[c_k, f]    (mean's transpose)
/// plus beta y (beta == 0 never reads y).   alpha: ? x H, x: n x ?, y: m x ?.
STRATA_BACKEND_OPERATION(void, edge_spmm,
                         (const CsrMatrix& a, std::span<const index_t> edge_ids,
                          ConstMatrixView alpha, ConstMatrixView x, MatrixView y, float beta),
                         (a, edge_ids, alpha, x, y, beta))
/// SDDMM-style dot products per head: out[k, h] = Σ_f x[i, hF + f] z[c_k, hF + f] when
/// x.cols == z.cols == H·F; with x.cols == F (a heads-mean output's gradient):
/// out[k, h] = 1/H Σ_f x[i, f] z[c_k, hF + f].   x: m x ?, z: n x H·F, out: nnz x H.
STRATA_BACKEND_OPERATION(void, edge_dots,
                         (const CsrMatrix& a, ConstMatrixView x, ConstMatrixView z, MatrixView out),
                         (a, x, z, out))

// --- loss and optimizer -----------------------------------------------------------------------

/// Softmax cross-entropy over rows with mask[i] != 0 and labels[i] >= 0:
/// returns the sums; if dlogits.data is not null, writes
/// dlogits[i, :] = grad_scale · (softmax(logits[i, :]) - onehot(labels[i])) for selected rows
/// and 0 for the others.   logits, dlogits: rows x classes; labels, mask: rows. A selected
/// label >= classes throws strata::Error (found where the labels are read: up front on the
/// CPU, by the kernel on CUDA).
STRATA_BACKEND_OPERATION(LossSums, softmax_cross_entropy,
                         (ConstMatrixView logits, std::span<const index_t> labels,
                          std::span<const std::uint8_t> mask, float grad_scale, MatrixView dlogits),
                         (logits, labels, mask, grad_scale, dlogits))
/// One Adam step over a flat parameter range: m, v are its moment buffers.
STRATA_BACKEND_OPERATION(void, adam,
                         (std::span<float> params, std::span<const float> grads, std::span<float> m,
                          std::span<float> v, const AdamStep& step),
                         (params, grads, m, v, step))
