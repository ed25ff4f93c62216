// Backend: the small set of operations every layer is built from (CPU reference; CUDA).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "src/base/types.hpp"
#include "src/tensor/matrix_view.hpp"

namespace strata {

class CsrMatrix;

enum class DeviceKind { cpu, cuda };

/// Which dropout mask: the mask bit of (row, col) is a pure function of
/// (seed, epoch, layer, global id of the row, col), so it does not depend on thread count,
/// the number of ranks or the backend (src/device/counter_rng.hpp).
struct DropoutKey {
    std::uint64_t seed = 0;
    std::uint64_t epoch = 0;
    std::uint64_t layer = 0;
    float rate = 0.0f;  ///< probability of dropping; kept entries are scaled by 1/(1-rate)
};

/// The activation of a fused bias_activation call (v = x + bias):
/// relu max(v, 0); elu v > 0 ? v : exp(v) - 1 (alpha 1); leaky_relu v > 0 ? v : slope·v;
/// gelu v·Φ(v) = v/2·(1 + erf(v/√2)) (the exact form, PyTorch's default).
enum class Activation { none, relu, elu, leaky_relu, gelu };

/// An activation and its parameter; converts from a bare Activation.
struct ActivationSpec {
    Activation kind = Activation::none;
    float negative_slope = 0.2f;  ///< leaky_relu only; must be >= 0

    constexpr ActivationSpec() = default;
    // NOLINTNEXTLINE(google-explicit-constructor): Activation::relu reads as a spec
    constexpr ActivationSpec(Activation k, float slope = 0.2f) : kind(k), negative_slope(slope) {}
};

/// Bytes allocated through a backend (Backend::allocate), now and at most so far.
struct MemoryStats {
    std::int64_t bytes_in_use = 0;
    std::int64_t peak_bytes = 0;
    std::int64_t allocations = 0;  ///< live allocations
};

/// Sums produced by the loss kernel for the rows selected by a mask.
struct LossSums {
    double loss = 0.0;         ///< Σ -log softmax(logits)[label] over selected rows
    std::int64_t count = 0;    ///< number of selected rows (mask != 0 and label >= 0)
    std::int64_t correct = 0;  ///< selected rows whose argmax equals the label
};

/// One Adam update (Kingma & Ba) with optional weight decay.
struct AdamStep {
    float lr = 0.01f;
    float beta1 = 0.9f;
    float beta2 = 0.999f;
    float eps = 1e-8f;
    float weight_decay = 0.0f;
    bool decoupled = false;  ///< false: L2 (g += wd·p, as Kipf & Welling); true: AdamW
    std::int64_t step = 1;   ///< 1-based step count, for the bias corrections
};

/// Row-major float32 throughout. Every pointer and span passed to an operation lives in this
/// backend's memory. `y` is overwritten unless a beta is given. Operations are ordered on the
/// backend's compute stream (synchronous on the CPU).
class Backend {
public:
    virtual ~Backend() = default;
    [[nodiscard]] virtual DeviceKind kind() const = 0;
    /// For reports: "cpu, 2 threads", "cuda:0, NVIDIA H200, 139 GiB".
    [[nodiscard]] virtual std::string describe() const = 0;

    // --- memory ---------------------------------------------------------------------------
    [[nodiscard]] virtual void* allocate(std::size_t bytes) = 0;
    virtual void deallocate(void* ptr) noexcept = 0;
    /// Host memory for staging transfers (e.g. MPI over a GPU backend): page-locked on CUDA so
    /// copies run at full bus speed, ordinary aligned memory on the CPU. Null for 0 bytes.
    [[nodiscard]] virtual void* allocate_host(std::size_t bytes) = 0;
    virtual void deallocate_host(void* ptr) noexcept = 0;
    virtual void upload(void* device_dst, const void* host_src, std::size_t bytes) = 0;
    virtual void download(void* host_dst, const void* device_src, std::size_t bytes) = 0;
    virtual void copy(void* device_dst, const void* device_src, std::size_t bytes) = 0;
    /// Waits for all queued work (no-op on the CPU).
    virtual void synchronize() = 0;
    /// What allocate() handed out and did not get back (allocate_host is not counted).
    [[nodiscard]] virtual MemoryStats memory_stats() const = 0;

    // --- linear algebra ---------------------------------------------------------------------
    /// y = A[rows] x + beta y: rows [rows.first, rows.first + rows.count) of A times x.
    /// A: m x n (CSR), x: n x f, y: rows.count x f. beta == 0 never reads y.
    virtual void spmm(const CsrMatrix& a, RowRange rows, ConstMatrixView x, MatrixView y,
                      float beta) = 0;
    /// y = A x + beta y over all rows of A.
    void spmm(const CsrMatrix& a, ConstMatrixView x, MatrixView y, float beta);
    /// y[rows[r], :] += Σ_k A[r, c_k] x[c_k, :] for every row r of A: a compressed-row block
    /// (HostDcsr, src/tensor/host_dcsr.hpp) whose row r is row rows[r] of a taller matrix; other
    /// rows of y are untouched. Terms are added to y[rows[r]] in entry order, as spmm with
    /// beta 1 on the expanded matrix (the same floats on the CPU).
    /// A: m x n (CSR), rows: m distinct ids in [0, y.rows), x: n x f, y: ? x f.
    virtual void spmm_scatter_add(const CsrMatrix& a, std::span<const index_t> rows,
                                  ConstMatrixView x, MatrixView y) = 0;
    /// c = alpha op(a) op(b) + beta c.
    virtual void gemm(ConstMatrixView a, Transpose ta, ConstMatrixView b, Transpose tb,
                      MatrixView c, float alpha, float beta) = 0;
    /// out[i, :] = x[rows[i], :].   out: rows.size() x f.
    virtual void gather_rows(ConstMatrixView x, std::span<const index_t> rows, MatrixView out) = 0;
    /// out[rows[i], :] += x[i, :].   x: rows.size() x f. Repeated row ids are allowed, but
    /// the CUDA backend sums them with float atomics in an unspecified order: callers whose
    /// result must be reproducible pass distinct ids per call (the sums then run in call order,
    /// bit for bit the CPU's).
    virtual void scatter_add_rows(ConstMatrixView x, std::span<const index_t> rows,
                                  MatrixView out) = 0;
    /// out[rows[i], :] = x[i, :].   x: rows.size() x f. Row ids must be distinct (a repeated id
    /// leaves one of its rows, unspecified which).
    virtual void scatter_rows(ConstMatrixView x, std::span<const index_t> rows, MatrixView out) = 0;

    // --- elementwise ------------------------------------------------------------------------
    /// y[:] = value.
    virtual void fill(MatrixView y, float value) = 0;
    /// y = alpha x + beta y.   x, y: same shape; beta == 0 never reads y; y may alias x.
    virtual void axpby(float alpha, ConstMatrixView x, float beta, MatrixView y) = 0;
    /// out[j] = Σ_i x[i, j] + beta out[j].   (bias gradient)
    virtual void column_sums(ConstMatrixView x, std::span<float> out, float beta) = 0;
    /// Fused y = dropout(act(x + bias)): bias (x.cols entries) is skipped when empty; dropout
    /// (mask from `key` and row_ids[i], the global id of row i, kept entries scaled by
    /// 1/(1-rate)) is skipped when key.rate == 0. x, y: rows x cols; y may alias x.
    virtual void bias_activation(ConstMatrixView x, std::span<const float> bias, ActivationSpec act,
                                 const DropoutKey& key, std::span<const global_id> row_ids,
                                 MatrixView y) = 0;
    /// The mirror: dx = dy ⊙ ∂y/∂(x + bias) + beta dx. `saved` is what the derivative is read
    /// from: the forward output y for relu, elu and leaky_relu (relu: y > 0 says both "kept" and
    /// "positive", no mask is regenerated; elu, leaky_relu: the mask is regenerated from key and
    /// row_ids and the derivative taken from the pre-dropout value y·(1-rate)); the forward
    /// input x for gelu (not invertible from y), with `bias` the forward bias (empty: none);
    /// not read without activation (a dropout mask is regenerated). `bias` is read only for
    /// gelu. saved, dy, dx: rows x cols; dx may alias dy; beta == 0 never reads dx.
    virtual void bias_activation_backward(ConstMatrixView saved, std::span<const float> bias,
                                          ConstMatrixView dy, ActivationSpec act,
                                          const DropoutKey& key, std::span<const global_id> row_ids,
                                          MatrixView dx, float beta) = 0;
    /// y = (shift + s[0]) x + beta y: a scale held in backend memory (a learnable scalar such as
    /// GIN's ε, read without a host round trip). s: 1 entry; y may alias x; beta == 0 never
    /// reads y.
    virtual void axpby_scalar(float shift, std::span<const float> s, ConstMatrixView x, float beta,
                              MatrixView y) = 0;
    /// out[0] = Σ_ij a[i, j] b[i, j] + beta out[0] (summed in double in a fixed order).
    /// a, b: same shape; out: 1 entry; beta == 0 never reads out.
    virtual void dot(ConstMatrixView a, ConstMatrixView b, std::span<float> out, float beta) = 0;

    // --- normalisation ----------------------------------------------------------------------
    /// Layer norm of each row: y[i, :] = (x[i, :] - μ_i) r_i ⊙ gamma + beta, μ_i the row mean,
    /// σ²_i the biased row variance, r_i = 1/sqrt(σ²_i + eps). x, y: rows x cols (y may not
    /// overlap x); gamma, beta: cols.
    virtual void layer_norm(ConstMatrixView x, std::span<const float> gamma,
                            std::span<const float> beta, float eps, MatrixView y) = 0;
    /// Its backward from x (row statistics recomputed): with x̂ = (x - μ_i) r_i, g = dy ⊙ gamma,
    /// dx[i, :] = r_i (g - mean_j g - x̂ mean_j(g ⊙ x̂)) + beta dx (skipped when dx.data is null;
    /// beta == 0 never reads dx; dx may alias dy); dgamma[j] += Σ_i dy[i, j] x̂[i, j],
    /// dbeta[j] += Σ_i dy[i, j] (each skipped when empty).
    virtual void layer_norm_backward(ConstMatrixView x, ConstMatrixView dy,
                                     std::span<const float> gamma, float eps, MatrixView dx,
                                     float beta, std::span<float> dgamma,
                                     std::span<float> dbeta) = 0;
    /// Column sums around a centre, for batch statistics (double, fixed row chunks):
    /// out[j] = Σ_i d[i, j] · (w.data ? w[i, j] : d[i, j]) + beta out[j] with
    /// d = (x[i, j] - mean[j]) s[j], s[j] = 1/sqrt(var[j] + eps) when var is given, else 1.
    /// (Σ (x - μ)² with neither w nor var; Σ dy ⊙ x̂ with both.) x, w: rows x cols; mean, var,
    /// out: cols; beta == 0 never reads out.
    virtual void centered_column_sums(ConstMatrixView x, std::span<const float> mean,
                                      std::span<const float> var, float eps, ConstMatrixView w,
                                      std::span<float> out, float beta) = 0;
    /// Batch norm with given statistics: y = (x - mean[j]) / sqrt(var[j] + eps) · gamma[j] +
    /// beta[j]. x, y: rows x cols (y may alias x); mean, var, gamma, beta: cols.
    virtual void batch_norm(ConstMatrixView x, std::span<const float> mean,
                            std::span<const float> var, float eps, std::span<const float> gamma,
                            std::span<const float> beta, MatrixView y) = 0;
    /// Its input gradient for batch statistics over `count` rows in all (all ranks):
    /// dx = gamma[j] r[j] (dy - sum_dy[j]/count - x̂ sum_dy_xhat[j]/count) + beta dx,
    /// r = 1/sqrt(var + eps), x̂ = (x - mean) r; sum_dy, sum_dy_xhat the global column sums of dy
    /// and dy ⊙ x̂. x, dy, dx: rows x cols (dx may alias dy); beta == 0 never reads dx.
    virtual void batch_norm_backward(ConstMatrixView x, ConstMatrixView dy,
                                     std::span<const float> mean, std::span<const float> var,
                                     float eps, std::span<const float> gamma,
                                     std::span<const float> sum_dy,
                                     std::span<const float> sum_dy_xhat, double count,
                                     MatrixView dx, float beta) = 0;

    // --- graph attention: edge-valued sparse operations (GAT) ------------------------------------
    // A: m x n CSR whose structure is used and whose values are never read; entry k of row i has
    // column c_k. Edge values are nnz x H matrices (one column per attention head), row k for
    // entry k. Formulas per entry in src/device/edge_rows.hpp (shared with the CUDA kernels).

    /// SDDMM-style scores: e[k, h] = LeakyReLU(s_dst[i, h] + s_src[c_k, h]) with slope
    /// `negative_slope` below 0.   s_dst: m x H, s_src: n x H, e: nnz x H.
    virtual void edge_scores(const CsrMatrix& a, ConstMatrixView s_dst, ConstMatrixView s_src,
                             float negative_slope, MatrixView e) = 0;
    /// Segment (row) softmax per head: alpha[k, h] = exp(e[k, h] - m_ih) / Σ_{k' in row i}
    /// exp(e[k', h] - m_ih), m_ih the row's maximum.   e, alpha: nnz x H; alpha may alias e.
    virtual void edge_softmax(const CsrMatrix& a, ConstMatrixView e, MatrixView alpha) = 0;
    /// Its backward through the LeakyReLU that made the scores: dz[k, h] = alpha[k, h]
    /// (dalpha[k, h] - Σ_{k' in row i} alpha[k', h] dalpha[k', h]) · (e[k, h] > 0 ? 1 :
    /// negative_slope) (slope 1: the softmax's backward alone). alpha, dalpha, e, dz: nnz x H;
    /// dz may alias dalpha.
    virtual void edge_softmax_backward(const CsrMatrix& a, ConstMatrixView alpha,
                                       ConstMatrixView dalpha, ConstMatrixView e,
                                       float negative_slope, MatrixView dz) = 0;
    /// Inverted dropout on edge values, in place: v[k, h] = keep ? v[k, h] / (1 - rate) : 0,
    /// keep iff counter_u32(dropout_stream(seed, epoch, layer), row_ids[i], col_ids[c_k] · H + h)
    /// >= dropout_threshold(rate): a function of the edge's global ids, not of ranks or threads.
    /// No-op at rate 0.   row_ids: m, col_ids: n, values: nnz x H.
    virtual void edge_dropout(const CsrMatrix& a, const DropoutKey& key,
                              std::span<const global_id> row_ids,
                              std::span<const global_id> col_ids, MatrixView values) = 0;
    /// Attention-weighted SpMM, per head: w_kh = alpha[edge_ids[k], h] (alpha[k, h] when
    /// edge_ids is empty: edge_ids lets a transposed structure use the values of A's entries).
    /// With H heads of F features (x.cols and y.cols decide):
    ///   x.cols == y.cols == H·F:  y[i, hF + f] = Σ_k w_kh x[c_k, hF + f]        (heads concat)
    ///   x.cols == H·F, y.cols == F: y[i, f] = 1/H Σ_h Σ_k w_kh x[c_k, hF + f]    (heads mean)
    ///   x.cols == F, y.cols == H·F: y[i, hF + f] = 1/H Σ_k w_kh x[c_k, f]    (mean's transpose)
    /// plus beta y (beta == 0 never reads y).   alpha: ? x H, x: n x ?, y: m x ?.
    virtual void edge_spmm(const CsrMatrix& a, std::span<const index_t> edge_ids,
                           ConstMatrixView alpha, ConstMatrixView x, MatrixView y, float beta) = 0;
    /// SDDMM-style dot products per head: out[k, h] = Σ_f x[i, hF + f] z[c_k, hF + f] when
    /// x.cols == z.cols == H·F; with x.cols == F (a heads-mean output's gradient):
    /// out[k, h] = 1/H Σ_f x[i, f] z[c_k, hF + f].   x: m x ?, z: n x H·F, out: nnz x H.
    virtual void edge_dots(const CsrMatrix& a, ConstMatrixView x, ConstMatrixView z,
                           MatrixView out) = 0;

    // --- loss and optimizer -------------------------------------------------------------------
    /// Softmax cross-entropy over rows with mask[i] != 0 and labels[i] >= 0:
    /// returns the sums; if dlogits.data is not null, writes
    /// dlogits[i, :] = grad_scale · (softmax(logits[i, :]) - onehot(labels[i])) for selected rows
    /// and 0 for the others.   logits, dlogits: rows x classes; labels, mask: rows.
    virtual LossSums softmax_cross_entropy(ConstMatrixView logits, std::span<const index_t> labels,
                                           std::span<const std::uint8_t> mask, float grad_scale,
                                           MatrixView dlogits) = 0;
    /// One Adam step over a flat parameter range: m, v are its moment buffers.
    virtual void adam(std::span<float> params, std::span<const float> grads, std::span<float> m,
                      std::span<float> v, const AdamStep& step) = 0;
};

/// The OpenMP + OpenBLAS backend. `threads` <= 0 keeps the OpenMP default.
[[nodiscard]] std::unique_ptr<Backend> make_cpu_backend(int threads = 0);
/// The CUDA backend on `device`; throws strata::Error when built without CUDA.
[[nodiscard]] std::unique_ptr<Backend> make_cuda_backend(int device);
/// CUDA devices this process can use: 0 when built without CUDA, without a driver or without a
/// device (never throws).
[[nodiscard]] int cuda_device_count();
/// The PCI bus id of CUDA device `device` ("0000:3b:00.0"): the same physical GPU gives the same
/// id in every process, whatever CUDA_VISIBLE_DEVICES says. Empty without CUDA or on error.
[[nodiscard]] std::string cuda_device_pci_id(int device);

}  // namespace strata
