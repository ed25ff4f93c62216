// The CSR algorithms of cusparseSpMM that the SpMM plan chooses among (the fastest measured, or
// the one STRATA_SPMM_ALGORITHM forces) and the timing of one of them on y = A x (beta 0).
// Shared by CudaSpmmPlan (cuda_spmm.cpp) and the benchmark entry points (spmm_tuning.cpp).
// A: rows x cols CSR (32-bit), x: cols x f, y: rows x f, both row-major.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <cusparse.h>

#include "src/base/types.hpp"
#include "src/device/cuda/cuda_handles.hpp"

namespace strata::cuda {

struct SpmmAlgorithm {
    cusparseSpMMAlg_t id;
    const char* name;  ///< "default", "alg1", "alg2", "alg3": STRATA_SPMM_ALGORITHM's values
};

/// CUSPARSE_SPMM_ALG_DEFAULT, CSR_ALG1, CSR_ALG2, CSR_ALG3, in this order.
[[nodiscard]] std::span<const SpmmAlgorithm> spmm_algorithms();

/// Whether cuSPARSE refused an algorithm for these operands (NOT_SUPPORTED, or INVALID_VALUE,
/// which some versions return for an algorithm/layout mismatch) rather than failed.
[[nodiscard]] bool refuses(cusparseStatus_t status);

/// What STRATA_SPMM_ALGORITHM asks of a new width.
struct SpmmRequest {
    /// What runs at every width ("auto": nothing fixed, every algorithm is timed).
    std::optional<SpmmAlgorithm> algorithm;
    std::string value;  ///< STRATA_SPMM_ALGORITHM as given ("" when unset)
};

/// Unset or empty: cuSPARSE's ALG_DEFAULT (its own choice, the fastest or as fast as the
/// fastest on an H200: 19.3 ms at f = 256 on 2.4M vertices, like CSR_ALG2). It is not bit-wise
/// reproducible: on an H200 with CUDA 13.0 repeated runs on the same operands differed in the
/// last bits, as did CSR_ALG1 and CSR_ALG2 (scripts/gpu-check, 2026-12-04). "reproducible":
/// CSR_ALG3, the one that gave the same bits in every run there (about 2.1x slower at f = 256).
/// Another name ("default", "alg1", "alg2", "alg3"): that algorithm. "auto": time every
/// algorithm per width and keep the fastest (two runs or two ranks may pick differently). No
/// choice is timed except by "auto", so every rank takes the same algorithm for the same
/// request. Throws strata::Error naming the value and the accepted ones when unknown.
[[nodiscard]] SpmmRequest requested_spmm_algorithms();

/// A row-major FP32 dense descriptor over `data` (rows x cols). cuSPARSE never writes through
/// the descriptor of x, so a const x may be wrapped too (and re-pointed later).
[[nodiscard]] DnMatDescr make_dense(index_t rows, index_t cols, const float* data);

/// A grow-only device scratch block. Growing frees the old block first (cudaFree waits for the
/// work still using it).
class SpmmWorkspace {
public:
    /// At least `bytes` of device memory (null while nothing was needed).
    void* reserve(std::size_t bytes);

private:
    DeviceMemory memory_;
    std::size_t bytes_ = 0;
};

/// cusparseSpMM_bufferSize for y = A x + beta y (no transposes, FP32); cuSPARSE's status.
[[nodiscard]] cusparseStatus_t spmm_buffer_size(cusparseHandle_t handle,
                                                cusparseConstSpMatDescr_t a,
                                                cusparseConstDnMatDescr_t x, cusparseDnMatDescr_t y,
                                                cusparseSpMMAlg_t algorithm, std::size_t& bytes);
/// cusparseSpMM: y = A x + beta y on the handle's stream; cuSPARSE's status.
[[nodiscard]] cusparseStatus_t run_spmm(cusparseHandle_t handle, cusparseConstSpMatDescr_t a,
                                        cusparseConstDnMatDescr_t x, float beta,
                                        cusparseDnMatDescr_t y, cusparseSpMMAlg_t algorithm,
                                        void* workspace);

/// Times y = A x (beta 0; y is overwritten) with `algorithm` on the handle's stream: one
/// warm-up run, then `repetitions` runs, each between two timing events. Returns each run's
/// milliseconds, or nullopt when cuSPARSE refuses the algorithm (refuses(), from bufferSize
/// or the warm-up run). Grows `workspace` to the algorithm's need and waits for the stream.
/// Throws strata::Error on any other failure.
[[nodiscard]] std::optional<std::vector<double>> time_spmm(
    cusparseHandle_t handle, cusparseConstSpMatDescr_t a, cusparseConstDnMatDescr_t x,
    cusparseDnMatDescr_t y, cusparseSpMMAlg_t algorithm, int repetitions, SpmmWorkspace& workspace);

/// The median of a non-empty list (the mean of the middle two for an even count).
[[nodiscard]] double median(std::vector<double> values);

}  // namespace strata::cuda
