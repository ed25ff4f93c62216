// CPU kernels that read packed halo records (bf16, int8; src/tensor/packed_rows.hpp) as they are,
// decoding each value where it is used: the halo SpMM of a compressed exchange,
// y[y_rows[r]] += A[r, :] decode(x), and the backward's gradient sum, out[rows[i]] +=
// decode(x_i). The same floats as unpacking the records into fp32 rows first (unpack_rows) and
// running the fp32 kernels, without writing and re-reading those rows.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <omp.h>

#include "src/base/error.hpp"
#include "src/device/cpu/cpu_kernels.hpp"
#include "src/device/cpu/simd_clones.hpp"
#include "src/device/cpu/spmm_row.hpp"

namespace strata::cpu {
namespace {

using Halves8 = std::uint16_t __attribute__((vector_size(16)));
using Unsigned8 = std::uint32_t __attribute__((vector_size(32)));
using Bytes32 = std::int8_t __attribute__((vector_size(32)));
using Quads4 = std::uint64_t __attribute__((vector_size(32)));

/// bf16 records: value j is the upper half of an fp32 (decoded exactly: the bits shifted up).
struct Bf16Rows {
    const std::byte* x;
    std::size_t record;

    using Row = const std::byte*;
    [[nodiscard]] Row row(index_t c) const { return x + static_cast<std::size_t>(c) * record; }
    void prefetch(index_t c) const { prefetch_bytes(row(c), record); }
    [[nodiscard]] static Floats8 load8(Row r, index_t j) {
        Halves8 h;
        std::memcpy(&h, r + 2 * static_cast<std::size_t>(j), sizeof(h));
        return reinterpret_cast<Floats8>(__builtin_convertvector(h, Unsigned8) << 16);
    }
    [[nodiscard]] static float load1(Row r, index_t j) {
        std::uint16_t bits = 0;
        std::memcpy(&bits, r + 2 * static_cast<std::size_t>(j), sizeof(bits));
        return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
    }
};

/// int8 records: a 4-byte fp32 scale s, then q per value; value j is float(q_j) x s.
struct Int8Rows {
    const std::byte* x;
    std::size_t record;

    struct Row {
        const std::byte* q;
        float scale;
    };
    [[nodiscard]] Row row(index_t c) const {
        const std::byte* r = x + static_cast<std::size_t>(c) * record;
        float scale = 0.0f;
        std::memcpy(&scale, r, sizeof(scale));
        return {r + sizeof(scale), scale};
    }
    void prefetch(index_t c) const {
        prefetch_bytes(x + static_cast<std::size_t>(c) * record, record);
    }
    /// The 8 bytes in every 64-bit lane, byte i moved to the top of 32-bit lane i (one byte
    /// shuffle inside each 128-bit half), shifted down with its sign: in AVX2 a broadcast,
    /// vpshufb, vpsrad and vcvtdq2ps (GCC 12 scalarizes a plain int8 -> float conversion). The
    /// shuffle is GCC's __builtin_shuffle, or Clang's __builtin_shufflevector (the fuzz and
    /// sanitizer builds).
    [[nodiscard]] static Floats8 load8(Row r, index_t j) {
        static_assert(std::endian::native == std::endian::little);
        std::uint64_t bits = 0;
        std::memcpy(&bits, r.q + j, sizeof(bits));
        const Quads4 copies = {bits, bits, bits, bits};
        const auto v = reinterpret_cast<Bytes32>(copies);
#if defined(__clang__)
        const Bytes32 moved =
            __builtin_shufflevector(v, v, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 20, 20,
                                    20, 20, 21, 21, 21, 21, 22, 22, 22, 22, 23, 23, 23, 23);
#else
        const Bytes32 tops = {0,  0,  0,  0,  1,  1,  1,  1,  2,  2,  2,  2,  3,  3,  3,  3,
                              20, 20, 20, 20, 21, 21, 21, 21, 22, 22, 22, 22, 23, 23, 23, 23};
        const Bytes32 moved = __builtin_shuffle(v, tops);
#endif
        const Lanes8 q = reinterpret_cast<Lanes8>(moved) >> 24;
        const float s = r.scale;
        return __builtin_convertvector(q, Floats8) * Floats8{s, s, s, s, s, s, s, s};
    }
    [[nodiscard]] static float load1(Row r, index_t j) {
        return static_cast<float>(static_cast<std::int8_t>(r.q[j])) * r.scale;
    }
};

/// Rows [first, last) of A: y[y_rows[r]] += A[r, :] decode(x). Widths of 8 and more: spmm_row;
/// narrower, one value at a time (as the fp32 kernel's loop: the same bits). Always inlined, as
/// add_records: the AVX2 clone below compiles only what is inlined into it.
template <class Rows>
[[gnu::always_inline]] inline void add_products(const index_t* row_ptr, const index_t* col_idx,
                                                const float* values, const Rows& x, index_t f,
                                                float* y, index_t first, index_t last,
                                                index_t nnz_end, const index_t* y_rows) {
    const auto width = static_cast<std::size_t>(f);
    for (index_t r = first; r < last; ++r) {
        float* __restrict yr = y + static_cast<std::size_t>(y_rows[r]) * width;
        index_t k = row_ptr[r];
        const index_t end = row_ptr[r + 1];
        if (f >= 8) {
            spmm_row(col_idx, values, x, f, yr, 1.0f, k, end, nnz_end);
            continue;
        }
        for (; k < end; ++k) {
            if (k + prefetch_edges < nnz_end) {
                x.prefetch(col_idx[k + prefetch_edges]);
            }
            const float v = values[k];
            const typename Rows::Row xr = x.row(col_idx[k]);
            for (index_t j = 0; j < f; ++j) {
                yr[j] += v * Rows::load1(xr, j);
            }
        }
    }
}

/// Columns [first, last) of out[rows[i]] += decode(x_i) for every i, in order of i: 8 at a time,
/// a ragged end as one vector over the range's last 8 columns whose lanes already added keep
/// their value (the range's own columns only; narrower ranges one value at a time).
template <class Rows>
[[gnu::always_inline]] inline void add_records(const Rows& x, const index_t* rows,
                                               std::size_t num_rows, index_t f, float* out,
                                               index_t first, index_t last) {
    const auto width = static_cast<std::size_t>(f);
    const Lanes8 lane = {0, 1, 2, 3, 4, 5, 6, 7};
    for (std::size_t i = 0; i < num_rows; ++i) {
        const typename Rows::Row xr = x.row(static_cast<index_t>(i));
        float* dst = out + static_cast<std::size_t>(rows[i]) * width;
        index_t j = first;
        for (; j + 8 <= last; j += 8) {
            store8(dst + j, load8(dst + j) + Rows::load8(xr, j));
        }
        if (j == last) {
            continue;
        }
        if (last - first >= 8) {  // the ragged tail: the last 8 columns, the done lanes kept
            const index_t start = last - 8;
            const Lanes8 done = lane < static_cast<std::int32_t>(j - start);
            const Floats8 old = load8(dst + start);
            store8(dst + start, done ? old : old + Rows::load8(xr, start));
            continue;
        }
        for (; j < last; ++j) {
            dst[j] += Rows::load1(xr, j);
        }
    }
}

/// Cloned for AVX2 (simd_clones.hpp), as the fp32 SpMM.
STRATA_SIMD_CLONES void spmm_packed_part(const index_t* row_ptr, const index_t* col_idx,
                                         const float* values, ConstPackedMatrix x, float* y,
                                         index_t first, index_t last, index_t nnz_end,
                                         const index_t* y_rows) {
    if (x.precision == HaloPrecision::bf16) {
        add_products(row_ptr, col_idx, values, Bf16Rows{x.data, x.record_bytes()}, x.cols, y, first,
                     last, nnz_end, y_rows);
    } else {
        add_products(row_ptr, col_idx, values, Int8Rows{x.data, x.record_bytes()}, x.cols, y, first,
                     last, nnz_end, y_rows);
    }
}

STRATA_SIMD_CLONES void add_packed_part(ConstPackedMatrix x, const index_t* rows,
                                        std::size_t num_rows, float* out, index_t first,
                                        index_t last) {
    if (x.precision == HaloPrecision::bf16) {
        add_records(Bf16Rows{x.data, x.record_bytes()}, rows, num_rows, x.cols, out, first, last);
    } else {
        add_records(Int8Rows{x.data, x.record_bytes()}, rows, num_rows, x.cols, out, first, last);
    }
}

/// Column blocks are whole cache lines so that two threads never write the same line.
constexpr index_t column_block = 16;
/// Below this much work one thread is faster than waking the team.
constexpr std::size_t serial_elements = std::size_t{1} << 14;

}  // namespace

void spmm_csr_packed(const index_t* row_ptr, const index_t* col_idx, const float* values,
                     index_t rows, ConstPackedMatrix x, float* y, const index_t* y_rows,
                     const index_t* bounds, int parts) {
    STRATA_ASSERT(x.precision != HaloPrecision::fp32);
    if (rows == 0 || x.cols == 0) {
        return;
    }
    const index_t nnz_end = row_ptr[rows];
#pragma omp parallel num_threads(parts)
    {
        const int team = omp_get_num_threads();
        for (int p = omp_get_thread_num(); p < parts; p += team) {
            spmm_packed_part(row_ptr, col_idx, values, x, y, bounds[p], bounds[p + 1], nnz_end,
                             y_rows);
        }
    }
}

void scatter_add_packed_rows(ConstPackedMatrix x, const index_t* rows, std::size_t num_rows,
                             float* out, int threads) {
    // Each column block is one thread's, walked in order of i: as scatter_add_rows.
    STRATA_ASSERT(x.precision != HaloPrecision::fp32);
    const index_t f = x.cols;
    const index_t blocks = (f + column_block - 1) / column_block;
    const bool parallel =
        num_rows * static_cast<std::size_t>(f) >= serial_elements && threads > 1 && blocks > 1;
    const index_t parts = parallel ? std::min<index_t>(threads, blocks) : 1;
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (index_t p = 0; p < parts; ++p) {
        const index_t first = std::min(f, blocks * p / parts * column_block);
        const index_t last = std::min(f, blocks * (p + 1) / parts * column_block);
        add_packed_part(x, rows, num_rows, out, first, last);
    }
}

}  // namespace strata::cpu
