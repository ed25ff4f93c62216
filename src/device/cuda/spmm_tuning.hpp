// Benchmark access to the CUDA SpMM: every cuSPARSE CSR algorithm timed on y = A x, and the one
// the matrix's plan chose per width. Only in CUDA builds (bench_gpu_epoch); no CUDA header here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/device/backend.hpp"
#include "src/tensor/csr_matrix.hpp"

namespace strata {

struct SpmmAlgorithmTime {
    std::string algorithm;   ///< "default", "alg1", "alg2", "alg3" (STRATA_SPMM_ALGORITHM's values)
    bool supported = false;  ///< false: cuSPARSE answered CUSPARSE_STATUS_NOT_SUPPORTED
    double median_ms = 0.0;  ///< of the timed runs (0 when not supported)
};

/// Times raw cusparseSpMM with every CSR algorithm on y = A x (beta 0), `repetitions` timed runs
/// each after one warm-up; for benchmarks. `backend` must be the CUDA backend.
/// A: rows x cols, x: cols x f, y: rows x f (overwritten), all in `backend`'s memory.
/// Throws strata::Error on a CPU backend, mismatched shapes or repetitions < 1.
[[nodiscard]] std::vector<SpmmAlgorithmTime> time_cusparse_spmm_algorithms(
    Backend& backend, const CsrMatrix& a, ConstMatrixView x, MatrixView y, int repetitions);

/// The algorithm the plan of `a` chose for width f ("" if none yet).
[[nodiscard]] std::string chosen_spmm_algorithm(const CsrMatrix& a, index_t width);

/// Device memory in use on `backend`'s GPU (total - free, all processes), for reports.
/// `backend` must be the CUDA backend.
[[nodiscard]] std::int64_t cuda_memory_in_use_bytes(Backend& backend);

}  // namespace strata
