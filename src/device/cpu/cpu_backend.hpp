// CpuBackend: the OpenMP + OpenBLAS reference backend. Memory is plain host memory; this class
// checks shapes and dispatches to the plain kernels of cpu_kernels.hpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "src/device/allocation_ledger.hpp"
#include "src/device/backend.hpp"

namespace strata {

/// Synchronous backend on host memory. Every operation runs with `threads()` OpenMP threads,
/// and its result does not depend on that number (fixed summation orders).
class CpuBackend final : public Backend {
public:
    /// `threads` <= 0 keeps the OpenMP default (omp_get_max_threads()). Also sets OpenBLAS's
    /// thread count (a process-wide setting, re-applied by gemm if another backend changed it).
    explicit CpuBackend(int threads = 0);
    CpuBackend(const CpuBackend&) = delete;
    CpuBackend& operator=(const CpuBackend&) = delete;
    /// Debug builds report live allocations on stderr (every Buffer must die first); never throws.
    ~CpuBackend() override;

    [[nodiscard]] DeviceKind kind() const override { return DeviceKind::cpu; }
    [[nodiscard]] std::string describe() const override;
    [[nodiscard]] int threads() const { return threads_; }
    /// Allocations not yet deallocated (allocate(0) returns null and is not counted).
    [[nodiscard]] std::int64_t live_allocations() const { return memory_stats().allocations; }
    [[nodiscard]] MemoryStats memory_stats() const override;

    /// 64-byte aligned; blocks of 2 MiB or more are 2 MiB aligned and marked MADV_HUGEPAGE.
    /// Throws strata::Error when out of memory.
    [[nodiscard]] void* allocate(std::size_t bytes) override;
    void deallocate(void* ptr) noexcept override;
    /// Host memory is all there is: 64-byte aligned, not counted in memory_stats().
    [[nodiscard]] void* allocate_host(std::size_t bytes) override;
    void deallocate_host(void* ptr) noexcept override;
    void upload(void* device_dst, const void* host_src, std::size_t bytes) override;
    void download(void* host_dst, const void* device_src, std::size_t bytes) override;
    void copy(void* device_dst, const void* device_src, std::size_t bytes) override;
    void synchronize() override {}

    /// Uses a row partition cached in the matrix's plan slot (recomputed if threads differ) for
    /// all rows; a smaller row range is partitioned on the fly.
    using Backend::spmm;
    void spmm(const CsrMatrix& a, RowRange rows, ConstMatrixView x, MatrixView y,
              float beta) override;
    /// Threads split A's rows as spmm does (the same cached partition); row ids must be
    /// distinct (no two threads write one row).
    void spmm_scatter_add(const CsrMatrix& a, std::span<const index_t> rows, ConstMatrixView x,
                          MatrixView y) override;
    void gemm(ConstMatrixView a, Transpose ta, ConstMatrixView b, Transpose tb, MatrixView c,
              float alpha, float beta) override;
    void gather_rows(ConstMatrixView x, std::span<const index_t> rows, MatrixView out) override;
    void scatter_add_rows(ConstMatrixView x, std::span<const index_t> rows,
                          MatrixView out) override;
    void scatter_rows(ConstMatrixView x, std::span<const index_t> rows, MatrixView out) override;

    void fill(MatrixView y, float value) override;
    void axpby(float alpha, ConstMatrixView x, float beta, MatrixView y) override;
    void column_sums(ConstMatrixView x, std::span<float> out, float beta) override;
    /// Throws strata::Error unless 0 <= rate < 1 (and a leaky_relu slope >= 0).
    void bias_activation(ConstMatrixView x, std::span<const float> bias, ActivationSpec act,
                         const DropoutKey& key, std::span<const global_id> row_ids,
                         MatrixView y) override;
    void bias_activation_backward(ConstMatrixView saved, std::span<const float> bias,
                                  ConstMatrixView dy, ActivationSpec act, const DropoutKey& key,
                                  std::span<const global_id> row_ids, MatrixView dx,
                                  float beta) override;
    void axpby_scalar(float shift, std::span<const float> s, ConstMatrixView x, float beta,
                      MatrixView y) override;
    void dot(ConstMatrixView a, ConstMatrixView b, std::span<float> out, float beta) override;

    void layer_norm(ConstMatrixView x, std::span<const float> gamma, std::span<const float> beta,
                    float eps, MatrixView y) override;
    void layer_norm_backward(ConstMatrixView x, ConstMatrixView dy, std::span<const float> gamma,
                             float eps, MatrixView dx, float beta, std::span<float> dgamma,
                             std::span<float> dbeta) override;
    void centered_column_sums(ConstMatrixView x, std::span<const float> mean,
                              std::span<const float> var, float eps, ConstMatrixView w,
                              std::span<float> out, float beta) override;
    void batch_norm(ConstMatrixView x, std::span<const float> mean, std::span<const float> var,
                    float eps, std::span<const float> gamma, std::span<const float> beta,
                    MatrixView y) override;
    void batch_norm_backward(ConstMatrixView x, ConstMatrixView dy, std::span<const float> mean,
                             std::span<const float> var, float eps, std::span<const float> gamma,
                             std::span<const float> sum_dy, std::span<const float> sum_dy_xhat,
                             double count, MatrixView dx, float beta) override;

    void edge_scores(const CsrMatrix& a, ConstMatrixView s_dst, ConstMatrixView s_src,
                     float negative_slope, MatrixView e) override;
    void edge_softmax(const CsrMatrix& a, ConstMatrixView e, MatrixView alpha) override;
    void edge_softmax_backward(const CsrMatrix& a, ConstMatrixView alpha, ConstMatrixView dalpha,
                               ConstMatrixView e, float negative_slope, MatrixView dz) override;
    void edge_dropout(const CsrMatrix& a, const DropoutKey& key, std::span<const global_id> row_ids,
                      std::span<const global_id> col_ids, MatrixView values) override;
    void edge_spmm(const CsrMatrix& a, std::span<const index_t> edge_ids, ConstMatrixView alpha,
                   ConstMatrixView x, MatrixView y, float beta) override;
    void edge_dots(const CsrMatrix& a, ConstMatrixView x, ConstMatrixView z,
                   MatrixView out) override;

    /// Throws strata::Error if a selected label is >= classes.
    LossSums softmax_cross_entropy(ConstMatrixView logits, std::span<const index_t> labels,
                                   std::span<const std::uint8_t> mask, float grad_scale,
                                   MatrixView dlogits) override;
    /// L2 mode adds wd·p to the gradient; decoupled mode (AdamW) first does p -= lr·wd·p.
    /// Bias corrections 1 - beta^step are applied to both moments.
    void adam(std::span<float> params, std::span<const float> grads, std::span<float> m,
              std::span<float> v, const AdamStep& step) override;

private:
    /// The row partition of all A's rows over threads_, cached in A's plan slot.
    [[nodiscard]] const index_t* cached_bounds(const CsrMatrix& a) const;

    int threads_;
    AllocationLedger ledger_;
};

}  // namespace strata
