// STRATA_CUDA_CHECK: turns a CUDA runtime, cuSPARSE or cuBLAS status into a strata::Error that
// names the failing expression, file:line and the library's own message.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusparse.h>

namespace strata::cuda {

/// Throw strata::Error "<library> call failed: <expr>: <name>: <description>" located at
/// file:line. Called only for a failed status.
[[noreturn]] void throw_error(cudaError_t status, const char* expr, const char* file, int line);
[[noreturn]] void throw_error(cusparseStatus_t status, const char* expr, const char* file,
                              int line);
[[noreturn]] void throw_error(cublasStatus_t status, const char* expr, const char* file, int line);

/// Does nothing on success; otherwise throws strata::Error (see throw_error).
inline void check(cudaError_t status, const char* expr, const char* file, int line) {
    if (status != cudaSuccess) [[unlikely]] {
        throw_error(status, expr, file, line);
    }
}
inline void check(cusparseStatus_t status, const char* expr, const char* file, int line) {
    if (status != CUSPARSE_STATUS_SUCCESS) [[unlikely]] {
        throw_error(status, expr, file, line);
    }
}
inline void check(cublasStatus_t status, const char* expr, const char* file, int line) {
    if (status != CUBLAS_STATUS_SUCCESS) [[unlikely]] {
        throw_error(status, expr, file, line);
    }
}

/// True for the errors a destructor may meet at process exit (the runtime is being unloaded or
/// the driver is shutting down); they are ignored there.
[[nodiscard]] inline bool is_shutdown_error(cudaError_t status) {
    return status == cudaErrorCudartUnloading || status == cudaErrorContextIsDestroyed;
}

}  // namespace strata::cuda

/// Checks a cudaError_t, cusparseStatus_t or cublasStatus_t; after a kernel launch use
/// STRATA_CUDA_CHECK(cudaGetLastError()) (the launchers in cuda_kernels.hpp return it).
#define STRATA_CUDA_CHECK(expr) ::strata::cuda::check((expr), #expr, __FILE__, __LINE__)
