// Plain CUDA launchers behind CudaBackend: raw device pointers, sizes and a stream in; no
// framework types. Row-major float32. Each returns cudaGetLastError() after its launch (check it
// with STRATA_CUDA_CHECK); zero sizes launch nothing. Formulas match the CPU kernels
// (src/device/cpu/cpu_kernels.hpp) operation for operation: the .cu files are compiled with
// -fmad=false so that no multiply-add is contracted differently from the CPU.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "src/device/cuda/global_ptr.hpp"

namespace strata::cuda::kernels {

/// Bits of the backend's device status word, set by kernels that met a bad index (the element
/// is then skipped) and reported by the host at the next synchronisation.
enum StatusBit : unsigned {
    bad_gather_row = 1u,       ///< gather_rows: a row id outside [0, x rows)
    bad_scatter_row = 2u,      ///< scatter_add_rows: a row id outside [0, out rows)
    bad_scatter_set_row = 4u,  ///< scatter_rows: a row id outside [0, out rows)
};

// --- gather.cu ----------------------------------------------------------------------------------

/// out[i, :] = x[rows[i], :].   x: x_rows x f, out: num_rows x f. A bad id sets bad_gather_row
/// in *status and writes 0.
[[nodiscard]] cudaError_t gather_rows(const float* x, std::int32_t x_rows, std::int32_t f,
                                      const std::int32_t* rows, std::int64_t num_rows, float* out,
                                      unsigned* status, cudaStream_t stream);

/// out[rows[i], :] += x[i, :] with atomicAdd (repeated ids are summed in no fixed order).
/// x: num_rows x f, out: out_rows x f. A bad id sets bad_scatter_row in *status.
[[nodiscard]] cudaError_t scatter_add_rows(const float* x, std::int32_t f, const std::int32_t* rows,
                                           std::int64_t num_rows, float* out, std::int32_t out_rows,
                                           unsigned* status, cudaStream_t stream);

/// out[rows[i], :] = x[i, :].   x: num_rows x f, out: out_rows x f. Ids must be distinct (a
/// repeated id leaves one of its rows, unspecified which). A bad id sets bad_scatter_set_row in
/// *status.
[[nodiscard]] cudaError_t scatter_rows(const float* x, std::int32_t f, const std::int32_t* rows,
                                       std::int64_t num_rows, float* out, std::int32_t out_rows,
                                       unsigned* status, cudaStream_t stream);

// --- elementwise.cu -----------------------------------------------------------------------------

/// y[0:n] = value.
[[nodiscard]] cudaError_t fill(float* y, std::size_t n, float value, cudaStream_t stream);
/// y[0:n] *= beta.
[[nodiscard]] cudaError_t scale(float* y, std::size_t n, float beta, cudaStream_t stream);
/// y[0:n] = alpha x + beta y.   y may alias x; beta == 0 never reads y.
[[nodiscard]] cudaError_t axpby(float alpha, const float* x, float beta, float* y, std::size_t n,
                                cudaStream_t stream);

// --- column_sums.cu -----------------------------------------------------------------------------

/// Device workspace bytes column_sums needs for a rows x cols input.
[[nodiscard]] std::size_t column_sums_workspace_bytes(std::int32_t rows, std::int32_t cols);
/// out[j] = Σ_i x[i, j] + beta out[j].   x: rows x cols, out: cols. Same fixed row chunks and
/// double-precision order as the CPU (so the results agree bit for bit); beta == 0 never reads
/// out. `workspace`: column_sums_workspace_bytes(rows, cols) bytes.
[[nodiscard]] cudaError_t column_sums(const float* x, std::int32_t rows, std::int32_t cols,
                                      float* out, float beta, void* workspace, cudaStream_t stream);

// --- bias_activation.cu -------------------------------------------------------------------------

/// The dropout of one bias_activation(_backward) call, derived on the host from its DropoutKey
/// exactly as the CPU does (src/device/cpu/cpu_elementwise.cpp). drop == false: no dropout
/// (the other fields are not used).
struct DropoutMask {
    bool drop;                 ///< rate > 0
    std::uint64_t stream_key;  ///< dropout_stream(seed, epoch, layer)
    std::uint32_t threshold;   ///< dropout_threshold(rate): kept iff counter_u32(...) >= threshold
    float scale;               ///< 1.0f / (1.0f - rate), in float
    float keep_rate;  ///< 1.0f - rate, in float (elu/leaky_relu backward: a = y·keep_rate)
};

/// y = dropout(act(x + bias)):  v = x[i, j] + bias[j] (bias may be null);  v = act(v) (`act` an
/// ActivationCode of activation_math.hpp, `slope` leaky_relu's);
/// y[i, j] = counter_u32(stream_key, row_ids[i], j) >= threshold ? v · scale : 0 if mask.drop,
/// else v.   x, y: rows x cols (y may alias x), row_ids: rows (may be null without dropout).
[[nodiscard]] cudaError_t bias_activation(const float* x, const float* bias, std::int32_t rows,
                                          std::int32_t cols, int act, float slope,
                                          const DropoutMask& mask, const std::int64_t* row_ids,
                                          float* y, cudaStream_t stream);
/// dx = g + beta dx, g the gradient through dropout and act (bias_activation.cu's first
/// comment): `saved` is y (relu, elu, leaky_relu) or x (gelu, with `bias`, which may be null),
/// not read without activation; row_ids read when mask.drop and act is not relu.
/// saved, dy, dx: rows x cols (dx may alias dy). beta == 0 never reads dx.
[[nodiscard]] cudaError_t bias_activation_backward(const float* saved, const float* bias,
                                                   const float* dy, std::int32_t rows,
                                                   std::int32_t cols, int act, float slope,
                                                   const DropoutMask& mask,
                                                   const std::int64_t* row_ids, float* dx,
                                                   float beta, cudaStream_t stream);

// --- attention.cu -------------------------------------------------------------------------------

/// The CSR structure of A (values unused) and the head count H of its edge values (nnz x H).
/// (global_ptr: const std::int32_t* on the device, bounds-checked in the emulation.)
struct EdgeCsr {
    global_ptr<const std::int32_t> row_ptr;
    global_ptr<const std::int32_t> col_idx;
    std::int32_t rows;
    std::int32_t heads;
};

/// Backend::edge_scores: e[k, h] = LeakyReLU(s_dst[i, h] + s_src[c_k, h]).
[[nodiscard]] cudaError_t edge_scores(const EdgeCsr& a, const float* s_dst, const float* s_src,
                                      float slope, float* e, cudaStream_t stream);
/// Backend::edge_softmax: per row and head (alpha may alias e).
[[nodiscard]] cudaError_t edge_softmax(const EdgeCsr& a, const float* e, float* alpha,
                                       cudaStream_t stream);
/// Backend::edge_softmax_backward (dz may alias dalpha).
[[nodiscard]] cudaError_t edge_softmax_backward(const EdgeCsr& a, const float* alpha,
                                                const float* dalpha, const float* e, float slope,
                                                float* dz, cudaStream_t stream);
/// Backend::edge_dropout with the mask of mask (row_ids: rows, col_ids: A's columns).
[[nodiscard]] cudaError_t edge_dropout(const EdgeCsr& a, const DropoutMask& mask,
                                       const std::int64_t* row_ids, const std::int64_t* col_ids,
                                       float* values, cudaStream_t stream);
/// Backend::edge_spmm (edge_ids may be null). y: rows x y_cols; beta == 0 never reads y.
[[nodiscard]] cudaError_t edge_spmm(const EdgeCsr& a, const std::int32_t* edge_ids,
                                    const float* alpha, const float* x, std::int32_t x_cols,
                                    float* y, std::int32_t y_cols, float beta, cudaStream_t stream);
/// Backend::edge_dots: out nnz x H.
[[nodiscard]] cudaError_t edge_dots(const EdgeCsr& a, const float* x, std::int32_t x_cols,
                                    const float* z, std::int32_t z_cols, float* out,
                                    cudaStream_t stream);

// --- scalar.cu ----------------------------------------------------------------------------------

/// y[0:n] = (shift + s[0]) x + beta y, s in device memory.   y may alias x; beta == 0 never
/// reads y.
[[nodiscard]] cudaError_t axpby_scalar(float shift, const float* s, const float* x, float beta,
                                       float* y, std::size_t n, cudaStream_t stream);
/// Device workspace bytes dot needs for n elements.
[[nodiscard]] std::size_t dot_workspace_bytes(std::size_t n);
/// out[0] = Σ_k a[k] b[k] + beta out[0]: double partials per block (fixed grid for n, tree
/// reduction in shared memory), added in block order; deterministic. beta == 0 never reads out.
[[nodiscard]] cudaError_t dot(const float* a, const float* b, std::size_t n, float* out, float beta,
                              void* workspace, cudaStream_t stream);

// --- norm.cu ------------------------------------------------------------------------------------

/// Per row i, one warp: μ, σ² (biased) in double, r = 1/sqrt(σ² + eps) (double, then float);
/// y[i, j] = (x[i, j] - μ) r gamma[j] + beta[j].   x, y: rows x cols (not overlapping).
[[nodiscard]] cudaError_t layer_norm(const float* x, std::int32_t rows, std::int32_t cols,
                                     const float* gamma, const float* beta, float eps, float* y,
                                     cudaStream_t stream);
/// Device workspace bytes layer_norm_backward needs.
[[nodiscard]] std::size_t layer_norm_backward_workspace_bytes(std::int32_t rows, std::int32_t cols);
/// Backend::layer_norm_backward: dgamma[j] += Σ_i dy x̂, dbeta[j] += Σ_i dy (double over the CPU's
/// row chunks, chunks in order; each skipped when null), then dx = r (g - mean g - x̂ mean(g x̂))
/// + beta dx, g = dy gamma (skipped when dx is null; dx may alias dy).
[[nodiscard]] cudaError_t layer_norm_backward(const float* x, const float* dy, std::int32_t rows,
                                              std::int32_t cols, const float* gamma, float eps,
                                              float* dx, float beta, float* dgamma, float* dbeta,
                                              void* workspace, cudaStream_t stream);
/// Device workspace bytes centered_column_sums needs.
[[nodiscard]] std::size_t centered_column_sums_workspace_bytes(std::int32_t rows,
                                                               std::int32_t cols);
/// out[j] = Σ_i d (w ? w : d) + beta out[j], d = (x - mean[j]) s[j], s = 1/sqrt(var + eps) in
/// double when var is given, else 1; double over the CPU's row chunks. w, var may be null.
[[nodiscard]] cudaError_t centered_column_sums(const float* x, std::int32_t rows, std::int32_t cols,
                                               const float* mean, const float* var, float eps,
                                               const float* w, float* out, float beta,
                                               void* workspace, cudaStream_t stream);
/// y = (x - mean[j]) r gamma[j] + beta[j], r = 1/sqrtf(var[j] + eps).   y may alias x.
[[nodiscard]] cudaError_t batch_norm(const float* x, std::int32_t rows, std::int32_t cols,
                                     const float* mean, const float* var, float eps,
                                     const float* gamma, const float* beta, float* y,
                                     cudaStream_t stream);
/// dx = gamma r (dy - m1 - x̂ m2) + beta dx, r = 1/sqrtf(var + eps), x̂ = (x - mean) r,
/// m1 = sum_dy/count, m2 = sum_dy_xhat/count (double, then float). dx may alias dy.
[[nodiscard]] cudaError_t batch_norm_backward(const float* x, const float* dy, std::int32_t rows,
                                              std::int32_t cols, const float* mean,
                                              const float* var, float eps, const float* gamma,
                                              const float* sum_dy, const float* sum_dy_xhat,
                                              double count, float* dx, float beta,
                                              cudaStream_t stream);

// --- spmm_rows.cu -------------------------------------------------------------------------------

/// y = A[first : first + count] x + beta y without cuSPARSE (a row range; row_ptr is A's whole
/// row-pointer array, its offsets absolute).   x: ? x f, y: count x f, not overlapping x. Terms
/// are added in entry order; beta == 0 never reads y.
[[nodiscard]] cudaError_t spmm_csr_rows(const std::int32_t* row_ptr, const std::int32_t* col_idx,
                                        const float* values, std::int32_t first, std::int32_t count,
                                        const float* x, std::int32_t f, float* y, float beta,
                                        cudaStream_t stream);
/// y[out_rows[r], :] += A[r, :] x for the rows r < rows of A (Backend::spmm_scatter_add).
/// x: ? x f, y: ? x f, not overlapping x; out_rows distinct (no atomics). Entry order.
[[nodiscard]] cudaError_t spmm_csr_scatter_add(const std::int32_t* row_ptr,
                                               const std::int32_t* col_idx, const float* values,
                                               const std::int32_t* out_rows, std::int32_t rows,
                                               const float* x, std::int32_t f, float* y,
                                               cudaStream_t stream);

// --- loss.cu ------------------------------------------------------------------------------------

/// What the loss kernels return (written to device memory, read by the host after a sync).
struct LossResult {
    double loss;              ///< Σ loss over selected rows
    long long count;          ///< selected rows
    long long correct;        ///< selected rows whose argmax (lowest index on ties) is the label
    long long first_bad_row;  ///< lowest selected row with label >= classes, or -1
};

/// Device workspace bytes softmax_cross_entropy needs for `rows` rows.
[[nodiscard]] std::size_t softmax_cross_entropy_workspace_bytes(std::int32_t rows);
/// Row i is selected iff mask[i] != 0 and labels[i] >= 0 (and labels[i] < classes, else it is
/// reported in first_bad_row). Per selected row, as the CPU: e_j = exp(l_ij - max) in float;
/// loss_i = log Σ_j e_j - (l_i,label - max) in double; dlogits[i, :] = e · float(grad_scale /
/// Σ e) - grad_scale · onehot, 0 for other rows (skipped when dlogits is null). Loss partials
/// over 256-row chunks are added in row order, like the CPU.
/// logits, dlogits: rows x classes; labels, mask: rows; *result: device memory.
[[nodiscard]] cudaError_t softmax_cross_entropy(const float* logits, std::int32_t rows,
                                                std::int32_t classes, const std::int32_t* labels,
                                                const std::uint8_t* mask, float grad_scale,
                                                float* dlogits, void* workspace, LossResult* result,
                                                cudaStream_t stream);

// --- adam.cu ------------------------------------------------------------------------------------

/// Scalars of one Adam step; correction1/2 = 1 - beta^step, computed on the host as on the CPU.
struct AdamScalars {
    float lr;
    float beta1;
    float beta2;
    float eps;
    float weight_decay;
    bool decoupled;
    float correction1;
    float correction2;
};

/// One Adam step on n parameters, formulas of src/device/cpu/cpu_adam.cpp.
[[nodiscard]] cudaError_t adam(float* params, const float* grads, float* m, float* v, std::size_t n,
                               const AdamScalars& s, cudaStream_t stream);

}  // namespace strata::cuda::kernels
