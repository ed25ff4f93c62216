// One row of y = A x + beta y, 8 columns at a time, over a row source: fp32 rows (cpu_spmm.cpp)
// or packed bf16 / int8 records decoded as they are read (cpu_packed.cpp). A row source is
//   Row row(c)            where row c of x is (a pointer, and for int8 its scale)
//   void prefetch(c)      its cache lines, for an upcoming entry
//   Floats8 load8(r, j)   values j .. j + 7 of row r, decoded exactly as unpack_rows decodes
//   float load1(r, j)     value j
// Each y value is a multiply then an add per entry, in the entries' order, whatever the source:
// a packed source gives the same floats as decoding its rows first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "src/base/types.hpp"

namespace strata::cpu {

/// How many edges ahead the x row is prefetched. On graphs far larger than the cache the gather
/// is bound by DRAM latency, not bandwidth. Measured with bench/spmm (1M vertices, 20M edges,
/// F = 128, 2 threads): no prefetch is ~1.7x slower in both vertex orders; 8, 12 and 16 are
/// equally good; 2-4 and 32 are worse.
constexpr index_t prefetch_edges = 16;
constexpr std::size_t line_bytes = 64;

inline void prefetch_bytes(const void* row, std::size_t bytes) {
    const auto* p = static_cast<const char*>(row);
    for (std::size_t j = 0; j < bytes; j += line_bytes) {
        __builtin_prefetch(p + j, 0, 3);
    }
}

/// Eight floats, in AVX2 one register (GCC vector extension: two SSE registers in the baseline).
/// Passed by value only between inlined functions: no ABI to keep. -Wpsabi stays off to the end
/// of the including file (no pop): templates are instantiated there, at its end.
#pragma GCC diagnostic ignored "-Wpsabi"
using Floats8 = float __attribute__((vector_size(32)));
using Lanes8 = std::int32_t __attribute__((vector_size(32)));

inline Floats8 load8(const float* p) {
    Floats8 v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}

inline void store8(float* p, Floats8 v) {
    std::memcpy(p, &v, sizeof(v));
}

/// Rows of fp32 values, `width` apart.
struct Fp32Rows {
    const float* x;
    std::size_t width;

    using Row = const float*;
    [[nodiscard]] Row row(index_t c) const { return x + static_cast<std::size_t>(c) * width; }
    void prefetch(index_t c) const { prefetch_bytes(row(c), width * sizeof(float)); }
    [[nodiscard]] static Floats8 load8(Row r, index_t j) { return cpu::load8(r + j); }
    [[nodiscard]] static float load1(Row r, index_t j) { return r[j]; }
};

/// The entries [k, end) of one row into y row `yr` (y = A x + beta y; k < end when beta = 0);
/// prefetches stop at entry `nnz_end`; f >= 8. The columns up to the last multiple of 8 (`body`)
/// 8 at a time in y; a ragged tail (f not a multiple of 8) in a register over the last 8
/// columns [f - 8, f) for the whole row, stored once at its end with the lanes below the tail
/// keeping what the body wrote (in memory, a vector over those columns per entry would reload
/// what the previous store just wrote, a store-forwarding stall each time). Every column is a
/// multiply then an add per entry in the entries' order (no FMA), as the plain loop: the same
/// bits. Measured with bench/spmm (2 threads, 200k vertices, 5M edges, community order): width
/// 47 0.021 s with a scalar tail, width 48 0.015 s. Always inlined: its callers are cloned for
/// AVX2 (simd_clones.hpp), and a clone compiles only what is inlined into it.
template <class Rows>
[[gnu::always_inline]] inline void spmm_row(const index_t* col_idx, const float* values,
                                            const Rows& x, index_t f, float* __restrict yr,
                                            float beta, index_t k, index_t end, index_t nnz_end) {
    const index_t body = f - f % 8;
    const bool ragged = body != f;
    const index_t start = f - 8;  // the tail's vector
    const Lanes8 lane = {0, 1, 2, 3, 4, 5, 6, 7};
    const Lanes8 done = lane < static_cast<std::int32_t>(body - start);
    Floats8 tail{};
    const auto entry = [&](index_t e, bool assign) {
        if (e + prefetch_edges < nnz_end) {
            x.prefetch(col_idx[e + prefetch_edges]);
        }
        const float v = values[e];
        const typename Rows::Row xr = x.row(col_idx[e]);
        const Floats8 vv = {v, v, v, v, v, v, v, v};
        for (index_t j = 0; j < body; j += 8) {
            const Floats8 product = vv * Rows::load8(xr, j);
            store8(yr + j, assign ? product : load8(yr + j) + product);
        }
        if (ragged) {
            const Floats8 product = vv * Rows::load8(xr, start);
            tail = assign ? product : tail + product;
        }
    };
    if (beta == 0.0f) {
        entry(k++, true);
    } else {
        if (beta != 1.0f) {
            for (index_t j = 0; j < f; ++j) {
                yr[j] *= beta;
            }
        }
        if (ragged) {
            tail = load8(yr + start);
        }
    }
    for (; k < end; ++k) {
        entry(k, false);
    }
    if (ragged) {
        store8(yr + start, done ? load8(yr + start) : tail);
    }
}
}  // namespace strata::cpu
