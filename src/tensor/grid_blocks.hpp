// How the G x F grid (and S x F's chunks) split a part's rows and a tensor's columns between the
// F ranks of a feature group (docs/layouts.md). Columns: F contiguous blocks, the first w mod F
// one longer. Rows: the same over whole tiles of gemm_row_tile rows, so that every rank's row
// chunk starts where a product of the whole part would start a tile, and the chunk's products
// give the part's bits (below).
#pragma once

#include "src/base/types.hpp"
#include "src/tensor/matrix_view.hpp"

namespace strata {

/// Rows of a product C = op(A) B (no transpose of A) that the CPU backend computes as one unit.
/// OpenBLAS sums a row of C by a path that depends on the row's place in its kernel's row tile
/// (Haswell's and Zen's sgemm: 12 rows, the last m mod 12 of a call by narrower kernels), so a
/// row's bits depend on where the call starts. The backend splits a product's rows only at
/// multiples of this tile from its first row (src/device/cpu/cpu_blas.cpp); a multiple of every x86
/// sgemm kernel's tile (4, 8, 12, 16, 24).
inline constexpr index_t gemm_row_tile = 48;

/// Block `i` of `n` items in `parts` contiguous blocks, the first n mod parts one longer.
[[nodiscard]] RowRange grid_block(index_t n, int parts, int i);

/// Row chunk `i` of `n` rows over `parts` ranks: chunk boundaries at i n / parts rounded to the
/// nearest multiple of gemm_row_tile (so every chunk is within a tile of n / parts, and only the
/// last ends off a tile) when n >= gemm_row_tile x parts; below that,
/// grid_block of the rows (a part that small gives up the bitwise match). Not always chunk 0
/// the longest: the planner prices every chunk.
[[nodiscard]] RowRange grid_rows(index_t n, int parts, int i);

/// The longest of grid_rows' chunks of n rows over `parts`.
[[nodiscard]] index_t longest_grid_rows(index_t n, int parts);

}  // namespace strata
