// Timing of cuSPARSE's CSR SpMM algorithms on y = A x (beta 0): the shared pieces of
// spmm_algorithms.hpp, and the benchmark entry points of spmm_tuning.hpp.
// A: rows x cols CSR (32-bit indices), x: cols x f, y: rows x f, row-major.
#include "src/device/cuda/spmm_tuning.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string_view>

#include "src/base/error.hpp"
#include "src/device/cuda/cuda_backend.hpp"
#include "src/device/cuda/cuda_check.hpp"
#include "src/device/cuda/spmm_algorithms.hpp"
#include "src/device/operand_checks.hpp"

namespace strata {
namespace cuda {

namespace {

constexpr std::array<SpmmAlgorithm, 4> algorithms = {{
    {CUSPARSE_SPMM_ALG_DEFAULT, "default"},
    {CUSPARSE_SPMM_CSR_ALG1, "alg1"},
    {CUSPARSE_SPMM_CSR_ALG2, "alg2"},
    {CUSPARSE_SPMM_CSR_ALG3, "alg3"},
}};

}  // namespace

bool refuses(cusparseStatus_t status) {
    return status == CUSPARSE_STATUS_NOT_SUPPORTED || status == CUSPARSE_STATUS_INVALID_VALUE;
}

std::span<const SpmmAlgorithm> spmm_algorithms() {
    return algorithms;
}

SpmmRequest requested_spmm_algorithms() {
    const char* value = std::getenv("STRATA_SPMM_ALGORITHM");
    if (value == nullptr || *value == '\0') {
        return {.algorithm = algorithms[0], .value = {}};  // cuSPARSE's default (no timing)
    }
    const std::string_view name(value);
    if (name == "auto") {
        return {.algorithm = std::nullopt, .value = value};
    }
    if (name == "reproducible") {
        return {.algorithm = algorithms[3], .value = value};  // CSR_ALG3: the same bits each run
    }
    for (const SpmmAlgorithm& algorithm : algorithms) {
        if (name == algorithm.name) {
            return {.algorithm = algorithm, .value = value};
        }
    }
    STRATA_FAIL("STRATA_SPMM_ALGORITHM: unknown cuSPARSE SpMM algorithm '", value,
                "' (default, alg1, alg2, alg3, reproducible, or auto to choose by measurement)");
}

DnMatDescr make_dense(index_t rows, index_t cols, const float* data) {
    cusparseDnMatDescr_t descr = nullptr;
    STRATA_CUDA_CHECK(cusparseCreateDnMat(&descr, rows, cols, cols, const_cast<float*>(data),
                                          CUDA_R_32F, CUSPARSE_ORDER_ROW));
    return DnMatDescr(descr);
}

void* SpmmWorkspace::reserve(std::size_t bytes) {
    if (bytes > bytes_) {
        memory_.reset();  // cudaFree waits for the SpMMs still using the old block
        bytes_ = 0;
        memory_ = make_device_memory(bytes);
        bytes_ = bytes;
    }
    return memory_.get();
}

cusparseStatus_t spmm_buffer_size(cusparseHandle_t handle, cusparseConstSpMatDescr_t a,
                                  cusparseConstDnMatDescr_t x, cusparseDnMatDescr_t y,
                                  cusparseSpMMAlg_t algorithm, std::size_t& bytes) {
    const float alpha = 1.0f;
    const float beta = 0.0f;
    return cusparseSpMM_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                   CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a, x, &beta, y,
                                   CUDA_R_32F, algorithm, &bytes);
}

cusparseStatus_t run_spmm(cusparseHandle_t handle, cusparseConstSpMatDescr_t a,
                          cusparseConstDnMatDescr_t x, float beta, cusparseDnMatDescr_t y,
                          cusparseSpMMAlg_t algorithm, void* workspace) {
    const float alpha = 1.0f;
    return cusparseSpMM(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                        &alpha, a, x, &beta, y, CUDA_R_32F, algorithm, workspace);
}

std::optional<std::vector<double>> time_spmm(cusparseHandle_t handle, cusparseConstSpMatDescr_t a,
                                             cusparseConstDnMatDescr_t x, cusparseDnMatDescr_t y,
                                             cusparseSpMMAlg_t algorithm, int repetitions,
                                             SpmmWorkspace& workspace) {
    STRATA_CHECK(repetitions >= 1, "SpMM timing: repetitions must be at least 1, got ",
                 repetitions);
    std::size_t bytes = 0;
    cusparseStatus_t status = spmm_buffer_size(handle, a, x, y, algorithm, bytes);
    if (refuses(status)) {
        return std::nullopt;
    }
    STRATA_CUDA_CHECK(status);
    void* buffer = workspace.reserve(bytes);
    status = run_spmm(handle, a, x, 0.0f, y, algorithm, buffer);  // warm-up
    if (refuses(status)) {
        return std::nullopt;
    }
    STRATA_CUDA_CHECK(status);
    cudaStream_t stream = nullptr;
    STRATA_CUDA_CHECK(cusparseGetStream(handle, &stream));
    std::vector<Event> marks;
    marks.push_back(make_timing_event());
    STRATA_CUDA_CHECK(cudaEventRecord(marks.back().get(), stream));
    for (int r = 0; r < repetitions; ++r) {
        STRATA_CUDA_CHECK(run_spmm(handle, a, x, 0.0f, y, algorithm, buffer));
        marks.push_back(make_timing_event());
        STRATA_CUDA_CHECK(cudaEventRecord(marks.back().get(), stream));
    }
    STRATA_CUDA_CHECK(cudaEventSynchronize(marks.back().get()));
    std::vector<double> ms;
    for (std::size_t r = 1; r < marks.size(); ++r) {
        float elapsed = 0.0f;
        STRATA_CUDA_CHECK(cudaEventElapsedTime(&elapsed, marks[r - 1].get(), marks[r].get()));
        ms.push_back(elapsed);
    }
    return ms;
}

double median(std::vector<double> values) {
    STRATA_CHECK(!values.empty(), "median of an empty list");
    const std::size_t mid = values.size() / 2;
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid),
                     values.end());
    const double upper = values[mid];
    if (values.size() % 2 == 1) {
        return upper;
    }
    const double lower =
        *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
    return 0.5 * (lower + upper);
}

}  // namespace cuda

namespace {

CudaBackend& cuda_backend(Backend& backend, const char* what) {
    auto* cuda = dynamic_cast<CudaBackend*>(&backend);
    STRATA_CHECK(cuda != nullptr, what, ": needs the CUDA backend");
    return *cuda;
}

}  // namespace

std::vector<SpmmAlgorithmTime> time_cusparse_spmm_algorithms(Backend& backend, const CsrMatrix& a,
                                                             ConstMatrixView x, MatrixView y,
                                                             int repetitions) {
    CudaBackend& device = cuda_backend(backend, "time_cusparse_spmm_algorithms");
    check_spmm(a, RowRange{0, a.rows()}, x, y, 0.0f);  // Backend::spmm's check
    STRATA_CHECK(a.nnz() > 0 && y.size() > 0, "time_cusparse_spmm_algorithms: nothing to time (A ",
                 a.rows(), " x ", a.cols(), ", nnz ", a.nnz(), ", f ", x.cols, ")");
    cusparseHandle_t raw_handle = nullptr;
    STRATA_CUDA_CHECK(cusparseCreate(&raw_handle));
    const cuda::SparseHandle handle(raw_handle);
    STRATA_CUDA_CHECK(cusparseSetStream(handle.get(), device.compute_stream()));
    cusparseConstSpMatDescr_t raw_matrix = nullptr;
    STRATA_CUDA_CHECK(cusparseCreateConstCsr(
        &raw_matrix, a.rows(), a.cols(), a.nnz(), a.row_ptr(), a.col_idx(), a.values(),
        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    const cuda::ConstSpMatDescr matrix(raw_matrix);
    const cuda::DnMatDescr dx = cuda::make_dense(x.rows, x.cols, x.data);
    const cuda::DnMatDescr dy = cuda::make_dense(y.rows, y.cols, y.data);
    cuda::SpmmWorkspace workspace;
    std::vector<SpmmAlgorithmTime> times;
    for (const cuda::SpmmAlgorithm& algorithm : cuda::spmm_algorithms()) {
        const auto ms = cuda::time_spmm(handle.get(), matrix.get(), dx.get(), dy.get(),
                                        algorithm.id, repetitions, workspace);
        times.push_back({.algorithm = algorithm.name,
                         .supported = ms.has_value(),
                         .median_ms = ms ? cuda::median(*ms) : 0.0});
    }
    return times;
}

std::int64_t cuda_memory_in_use_bytes(Backend& backend) {
    const CudaBackend& device = cuda_backend(backend, "cuda_memory_in_use_bytes");
    STRATA_CUDA_CHECK(cudaSetDevice(device.device()));
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    STRATA_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    return static_cast<std::int64_t>(total_bytes - free_bytes);
}

}  // namespace strata
