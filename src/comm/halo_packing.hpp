// Halo packing: the kernels that pack fp32 rows into the wire formats of compressed halo rows
// (the run option halo_precision; the formats: src/tensor/packed_rows.hpp) and unpack them.
// Only what crosses the wire changes precision; owned rows stay fp32, and received records are
// unpacked into fp32 rows or read as they are (Backend::spmm_scatter_add_packed).
//   bf16: round to nearest, ties to even
//   int8: s = max|x| / 127 per row, q = round(x / s) (AdaQP's per-row scale). A zero row has
//         s = 0 and decodes as 0 (so does a row whose largest magnitude is under 127 x the
//         smallest float).
// Stochastic rounding (HaloRounding; the run option halo_rounding): instead of the nearest
// value, each value rounds to one of its two neighbours with probability proportional to its
// nearness, so that E[decode] = x (AdaQP's unbiased quantisation). The random number of value
// (v, c) is counter_u32(stream, v, c) for the row's global vertex id v and global column c
// (src/device/counter_rng.hpp, as dropout's masks): the same bits whoever packs the row, on
// any thread and at any layout; the records' format does not change.
//   bf16: the fp32 bits plus u >> 16 (16 random bits under the kept ones), truncated
//   int8: q = floor(x / s + u / 2^32), clamped to [-127, 127]
// Packed rows are contiguous records of packed_row_bytes(width) bytes (no padding), so a peer's
// message is rows x record bytes: the bytes on the wire are exactly what the format says.
// Non-finite values: bf16 keeps them (±inf stays ±inf, NaN stays NaN; a finite value beyond
// bf16's largest, 3.39e38, rounds to ±inf); an int8 row holding any
// ±inf or NaN has no finite scale and decodes as all NaN (a diverging run still ends with
// "training diverged" rather than training on clipped values).
// Plain host kernels (the CPU backend's memory); halo_precision != fp32 is refused on CUDA.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "src/base/types.hpp"
#include "src/tensor/matrix_view.hpp"
#include "src/tensor/packed_rows.hpp"

namespace strata {

/// "fp32", "bf16", "int8".
[[nodiscard]] const char* to_string(HaloPrecision precision);
/// The inverse of to_string; nullopt for any other text.
[[nodiscard]] std::optional<HaloPrecision> parse_halo_precision(std::string_view text);

/// How values below fp32 round (the run option halo_rounding).
enum class HaloRoundingMode { nearest, stochastic };
/// "nearest", "stochastic".
[[nodiscard]] const char* to_string(HaloRoundingMode mode);
/// The inverse of to_string; nullopt for any other text.
[[nodiscard]] std::optional<HaloRoundingMode> parse_halo_rounding(std::string_view text);

/// Stochastic rounding of packed rows: the key of record r's value j is (stream, ids[r],
/// first_column + j). `ids`: the global vertex id of each packed row (as many as records).
struct HaloRounding {
    std::uint64_t stream = 0;  ///< halo_rounding_stream(seed, epoch, node, part)
    std::span<const global_id> ids;
    index_t first_column = 0;  ///< the rows' first column in the whole feature width
};

/// out[r] = the record of rows[r] (rows.rows records of packed_row_bytes(rows.cols) bytes),
/// rounded to nearest, or stochastically with `rounding` (its ids: one per row). Throws
/// strata::Error if `out` is smaller, the precision is fp32 (nothing to pack) or the ids are
/// not one per row.
void pack_rows(HaloPrecision precision, ConstMatrixView rows, std::span<std::byte> out,
               const HaloRounding* rounding = nullptr);
/// out[r] = the record of x[rows[r]] (rows.size() records): a gather and pack_rows in one
/// pass, the same bytes (rounding's ids: one per record, i.e. per entry of `rows`). Throws as
/// pack_rows.
void pack_rows(HaloPrecision precision, ConstMatrixView x, std::span<const index_t> rows,
               std::span<std::byte> out, const HaloRounding* rounding = nullptr);
/// The inverse: rows[r] = the values record r encodes. Throws as pack_rows.
void unpack_rows(HaloPrecision precision, std::span<const std::byte> in, MatrixView rows);

/// One value's bf16 bits (round to nearest even; NaN stays a quiet NaN) and back.
[[nodiscard]] std::uint16_t to_bf16(float value);
[[nodiscard]] float from_bf16(std::uint16_t bits);

}  // namespace strata
