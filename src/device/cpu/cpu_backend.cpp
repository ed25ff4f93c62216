// CpuBackend: host memory (aligned, huge pages for big blocks), the operations' implementations
// (dispatch to the plain kernels; the arguments were checked by Backend's entry points, the row
// ids and labels they point to are checked here, where they are read), and the cached SpMM row
// partition.
#include "src/device/cpu/cpu_backend.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <omp.h>

#include "src/base/error.hpp"
#include "src/device/cpu/cpu_kernels.hpp"
#include "src/device/operand_checks.hpp"
#include "src/tensor/csr_matrix.hpp"

#include <sys/mman.h>

namespace strata {
namespace {

constexpr std::size_t cache_line_bytes = 64;
constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;
constexpr std::size_t parallel_copy_bytes = std::size_t{4} << 20;

std::size_t round_up(std::size_t n, std::size_t multiple) {
    return (n + multiple - 1) / multiple * multiple;
}

/// The row partition of one CSR matrix for one thread count (plan once, execute many).
class CpuSpmmPlan final : public SpmmPlan {
public:
    CpuSpmmPlan(std::vector<index_t> bounds, int parts, index_t nnz)
        : bounds_(std::move(bounds)), parts_(parts), nnz_(nnz) {}
    [[nodiscard]] bool fits(int parts, index_t nnz) const { return parts == parts_ && nnz == nnz_; }
    [[nodiscard]] const index_t* bounds() const { return bounds_.data(); }

private:
    std::vector<index_t> bounds_;
    int parts_;
    index_t nnz_;
};

/// Large copies use every thread: one core alone does not reach the memory bandwidth.
void parallel_memcpy(void* dst, const void* src, std::size_t bytes, int threads) {
    if (bytes < parallel_copy_bytes || threads <= 1) {
        std::memcpy(dst, src, bytes);
        return;
    }
    const auto chunks = static_cast<std::int64_t>((bytes + huge_page_bytes - 1) / huge_page_bytes);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::int64_t i = 0; i < chunks; ++i) {
        const std::size_t begin = static_cast<std::size_t>(i) * huge_page_bytes;
        const std::size_t count = std::min(huge_page_bytes, bytes - begin);
        std::memcpy(static_cast<char*>(dst) + begin, static_cast<const char*>(src) + begin, count);
    }
}

/// The row ids of a gather or scatter, read here in host memory before the kernel uses them (the
/// CUDA kernels flag a bad id instead): each in [0, limit).
void row_ids_below(const char* op, std::span<const index_t> rows, index_t limit) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
        STRATA_CHECK(rows[i] >= 0 && rows[i] < limit, op, ": row id ", rows[i], " at index ", i,
                     " out of range [0, ", limit, ")");
    }
}

}  // namespace

CpuBackend::CpuBackend(int threads) : threads_(threads > 0 ? threads : omp_get_max_threads()) {
    cpu::set_blas_threads(threads_);
}

CpuBackend::~CpuBackend() {
#ifndef NDEBUG
    if (const std::int64_t live = live_allocations(); live != 0) {
        std::fprintf(stderr,
                     "strata: CpuBackend destroyed with %lld live allocations (a Buffer outlived "
                     "its backend)\n",
                     static_cast<long long>(live));
    }
#endif
}

std::string CpuBackend::describe() const {
    return "cpu, " + std::to_string(threads_) + (threads_ == 1 ? " thread" : " threads");
}

void* CpuBackend::allocate(std::size_t bytes) {
    if (bytes == 0) {
        return nullptr;
    }
    const bool huge = bytes >= huge_page_bytes;
    const std::size_t alignment = huge ? huge_page_bytes : cache_line_bytes;
    const std::size_t size = round_up(bytes, alignment);  // aligned_alloc needs a multiple
    void* ptr = std::aligned_alloc(alignment, size);
    STRATA_CHECK(ptr != nullptr, "CpuBackend::allocate: out of memory allocating ", bytes,
                 " bytes");
    if (huge) {
        // Random row gathers touch a new page almost every access; 2 MiB pages keep them out of
        // the TLB-miss path (THP is in madvise mode). Failure only costs speed.
        (void)madvise(ptr, size, MADV_HUGEPAGE);
    }
    try {
        ledger_.add(ptr, bytes);
    } catch (...) {
        std::free(ptr);
        throw;
    }
    return ptr;
}

void CpuBackend::deallocate(void* ptr) noexcept {
    if (ptr == nullptr) {
        return;
    }
    ledger_.remove(ptr);
    std::free(ptr);
}

void* CpuBackend::allocate_host(std::size_t bytes) {
    if (bytes == 0) {
        return nullptr;
    }
    void* ptr = std::aligned_alloc(cache_line_bytes, round_up(bytes, cache_line_bytes));
    STRATA_CHECK(ptr != nullptr, "CpuBackend::allocate_host: out of memory allocating ", bytes,
                 " bytes");
    return ptr;
}

void CpuBackend::deallocate_host(void* ptr) noexcept {
    std::free(ptr);
}

MemoryStats CpuBackend::memory_stats() const {
    return ledger_.stats();
}

void CpuBackend::upload(void* device_dst, const void* host_src, std::size_t bytes) {
    parallel_memcpy(device_dst, host_src, bytes, threads_);
}

void CpuBackend::download(void* host_dst, const void* device_src, std::size_t bytes) {
    parallel_memcpy(host_dst, device_src, bytes, threads_);
}

void CpuBackend::copy(void* device_dst, const void* device_src, std::size_t bytes) {
    parallel_memcpy(device_dst, device_src, bytes, threads_);
}

const index_t* CpuBackend::cached_bounds(const CsrMatrix& a) const {
    const auto* plan = dynamic_cast<const CpuSpmmPlan*>(a.plan());
    if (plan == nullptr || !plan->fits(threads_, a.nnz())) {
        auto fresh = std::make_unique<CpuSpmmPlan>(
            cpu::balanced_row_bounds(a.row_ptr(), a.rows(), threads_), threads_, a.nnz());
        plan = fresh.get();
        a.set_plan(std::move(fresh));
    }
    return plan->bounds();
}

// All rows use a row partition cached in the matrix's plan slot (recomputed if threads differ); a
// smaller row range is partitioned on the fly.
void CpuBackend::spmm_impl(const CsrMatrix& a, RowRange rows, ConstMatrixView x, MatrixView y,
                           float beta) {
    if (y.size() == 0) {
        return;
    }
    if (rows.count != a.rows()) {  // a chunk: partition its rows now (O(threads log rows))
        const index_t* row_ptr = a.row_ptr() + rows.first;
        const std::vector<index_t> bounds = cpu::balanced_row_bounds(row_ptr, rows.count, threads_);
        cpu::spmm_csr(row_ptr, a.col_idx(), a.values(), rows.count, x.data, x.cols, y.data, beta,
                      bounds.data(), threads_);
        return;
    }
    cpu::spmm_csr(a.row_ptr(), a.col_idx(), a.values(), a.rows(), x.data, x.cols, y.data, beta,
                  cached_bounds(a), threads_);
}

// Threads split A's rows as spmm does (the same cached partition); row ids must be distinct (no
// two threads write one row).
void CpuBackend::spmm_scatter_add_impl(const CsrMatrix& a, std::span<const index_t> rows,
                                       ConstMatrixView x, MatrixView y) {
    if (a.rows() == 0 || x.cols == 0) {
        return;
    }
    cpu::spmm_csr(a.row_ptr(), a.col_idx(), a.values(), a.rows(), x.data, x.cols, y.data, 1.0f,
                  cached_bounds(a), threads_, rows.data());
}

void CpuBackend::spmm_scatter_add_packed_impl(const CsrMatrix& a, std::span<const index_t> rows,
                                              ConstPackedMatrix x, MatrixView y) {
    if (a.rows() == 0 || x.cols == 0) {
        return;
    }
    cpu::spmm_csr_packed(a.row_ptr(), a.col_idx(), a.values(), a.rows(), x, y.data, rows.data(),
                         cached_bounds(a), threads_);
}

void CpuBackend::gemm_impl(ConstMatrixView a, Transpose ta, ConstMatrixView b, Transpose tb,
                           MatrixView c, float alpha, float beta) {
    const auto [m, n, k, trans_a, trans_b] = gemm_shape(a, ta, b, tb);
    cpu::gemm(a.data, a.cols, trans_a, b.data, b.cols, trans_b, c.data, m, n, k, alpha, beta,
              threads_);
}

void CpuBackend::gather_rows_impl(ConstMatrixView x, std::span<const index_t> rows,
                                  MatrixView out) {
    row_ids_below("gather_rows", rows, x.rows);
    cpu::gather_rows(x.data, x.cols, rows.data(), rows.size(), out.data, threads_);
}

void CpuBackend::scatter_add_rows_impl(ConstMatrixView x, std::span<const index_t> rows,
                                       MatrixView out) {
    row_ids_below("scatter_add_rows", rows, out.rows);
    cpu::scatter_add_rows(x.data, x.cols, rows.data(), rows.size(), out.data, threads_);
}

void CpuBackend::scatter_add_packed_rows_impl(ConstPackedMatrix x, std::span<const index_t> rows,
                                              MatrixView out) {
    row_ids_below("scatter_add_packed_rows", rows, out.rows);
    cpu::scatter_add_packed_rows(x, rows.data(), rows.size(), out.data, threads_);
}

void CpuBackend::scatter_rows_impl(ConstMatrixView x, std::span<const index_t> rows,
                                   MatrixView out) {
    row_ids_below("scatter_rows", rows, out.rows);
    cpu::scatter_rows(x.data, x.cols, rows.data(), rows.size(), out.data, threads_);
}

void CpuBackend::fill_impl(MatrixView y, float value) {
    cpu::fill(y.data, y.size(), value, threads_);
}

void CpuBackend::axpby_impl(float alpha, ConstMatrixView x, float beta, MatrixView y) {
    cpu::axpby(alpha, x.data, beta, y.data, x.size(), threads_);
}

void CpuBackend::column_sums_impl(ConstMatrixView x, std::span<float> out, float beta) {
    cpu::column_sums(x.data, x.rows, x.cols, out.data(), beta, threads_);
}

void CpuBackend::bias_activation_impl(ConstMatrixView x, std::span<const float> bias,
                                      ActivationSpec act, const DropoutKey& key,
                                      std::span<const global_id> row_ids, MatrixView y) {
    cpu::bias_activation(x.data, bias.empty() ? nullptr : bias.data(), x.rows, x.cols, act, key,
                         row_ids.data(), y.data, threads_);
}

void CpuBackend::bias_activation_backward_impl(ConstMatrixView saved, std::span<const float> bias,
                                               ConstMatrixView dy, ActivationSpec act,
                                               const DropoutKey& key,
                                               std::span<const global_id> row_ids, MatrixView dx,
                                               float beta) {
    cpu::bias_activation_backward(saved.data, bias.empty() ? nullptr : bias.data(), dy.data,
                                  dy.rows, dy.cols, act, key, row_ids.data(), dx.data, beta,
                                  threads_);
}

void CpuBackend::axpby_scalar_impl(float shift, std::span<const float> s, ConstMatrixView x,
                                   float beta, MatrixView y) {
    cpu::axpby_scalar(shift, s.data(), x.data, beta, y.data, x.size(), threads_);
}

void CpuBackend::dot_impl(ConstMatrixView a, ConstMatrixView b, std::span<float> out, float beta) {
    const auto sum = static_cast<float>(cpu::dot(a.data, b.data, a.size(), threads_));
    out[0] = beta == 0.0f ? sum : sum + beta * out[0];
}

void CpuBackend::layer_norm_impl(ConstMatrixView x, std::span<const float> gamma,
                                 std::span<const float> beta, float eps, MatrixView y) {
    cpu::layer_norm(x.data, x.rows, x.cols, gamma.data(), beta.data(), eps, y.data, threads_);
}

void CpuBackend::layer_norm_backward_impl(ConstMatrixView x, ConstMatrixView dy,
                                          std::span<const float> gamma, float eps, MatrixView dx,
                                          float beta, std::span<float> dgamma,
                                          std::span<float> dbeta) {
    cpu::layer_norm_backward(x.data, dy.data, x.rows, x.cols, gamma.data(), eps, dx.data, beta,
                             dgamma.empty() ? nullptr : dgamma.data(),
                             dbeta.empty() ? nullptr : dbeta.data(), threads_);
}

void CpuBackend::centered_column_sums_impl(ConstMatrixView x, std::span<const float> mean,
                                           std::span<const float> var, float eps, ConstMatrixView w,
                                           std::span<float> out, float beta) {
    cpu::centered_column_sums(x.data, x.rows, x.cols, mean.data(),
                              var.empty() ? nullptr : var.data(), eps, w.data, out.data(), beta,
                              threads_);
}

void CpuBackend::batch_norm_impl(ConstMatrixView x, std::span<const float> mean,
                                 std::span<const float> var, float eps,
                                 std::span<const float> gamma, std::span<const float> beta,
                                 MatrixView y) {
    cpu::batch_norm(x.data, x.rows, x.cols, mean.data(), var.data(), eps, gamma.data(), beta.data(),
                    y.data, threads_);
}

void CpuBackend::batch_norm_backward_impl(ConstMatrixView x, ConstMatrixView dy,
                                          std::span<const float> mean, std::span<const float> var,
                                          float eps, std::span<const float> gamma,
                                          std::span<const float> sum_dy,
                                          std::span<const float> sum_dy_xhat, double count,
                                          MatrixView dx, float beta) {
    cpu::batch_norm_backward(x.data, dy.data, x.rows, x.cols, mean.data(), var.data(), eps,
                             gamma.data(), sum_dy.data(), sum_dy_xhat.data(), count, dx.data, beta,
                             threads_);
}

namespace {

cpu::EdgeStructure structure(const CsrMatrix& a, index_t heads) {
    return {a.row_ptr(), a.col_idx(), a.rows(), heads};
}

}  // namespace

void CpuBackend::edge_scores_impl(const CsrMatrix& a, ConstMatrixView s_dst, ConstMatrixView s_src,
                                  float negative_slope, MatrixView e) {
    cpu::edge_scores(structure(a, e.cols), s_dst.data, s_src.data, negative_slope, e.data,
                     threads_);
}

void CpuBackend::edge_softmax_impl(const CsrMatrix& a, ConstMatrixView e, MatrixView alpha) {
    cpu::edge_softmax(structure(a, e.cols), e.data, alpha.data, threads_);
}

void CpuBackend::edge_softmax_backward_impl(const CsrMatrix& a, ConstMatrixView alpha,
                                            ConstMatrixView dalpha, ConstMatrixView e,
                                            float negative_slope, MatrixView dz) {
    cpu::edge_softmax_backward(structure(a, alpha.cols), alpha.data, dalpha.data, e.data,
                               negative_slope, dz.data, threads_);
}

void CpuBackend::edge_dropout_impl(const CsrMatrix& a, const DropoutKey& key,
                                   std::span<const global_id> row_ids,
                                   std::span<const global_id> col_ids, MatrixView values) {
    cpu::edge_dropout(structure(a, values.cols), key, row_ids.data(), col_ids.data(), values.data,
                      threads_);
}

void CpuBackend::edge_spmm_impl(const CsrMatrix& a, std::span<const index_t> edge_ids,
                                ConstMatrixView alpha, ConstMatrixView x, MatrixView y,
                                float beta) {
    cpu::edge_spmm(structure(a, alpha.cols), edge_ids.empty() ? nullptr : edge_ids.data(),
                   alpha.data, x.data, x.cols, y.data, y.cols, beta, threads_);
}

void CpuBackend::edge_dots_impl(const CsrMatrix& a, ConstMatrixView x, ConstMatrixView z,
                                MatrixView out) {
    cpu::edge_dots(structure(a, out.cols), x.data, x.cols, z.data, z.cols, out.data, threads_);
}

LossSums CpuBackend::softmax_cross_entropy_impl(ConstMatrixView logits,
                                                std::span<const index_t> labels,
                                                std::span<const std::uint8_t> mask,
                                                float grad_scale, MatrixView dlogits) {
    const auto rows = static_cast<std::size_t>(logits.rows);
    for (std::size_t i = 0; i < rows; ++i) {
        STRATA_CHECK(mask[i] == 0 || labels[i] < logits.cols, "softmax_cross_entropy: label ",
                     labels[i], " of row ", i, " is not below the ", logits.cols, " classes");
    }
    return cpu::softmax_cross_entropy(logits.data, logits.rows, logits.cols, labels.data(),
                                      mask.data(), grad_scale, dlogits.data, threads_);
}

// L2 mode adds wd·p to the gradient; decoupled mode (AdamW) first does p -= lr·wd·p. Bias
// corrections 1 - beta^step are applied to both moments.
void CpuBackend::adam_impl(std::span<float> params, std::span<const float> grads,
                           std::span<float> m, std::span<float> v, const AdamStep& step) {
    cpu::adam(params.data(), grads.data(), m.data(), v.data(), params.size(), step, threads_);
}

std::unique_ptr<Backend> make_cpu_backend(int threads) {
    return std::make_unique<CpuBackend>(threads);
}

}  // namespace strata
