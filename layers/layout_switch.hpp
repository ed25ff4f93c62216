// LayoutSwitch: the G x F grid's all-to-all inside a feature group (docs/layouts.md). Part g's
// n_g rows are split into F contiguous row chunks (grid_rows: whole GEMM row tiles, so a chunk's
// products give the part's bits) and every width w into F contiguous column slices (grid_block:
// the first w mod F one longer). Rank (g, f) holds a tensor in layout R
// (row chunk f, all w columns: what the executor and every row-local op see) or in layout C (all
// n_g rows of part g, column slice f: what the aggregation runs on, at width w/F, inside the
// graph group). to_columns turns R into C, to_rows C into R; each sends (F-1)/F of the rank's
// block, one message per peer, and is the exchange of the Communicator at width 1 (an
// all-to-all-v of floats). C's side travels in place: the peers' row chunks are C's rows before
// and after the rank's own chunk, so each switch runs two exchanges at once (the peers below f,
// the peers above), whose C blocks are contiguous. Only R's side, the peers' column blocks of the
// chunk (strided), passes through staging: r (w - c) floats. Host memory only (the CPU backend).
#pragma once

#include <array>
#include <cstddef>
#include <span>

#include "src/comm/communicator.hpp"
#include "src/device/backend.hpp"
#include "src/nn/graph_operator.hpp"
#include "src/tensor/grid_blocks.hpp"

namespace strata {

/// Which columns of every slice a switch moves: block `block` of `blocks` of each slice's
/// columns (grid_block again). The default, one block, is the whole slice; the grid's
/// aggregation in column blocks (GridAggregation) switches and aggregates one block at a time.
struct SliceBlock {
    int blocks = 1;
    int block = 0;
};

/// Columns of slice `slice` of `slices` of a width that `b` moves, as a range of the width.
[[nodiscard]] RowRange slice_columns(index_t width, int slices, int slice, SliceBlock b = {});

class LayoutSwitch {
public:
    /// `comm`: the feature group (rank f of F); `part_rows`: n_g, the same on every member.
    /// `comm` must outlive it. Throws strata::Error for a backend other than the CPU's.
    LayoutSwitch(Backend& backend, Communicator& comm, index_t part_rows);

    [[nodiscard]] int slices() const { return comm_.size(); }
    [[nodiscard]] int slice() const { return comm_.rank(); }
    [[nodiscard]] index_t part_rows() const { return part_rows_; }
    /// This rank's row chunk of the part (layout R's rows).
    [[nodiscard]] RowRange chunk() const { return grid_rows(part_rows_, slices(), slice()); }
    /// This rank's column slice of a width (layout C's columns), or the block `b` of it.
    [[nodiscard]] RowRange columns(index_t width, SliceBlock b = {}) const {
        return slice_columns(width, slices(), slice(), b);
    }
    /// Floats of scratch one switch of block `b` of a tensor of `width` columns needs: R's
    /// side, the peers' column blocks of the row chunk (to_columns sends them, to_rows
    /// receives them).
    [[nodiscard]] std::size_t staging_floats(index_t width, SliceBlock b = {}) const {
        return staging_floats(part_rows_, width, slices(), slice(), b);
    }
    /// The same for slice `slice` of `slices` over `part_rows` rows, without a switch (strata
    /// plan): r (w_b - c), r the slice's row chunk, c its columns in `b`, w_b every slice's.
    [[nodiscard]] static std::size_t staging_floats(index_t part_rows, index_t width, int slices,
                                                    int slice, SliceBlock b = {});

    /// r (chunk rows x w) -> c (n_g x columns(w, b).count): block `b` of every slice's columns.
    /// Collective over the feature group. `staging` (staging_floats(w, b)) may be any memory
    /// but r's and c's.
    void to_columns(ConstMatrixView r, MatrixView c, std::span<float> staging,
                    ExchangePurpose purpose, SliceBlock b = {});
    /// c (n_g x columns(w, b).count) -> the columns of block `b` of r (chunk rows x w); c is
    /// only read, r's other columns are not touched. Collective over the feature group.
    /// `staging` (staging_floats(w, b)) may be any memory but r's and c's.
    void to_rows(ConstMatrixView c, MatrixView r, std::span<float> staging, ExchangePurpose purpose,
                 SliceBlock b = {});

    /// Payload sent so far, by purpose, and of it to ranks on another node (bytes, this rank).
    [[nodiscard]] HaloBytes bytes_sent() const { return sent_; }

private:
    /// to_columns' two exchanges at width 1, with the peers below this slice and above it
    /// (to_rows': their reverses), after checking the shapes. Send offsets index the staging (the
    /// peers' column blocks in peer order, below first), receive offsets C's rows from the block's
    /// first (row 0 below, the chunk's end above).
    [[nodiscard]] std::array<ExchangePattern, 2> columns_patterns(ConstMatrixView r,
                                                                  ConstMatrixView c,
                                                                  std::span<float> staging,
                                                                  SliceBlock b) const;
    void count(const ExchangePattern& pattern, ExchangePurpose purpose);

    Communicator& comm_;
    index_t part_rows_;
    HaloBytes sent_;
};

}  // namespace strata
