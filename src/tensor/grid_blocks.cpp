// grid_block and grid_rows: the grid's column and row blocks.
#include "src/tensor/grid_blocks.hpp"

#include <algorithm>
#include <cstdint>

namespace strata {

RowRange grid_block(index_t n, int parts, int i) {
    const index_t base = n / parts;
    const index_t extra = n % parts;
    const index_t first = static_cast<index_t>(i) * base + std::min<index_t>(i, extra);
    return {first, base + (i < extra ? 1 : 0)};
}

RowRange grid_rows(index_t n, int parts, int i) {
    const auto tile = static_cast<std::int64_t>(gemm_row_tile);
    if (static_cast<std::int64_t>(n) < tile * parts) {
        return grid_block(n, parts, i);
    }
    // Boundary j: j n / parts rounded to the nearest tile (half up); the last is n.
    const auto boundary = [&](int j) -> index_t {
        if (j == parts) {
            return n;
        }
        const std::int64_t twice = 2 * static_cast<std::int64_t>(n) * j;
        return static_cast<index_t>((twice + tile * parts) / (2 * tile * parts) * tile);
    };
    const index_t first = boundary(i);
    return {first, boundary(i + 1) - first};
}

index_t longest_grid_rows(index_t n, int parts) {
    index_t longest = 0;
    for (int i = 0; i < parts; ++i) {
        longest = std::max(longest, grid_rows(n, parts, i).count);
    }
    return longest;
}

}  // namespace strata
