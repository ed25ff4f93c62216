// CudaBackend::spmm, y = A x + beta y, through cuSPARSE's generic SpMM (CSR, 32-bit indices,
// row-major dense matrices). The sparse descriptor, the chosen algorithm and the workspace are
// built once per matrix and cached in its plan slot (CudaSpmmPlan); dense descriptors are
// rebuilt only when the width f changes and otherwise re-pointed (cusparseDnMatSetValues).
#include <cstddef>
#include <memory>

#include "src/base/error.hpp"
#include "src/device/cuda/cuda_backend.hpp"
#include "src/device/cuda/cuda_check.hpp"
#include "src/device/cuda/cuda_kernels.hpp"
#include "src/device/operand_checks.hpp"
#include "src/tensor/csr_matrix.hpp"

namespace strata {
namespace {

/// Deterministic CSR algorithm suited to row-major dense matrices; CUSPARSE_SPMM_ALG_DEFAULT if
/// this cuSPARSE does not support it for a given shape.
constexpr cusparseSpMMAlg_t preferred_algorithm = CUSPARSE_SPMM_CSR_ALG2;

cuda::DnMatDescr make_dense(index_t rows, index_t cols, const float* data) {
    cusparseDnMatDescr_t descr = nullptr;
    // cuSPARSE never writes through the descriptor of x; the non-const kind can be re-pointed.
    STRATA_CUDA_CHECK(cusparseCreateDnMat(&descr, rows, cols, cols, const_cast<float*>(data),
                                          CUDA_R_32F, CUSPARSE_ORDER_ROW));
    return cuda::DnMatDescr(descr);
}

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
        if (x.cols != width_) {
            x_ = make_dense(x.rows, x.cols, x.data);
            y_ = make_dense(y.rows, y.cols, y.data);
            width_ = x.cols;
            choose_algorithm(handle, preferred_algorithm);
        } else {
            STRATA_CUDA_CHECK(cusparseDnMatSetValues(x_.get(), const_cast<float*>(x.data)));
            STRATA_CUDA_CHECK(cusparseDnMatSetValues(y_.get(), y.data));
        }
        cusparseStatus_t status = multiply(handle, beta);
        if (status == CUSPARSE_STATUS_NOT_SUPPORTED && algorithm_ != CUSPARSE_SPMM_ALG_DEFAULT) {
            // Accepted by bufferSize but refused here: fall back to the default for this width.
            choose_algorithm(handle, CUSPARSE_SPMM_ALG_DEFAULT);
            status = multiply(handle, beta);
        }
        STRATA_CUDA_CHECK(status);
    }

private:
    cusparseStatus_t multiply(cusparseHandle_t handle, float beta) {
        const float alpha = 1.0f;
        return cusparseSpMM(handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                            CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, matrix_.get(), x_.get(),
                            &beta, y_.get(), CUDA_R_32F, algorithm_, workspace_.get());
    }

    /// `wanted` if cuSPARSE supports it for these shapes, else the default; grows the workspace
    /// to what the algorithm needs.
    void choose_algorithm(cusparseHandle_t handle, cusparseSpMMAlg_t wanted) {
        const float alpha = 1.0f;
        const float beta = 0.0f;
        std::size_t bytes = 0;
        algorithm_ = wanted;
        cusparseStatus_t status = cusparseSpMM_bufferSize(
            handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha,
            matrix_.get(), x_.get(), &beta, y_.get(), CUDA_R_32F, algorithm_, &bytes);
        if (status == CUSPARSE_STATUS_NOT_SUPPORTED && algorithm_ != CUSPARSE_SPMM_ALG_DEFAULT) {
            algorithm_ = CUSPARSE_SPMM_ALG_DEFAULT;
            status = cusparseSpMM_bufferSize(
                handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha,
                matrix_.get(), x_.get(), &beta, y_.get(), CUDA_R_32F, algorithm_, &bytes);
        }
        STRATA_CUDA_CHECK(status);
        if (bytes > workspace_bytes_) {
            workspace_.reset();  // cudaFree waits for SpMMs still using the old block
            workspace_bytes_ = 0;
            workspace_ = cuda::make_device_memory(bytes);
            workspace_bytes_ = bytes;
        }
    }

    const CudaBackend* owner_;
    const float* values_;
    index_t rows_;
    index_t cols_;
    index_t nnz_;
    cuda::ConstSpMatDescr matrix_;
    cuda::DnMatDescr x_;
    cuda::DnMatDescr y_;
    index_t width_ = -1;  ///< f of the dense descriptors; -1 before the first call
    cusparseSpMMAlg_t algorithm_ = preferred_algorithm;
    cuda::DeviceMemory workspace_;
    std::size_t workspace_bytes_ = 0;
};

}  // namespace

void CudaBackend::spmm(const CsrMatrix& a, ConstMatrixView x, MatrixView y, float beta) {
    STRATA_CHECK(x.rows == a.cols(), "spmm: A is ", a.rows(), " x ", a.cols(), " but x has ",
                 x.rows, " rows");
    STRATA_CHECK(y.rows == a.rows() && y.cols == x.cols, "spmm: y is ", y.rows, " x ", y.cols,
                 " but A x is ", a.rows(), " x ", x.cols);
    STRATA_CHECK(!overlaps(x.data, x.size(), y.data, y.size()), "spmm: y overlaps x");
    if (y.size() == 0) {
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

}  // namespace strata
