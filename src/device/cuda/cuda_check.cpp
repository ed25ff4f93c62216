// Messages of STRATA_CUDA_CHECK: each library's error name and description.
#include "src/device/cuda/cuda_check.hpp"

#include "src/base/error.hpp"

namespace strata::cuda {

void throw_error(cudaError_t status, const char* expr, const char* file, int line) {
    (void)cudaGetLastError();  // clear a non-sticky error so that later calls do not report it
    int device = -1;
    (void)cudaGetDevice(&device);
    detail::throw_error(detail::concat("CUDA call failed: ", expr, ": ", cudaGetErrorName(status),
                                       ": ", cudaGetErrorString(status), " (device ", device, ")"),
                        file, line);
}

void throw_error(cusparseStatus_t status, const char* expr, const char* file, int line) {
    detail::throw_error(
        detail::concat("cuSPARSE call failed: ", expr, ": ", cusparseGetErrorName(status), ": ",
                       cusparseGetErrorString(status)),
        file, line);
}

void throw_error(cublasStatus_t status, const char* expr, const char* file, int line) {
    detail::throw_error(
        detail::concat("cuBLAS call failed: ", expr, ": ", cublasGetStatusName(status), ": ",
                       cublasGetStatusString(status)),
        file, line);
}

}  // namespace strata::cuda
