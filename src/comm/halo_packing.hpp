// Halo packing: the wire formats of compressed halo rows (the run option halo_precision). Only
// what crosses the wire changes precision; owned rows and the received halo rows stay fp32.
//   fp32: 4 bytes per value (the rows as they are; never packed)
//   bf16: 2 bytes per value, the upper half of the fp32 rounded to nearest, ties to even
//   int8: per row, a 4-byte fp32 scale s = max|x| / 127, then one int8 q = round(x / s) per
//         value (AdaQP's per-row scale); decoded as q s. A zero row has s = 0 and decodes as 0
//         (so does a row whose largest magnitude is under 127 x the smallest float).
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

namespace strata {

enum class HaloPrecision { fp32, bf16, int8 };

/// "fp32", "bf16", "int8".
[[nodiscard]] const char* to_string(HaloPrecision precision);
/// The inverse of to_string; nullopt for any other text.
[[nodiscard]] std::optional<HaloPrecision> parse_halo_precision(std::string_view text);

/// Bytes of one packed row of `width` values: 4 width, 2 width or 4 + width.
[[nodiscard]] std::size_t packed_row_bytes(HaloPrecision precision, index_t width);

/// out[r] = the record of rows[r] (rows.rows records of packed_row_bytes(rows.cols) bytes).
/// Throws strata::Error if `out` is smaller or the precision is fp32 (nothing to pack).
void pack_rows(HaloPrecision precision, ConstMatrixView rows, std::span<std::byte> out);
/// out[r] = the record of x[rows[r]] (rows.size() records): a gather and pack_rows in one
/// pass, the same bytes. Throws as pack_rows.
void pack_rows(HaloPrecision precision, ConstMatrixView x, std::span<const index_t> rows,
               std::span<std::byte> out);
/// The inverse: rows[r] = the values record r encodes. Throws as pack_rows.
void unpack_rows(HaloPrecision precision, std::span<const std::byte> in, MatrixView rows);

/// One value's bf16 bits (round to nearest even; NaN stays a quiet NaN) and back.
[[nodiscard]] std::uint16_t to_bf16(float value);
[[nodiscard]] float from_bf16(std::uint16_t bits);

}  // namespace strata
