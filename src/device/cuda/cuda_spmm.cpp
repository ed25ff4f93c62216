// CudaBackend::spmm_impl, y = A[rows] x + beta y (A: m x n CSR, 32-bit indices; x: n x f, y:
// rows.count x f, row-major). All rows go through cuSPARSE's generic SpMM; the matrix's plan slot
// holds a CudaSpmmPlan: the sparse descriptor, a grow-only workspace and one entry per width f
// (dense descriptors of x and y, re-pointed with cusparseDnMatSetValues, and the algorithm).
// A new width runs the algorithm STRATA_SPMM_ALGORITHM fixes (cuSPARSE's default when unset;
// "reproducible": CSR_ALG3, the same bits in every run), or with "auto" times every CSR
// algorithm cuSPARSE accepts (spmm_algorithms.hpp) into a scratch output and keeps the fastest.
//
// A smaller row range (chunked execution, rare) runs the plain kernel of spmm_rows.cu instead.
// Why not a cuSPARSE descriptor of the slice (rows.count rows, row offsets a.row_ptr() +
// rows.first, col_idx / values unchanged)? Its offsets would stay absolute, so the first one is
// not 0, and cuSPARSE documents neither that this is allowed nor how the slice's nnz (which it
// takes as a parameter and may use to split the work, e.g. merge-path CSR_ALG3) relates to the
// offsets; shifting col_idx / values by row_ptr[first] instead would need rebased offsets (a copy
// of the slice's row pointers minus row_ptr[first]) and a synchronous download of two offsets
// for nnz. The kernel reads A's own row pointers at first + r, needs neither, and is exactly the
// CPU's formula (cpu::spmm_csr with row_ptr + first).
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/device/cuda/cuda_backend.hpp"
#include "src/device/cuda/cuda_check.hpp"
#include "src/device/cuda/cuda_kernels.hpp"
#include "src/device/cuda/spmm_algorithms.hpp"
#include "src/device/cuda/spmm_tuning.hpp"
#include "src/tensor/csr_matrix.hpp"

namespace strata {
namespace {

/// Warm-up + this many timed runs per algorithm when a width is first seen.
constexpr int timed_runs = 2;

/// Everything cuSPARSE needs to run y = A x + beta y for one matrix on one backend.
class CudaSpmmPlan final : public SpmmPlan {
public:
    CudaSpmmPlan(const CudaBackend& owner, const CsrMatrix& a)
        : owner_(&owner), values_(a.values()), rows_(a.rows()), cols_(a.cols()), nnz_(a.nnz()) {
        cusparseConstSpMatDescr_t descr = nullptr;
        STRATA_CUDA_CHECK(cusparseCreateConstCsr(
            &descr, a.rows(), a.cols(), a.nnz(), a.row_ptr(), a.col_idx(), a.values(),
            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
        matrix_ = cuda::ConstSpMatDescr(descr);
    }

    /// Built by `owner` for this very matrix (same arrays and shape)?
    [[nodiscard]] bool fits(const CudaBackend& owner, const CsrMatrix& a) const {
        return owner_ == &owner && values_ == a.values() && rows_ == a.rows() &&
               cols_ == a.cols() && nnz_ == a.nnz();
    }

    /// y = A x + beta y on the handle's stream. x: cols x f, y: rows x f, f > 0.
    void run(cusparseHandle_t handle, ConstMatrixView x, MatrixView y, float beta) {
        const Entry& entry = entry_for(handle, x);
        STRATA_CUDA_CHECK(cusparseDnMatSetValues(entry.x.get(), const_cast<float*>(x.data)));
        STRATA_CUDA_CHECK(cusparseDnMatSetValues(entry.y.get(), y.data));
        const cusparseStatus_t status =
            cuda::run_spmm(handle, matrix_.get(), entry.x.get(), beta, entry.y.get(),
                           entry.algorithm.id, workspace_.reserve(0));
        if (cuda::refuses(status) && entry.requested) {
            refuse(entry);
        }
        STRATA_CUDA_CHECK(status);
    }

    /// The algorithm of width f ("" if that width has not run yet).
    [[nodiscard]] std::string algorithm(index_t width) const {
        for (const Entry& entry : entries_) {
            if (entry.width == width) {
                return entry.algorithm.name;
            }
        }
        return "";
    }

private:
    struct Entry {
        index_t width = 0;
        cuda::DnMatDescr x;
        cuda::DnMatDescr y;
        cuda::SpmmAlgorithm algorithm{};
        /// STRATA_SPMM_ALGORITHM's value when it fixed the algorithm ("" when unset); none when
        /// the algorithm was measured ("auto").
        std::optional<std::string> requested;
    };

    /// The entry of width x.cols, created (and its algorithm chosen) on first use. Its y
    /// descriptor still points at the scratch output until run() re-points it.
    const Entry& entry_for(cusparseHandle_t handle, ConstMatrixView x) {
        for (const Entry& entry : entries_) {
            if (entry.width == x.cols) {
                return entry;
            }
        }
        Entry entry;
        entry.width = x.cols;
        entry.x = cuda::make_dense(x.rows, x.cols, x.data);
        // Algorithms are tried on a scratch output, never on y: beta != 0 reads y.
        const cuda::DeviceMemory scratch = cuda::make_device_memory(
            static_cast<std::size_t>(rows_) * static_cast<std::size_t>(x.cols) * sizeof(float));
        entry.y = cuda::make_dense(rows_, x.cols, static_cast<const float*>(scratch.get()));
        const cuda::SpmmRequest request = cuda::requested_spmm_algorithms();
        if (request.algorithm) {
            entry.algorithm = *request.algorithm;
            entry.requested = request.value;
            std::size_t bytes = 0;
            const cusparseStatus_t status = cuda::spmm_buffer_size(
                handle, matrix_.get(), entry.x.get(), entry.y.get(), entry.algorithm.id, bytes);
            if (cuda::refuses(status)) {
                refuse(entry);
            }
            STRATA_CUDA_CHECK(status);
            workspace_.reserve(bytes);
        } else {
            entry.algorithm = fastest(handle, entry);
        }
        entries_.push_back(std::move(entry));
        return entries_.back();  // `scratch` is freed on return (cudaFree waits for the trials)
    }

    /// The fastest algorithm cuSPARSE accepts for this width (median of the timed runs; ties
    /// go to the earlier in spmm_algorithms()). Leaves the workspace large enough for it.
    cuda::SpmmAlgorithm fastest(cusparseHandle_t handle, const Entry& entry) {
        std::optional<cuda::SpmmAlgorithm> best;
        double best_ms = 0.0;
        for (const cuda::SpmmAlgorithm& algorithm : cuda::spmm_algorithms()) {
            const auto ms = cuda::time_spmm(handle, matrix_.get(), entry.x.get(), entry.y.get(),
                                            algorithm.id, timed_runs, workspace_);
            if (ms && (!best || cuda::median(*ms) < best_ms)) {
                best = algorithm;
                best_ms = cuda::median(*ms);
            }
        }
        STRATA_CHECK(best.has_value(), "spmm: cuSPARSE supports none of its CSR algorithms for A ",
                     rows_, " x ", cols_, " (nnz ", nnz_, "), f ", entry.width);
        return *best;
    }

    /// cuSPARSE refused the algorithm the entry's request fixed.
    [[noreturn]] void refuse(const Entry& entry) const {
        STRATA_FAIL(
            "STRATA_SPMM_ALGORITHM=", entry.requested->empty() ? "(unset)" : *entry.requested,
            ": cuSPARSE does not support its SpMM algorithm ", entry.algorithm.name, " for A ",
            rows_, " x ", cols_, " (nnz ", nnz_, "), f ", entry.width,
            " (STRATA_SPMM_ALGORITHM=auto chooses by measurement)");
    }

    const CudaBackend* owner_;
    const float* values_;
    index_t rows_;
    index_t cols_;
    index_t nnz_;
    cuda::ConstSpMatDescr matrix_;
    std::vector<Entry> entries_;     ///< one per width seen; a GCN uses a handful
    cuda::SpmmWorkspace workspace_;  ///< at least every entry's need (grow-only)
};

}  // namespace

// The plain kernel of spmm_rows.cu (entry order, no cuSPARSE); row ids are not checked.
void CudaBackend::spmm_scatter_add_impl(const CsrMatrix& a, std::span<const index_t> rows,
                                        ConstMatrixView x, MatrixView y) {
    STRATA_CUDA_CHECK(cuda::kernels::spmm_csr_scatter_add(a.row_ptr(), a.col_idx(), a.values(),
                                                          rows.data(), a.rows(), x.data, x.cols,
                                                          y.data, compute_.get()));
}

// All rows: cuSPARSE SpMM (CSR, 32-bit indices, row-major dense). Descriptors, the algorithm and
// the workspace are created on the first call and cached in the matrix's plan slot. A smaller row
// range (chunked execution) runs a plain kernel instead (see the top comment).
void CudaBackend::spmm_impl(const CsrMatrix& a, RowRange rows, ConstMatrixView x, MatrixView y,
                            float beta) {
    if (y.size() == 0) {
        return;
    }
    if (rows.first != 0 || rows.count != a.rows()) {  // a chunk: no plan (see the top comment)
        STRATA_CUDA_CHECK(cuda::kernels::spmm_csr_rows(a.row_ptr(), a.col_idx(), a.values(),
                                                       rows.first, rows.count, x.data, x.cols,
                                                       y.data, beta, compute_.get()));
        return;
    }
    if (a.nnz() == 0) {  // nothing to multiply: y = beta y without cuSPARSE
        if (beta == 0.0f) {
            STRATA_CUDA_CHECK(cuda::kernels::fill(y.data, y.size(), 0.0f, compute_.get()));
        } else if (beta != 1.0f) {
            STRATA_CUDA_CHECK(cuda::kernels::scale(y.data, y.size(), beta, compute_.get()));
        }
        return;
    }
    if (beta == 0.0f) {
        // Contract: beta == 0 never reads y, which may hold NaN. cuSPARSE does not document
        // that it skips C when beta is 0, so clear it first (a write of y, small next to SpMM).
        STRATA_CUDA_CHECK(cudaMemsetAsync(y.data, 0, y.size() * sizeof(float), compute_.get()));
    }
    auto* plan = dynamic_cast<CudaSpmmPlan*>(a.plan());
    if (plan == nullptr || !plan->fits(*this, a)) {
        auto fresh = std::make_unique<CudaSpmmPlan>(*this, a);
        plan = fresh.get();
        a.set_plan(std::move(fresh));
    }
    plan->run(sparse_.get(), x, y, beta);
}

std::string chosen_spmm_algorithm(const CsrMatrix& a, index_t width) {
    const auto* plan = dynamic_cast<const CudaSpmmPlan*>(a.plan());
    return plan == nullptr ? "" : plan->algorithm(width);
}

}  // namespace strata
