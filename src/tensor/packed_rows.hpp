// Packed rows: the compressed row formats halo rows cross the wire in (the run option
// halo_precision; kernels in src/comm/halo_packing) and a read-only view of a block of them, so
// that a backend can read received records without unpacking them first.
//   fp32: 4 bytes per value (the rows as they are; never packed)
//   bf16: 2 bytes per value, the upper half of the fp32 rounded to nearest, ties to even;
//         decoded exactly (the bits shifted up)
//   int8: per row, a 4-byte fp32 scale s, then one int8 q per value; decoded as q s (fp32)
// Records are contiguous, packed_row_bytes(width) bytes each, with no padding (so not aligned).
#pragma once

#include <cstddef>

#include "src/base/types.hpp"

namespace strata {

enum class HaloPrecision { fp32, bf16, int8 };

/// Bytes of one packed row of `width` values: 4 width, 2 width or 4 + width.
[[nodiscard]] constexpr std::size_t packed_row_bytes(HaloPrecision precision, index_t width) {
    const auto w = static_cast<std::size_t>(width);
    switch (precision) {
        case HaloPrecision::bf16:
            return 2 * w;
        case HaloPrecision::int8:
            return 4 + w;
        case HaloPrecision::fp32:
            break;
    }
    return 4 * w;
}

/// rows records of `cols` values each at `precision` (bf16 or int8), in host memory.
struct ConstPackedMatrix {
    HaloPrecision precision = HaloPrecision::bf16;
    const std::byte* data = nullptr;
    index_t rows = 0;
    index_t cols = 0;

    [[nodiscard]] std::size_t record_bytes() const { return packed_row_bytes(precision, cols); }
    [[nodiscard]] std::size_t size_bytes() const {
        return static_cast<std::size_t>(rows) * record_bytes();
    }
};

}  // namespace strata
