// CPU SpMM, y = A x + beta y: a static nnz-balanced row partition, one thread per part, a
// vectorized loop over features and software prefetch of the x rows of upcoming edges.
#include <cstddef>

#include <omp.h>

#include "src/device/cpu/cpu_kernels.hpp"
#include "src/device/cpu/simd_clones.hpp"
#include "src/device/cpu/spmm_row.hpp"

namespace strata::cpu {
namespace {

inline void prefetch_row(const float* row, index_t f) {
    prefetch_bytes(row, static_cast<std::size_t>(f) * sizeof(float));
}

/// Rows [first, last) of y = A x + beta y.  y: rows x f; prefetches stop at entry `nnz_end`.
/// With y_rows, row r of the product goes to row y_rows[r] of y. Cloned for AVX2
/// (simd_clones.hpp: 8 floats per multiply-add; no FMA, so the same bits as the baseline).
/// Widths above 8 not a multiple of 8: spmm_row.
STRATA_SIMD_CLONES void spmm_rows(const index_t* row_ptr, const index_t* col_idx,
                                  const float* values, const float* x, index_t f, float* y,
                                  float beta, index_t first, index_t last, index_t nnz_end,
                                  const index_t* y_rows) {
    const auto width = static_cast<std::size_t>(f);
    const bool ragged = f > 8 && f % 8 != 0;
    for (index_t r = first; r < last; ++r) {
        const index_t out = y_rows == nullptr ? r : y_rows[r];
        float* __restrict yr = y + static_cast<std::size_t>(out) * width;
        index_t k = row_ptr[r];
        const index_t end = row_ptr[r + 1];
        if (beta == 0.0f && k == end) {  // never read y: it may hold garbage (NaN) on this path
            for (index_t j = 0; j < f; ++j) {
                yr[j] = 0.0f;
            }
            continue;
        }
        if (ragged) {
            spmm_row(col_idx, values, Fp32Rows{x, width}, f, yr, beta, k, end, nnz_end);
            continue;
        }
        if (beta == 0.0f) {
            if (k + prefetch_edges < nnz_end) {
                prefetch_row(x + static_cast<std::size_t>(col_idx[k + prefetch_edges]) * width, f);
            }
            const float v = values[k];
            const float* __restrict xr = x + static_cast<std::size_t>(col_idx[k]) * width;
#pragma omp simd
            for (index_t j = 0; j < f; ++j) {
                yr[j] = v * xr[j];
            }
            ++k;
        } else if (beta != 1.0f) {
#pragma omp simd
            for (index_t j = 0; j < f; ++j) {
                yr[j] *= beta;
            }
        }
        for (; k < end; ++k) {
            if (k + prefetch_edges < nnz_end) {
                prefetch_row(x + static_cast<std::size_t>(col_idx[k + prefetch_edges]) * width, f);
            }
            const float v = values[k];
            const float* __restrict xr = x + static_cast<std::size_t>(col_idx[k]) * width;
#pragma omp simd
            for (index_t j = 0; j < f; ++j) {
                yr[j] += v * xr[j];
            }
        }
    }
}

}  // namespace

std::vector<index_t> balanced_row_bounds(const index_t* row_ptr, index_t rows, int parts) {
    // work(r) = row_ptr[r] - row_ptr[0] + r is strictly increasing: part p starts at the first
    // row whose prefix work reaches p/parts of the total. (row_ptr may point into a larger
    // matrix's row pointers: a row range.)
    const std::int64_t base = row_ptr[0];
    const std::int64_t total = static_cast<std::int64_t>(row_ptr[rows]) - base + rows;
    std::vector<index_t> bounds(static_cast<std::size_t>(parts) + 1, rows);
    bounds[0] = 0;
    for (int p = 1; p < parts; ++p) {
        const std::int64_t target = total * p / parts;
        index_t lo = bounds[static_cast<std::size_t>(p) - 1];
        index_t hi = rows;
        while (lo < hi) {
            const index_t mid = lo + (hi - lo) / 2;
            if (static_cast<std::int64_t>(row_ptr[mid]) - base + mid < target) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        bounds[static_cast<std::size_t>(p)] = lo;
    }
    return bounds;
}

void spmm_csr(const index_t* row_ptr, const index_t* col_idx, const float* values, index_t rows,
              const float* x, index_t f, float* y, float beta, const index_t* bounds, int parts,
              const index_t* y_rows) {
    if (rows == 0 || f == 0) {
        return;
    }
    const index_t nnz_end = row_ptr[rows];
#pragma omp parallel num_threads(parts)
    {
        // A smaller team than requested (nested parallelism, limits) still covers every part.
        const int team = omp_get_num_threads();
        for (int p = omp_get_thread_num(); p < parts; p += team) {
            spmm_rows(row_ptr, col_idx, values, x, f, y, beta, bounds[p], bounds[p + 1], nnz_end,
                      y_rows);
        }
    }
}

}  // namespace strata::cpu
