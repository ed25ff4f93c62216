// LayoutSwitch: one pass over R's rows splits each into the slices' column blocks (the peers' into
// staging, the rank's own into C), then one exchange at width 1 with the peers below and one with
// those above, at once (C's side in place); to_rows the reverse, R's rows written once after
// every block has arrived.
#include "layers/layout_switch.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "src/base/error.hpp"

namespace strata {
namespace {

/// One column block of a row chunk held apart: columns [first, first + count) of each of the
/// chunk's rows, stored as rows of `count` floats at `rows`.
struct ColumnBlock {
    index_t first = 0;
    index_t count = 0;
    float* rows = nullptr;
};

/// dst[0, n) = src[0, n) for the short runs of a switch (a slice's columns of one row: 8-128
/// floats), inline: fixed-size copies of 8 floats (the last one overlapping the one before)
/// instead of a library memmove call per run (bench/layout_switch, docs/benchmarks.md).
inline void copy_run(const float* src, index_t n, float* dst) {
    constexpr index_t v = 8;
    if (n >= v) {
        for (index_t k = 0; k + v <= n; k += v) {
            std::memcpy(dst + k, src + k, v * sizeof(float));
        }
        std::memcpy(dst + n - v, src + n - v, v * sizeof(float));  // the tail, overlapping
    } else {
        for (index_t k = 0; k < n; ++k) {
            dst[k] = src[k];
        }
    }
}

/// R's rows (`rows` rows of `width` floats at r) to `blocks` (ToR false) or back (ToR true),
/// row by row: each row of R is read (or written) once for all its blocks, so a block narrower
/// than a cache line's share of the row does not fetch R's lines again for every block (a
/// switch at width 47 over 2 slices touched R twice).
template <bool ToR>
void move_blocks(std::conditional_t<ToR, float*, const float*> r, index_t width, index_t rows,
                 std::span<const ColumnBlock> blocks) {
    for (index_t i = 0; i < rows; ++i) {
        const auto row = r + static_cast<std::size_t>(i) * static_cast<std::size_t>(width);
        for (const ColumnBlock& b : blocks) {
            float* other = b.rows + static_cast<std::size_t>(i) * static_cast<std::size_t>(b.count);
            if constexpr (ToR) {
                copy_run(other, b.count, row + b.first);
            } else {
                copy_run(row + b.first, b.count, other);
            }
        }
    }
}

/// The column blocks of every slice of `width` (block `b` of each) in slice order: slice
/// `slice`'s at `c_chunk` (C's rows of the row chunk `rows`), the others' one after another in
/// `staging` (the peers below, then above: as the two exchanges carry them).
std::vector<ColumnBlock> column_blocks(index_t width, int slices, int slice, RowRange rows,
                                       float* c_chunk, float* staging, SliceBlock b) {
    std::vector<ColumnBlock> out;
    out.reserve(static_cast<std::size_t>(slices));
    for (int p = 0; p < slices; ++p) {
        const RowRange cols = slice_columns(width, slices, p, b);
        if (p == slice) {
            out.push_back({cols.first, cols.count, c_chunk});
        } else {
            out.push_back({cols.first, cols.count, staging});
            staging += static_cast<std::size_t>(rows.count) * static_cast<std::size_t>(cols.count);
        }
    }
    return out;
}

/// Waits for the switch's two exchanges (either may be absent: no peers on that side).
void wait_all(const std::array<std::unique_ptr<Exchange>, 2>& flying) {
    for (const auto& exchange : flying) {
        if (exchange) {
            exchange->wait_all();
        }
    }
}

}  // namespace

LayoutSwitch::LayoutSwitch(Backend& backend, Communicator& comm, index_t part_rows)
    : comm_(comm), part_rows_(part_rows) {
    STRATA_CHECK(backend.kind() == DeviceKind::cpu, "layout switch: the feature grid runs on the ",
                 "CPU backend only, not on ", backend.describe());
}

RowRange slice_columns(index_t width, int slices, int slice, SliceBlock b) {
    const RowRange whole = grid_block(width, slices, slice);
    const RowRange part = grid_block(whole.count, b.blocks, b.block);
    return {whole.first + part.first, part.count};
}

std::size_t LayoutSwitch::staging_floats(index_t part_rows, index_t width, int slices, int slice,
                                         SliceBlock b) {
    const RowRange rows = grid_rows(part_rows, slices, slice);
    index_t others = 0;
    for (int p = 0; p < slices; ++p) {
        others += p == slice ? 0 : slice_columns(width, slices, p, b).count;
    }
    return static_cast<std::size_t>(rows.count) * static_cast<std::size_t>(others);
}

void LayoutSwitch::count(const ExchangePattern& pattern, ExchangePurpose purpose) {
    constexpr auto float_bytes = static_cast<std::int64_t>(sizeof(float));  // width 1
    const auto bytes = static_cast<std::int64_t>(pattern.num_send_rows()) * float_bytes;
    (purpose == ExchangePurpose::recompute  ? sent_.recompute
     : purpose == ExchangePurpose::backward ? sent_.backward
                                            : sent_.forward) += bytes;
    sent_.inter_node +=
        static_cast<std::int64_t>(rows_to_other_nodes(comm_, pattern)) * float_bytes;
}

std::array<ExchangePattern, 2> LayoutSwitch::columns_patterns(ConstMatrixView r, ConstMatrixView c,
                                                              std::span<float> staging,
                                                              SliceBlock b) const {
    const int slices = this->slices();
    const index_t width = r.cols;
    const RowRange mine = chunk();
    const RowRange cols = columns(width, b);
    STRATA_CHECK(b.blocks >= 1 && b.block >= 0 && b.block < b.blocks, "layout switch: block ",
                 b.block, " of ", b.blocks);
    STRATA_CHECK(r.rows == mine.count && c.rows == part_rows_ && c.cols == cols.count,
                 "layout switch: R ", r.rows, " x ", r.cols, " and C ", c.rows, " x ", c.cols,
                 ", expected ", mine.count, " rows and ", part_rows_, " x ", cols.count);
    STRATA_CHECK(staging.size() >= staging_floats(width, b), "layout switch: staging of ",
                 staging.size(), " floats, needs ", staging_floats(width, b));
    // To each peer p: the chunk's rows of p's columns; from p: p's chunk of this slice.
    std::array<ExchangePattern, 2> halves;  // the peers below this slice, then above
    for (int p = 0; p < slices; ++p) {
        if (p != slice()) {
            ExchangePattern& half = halves[p < slice() ? 0 : 1];
            half.peers.push_back(p);
            half.send_offsets.push_back(half.send_offsets.back() +
                                        mine.count * slice_columns(width, slices, p, b).count);
            half.recv_offsets.push_back(half.recv_offsets.back() +
                                        grid_rows(part_rows_, slices, p).count * cols.count);
        }
    }
    return halves;
}

void LayoutSwitch::to_columns(ConstMatrixView r, MatrixView c, std::span<float> staging,
                              ExchangePurpose purpose, SliceBlock b) {
    const index_t width = r.cols;
    const RowRange mine = chunk();
    const std::array<ExchangePattern, 2> halves = columns_patterns(r, c, staging, b);
    // One pass over the chunk: the peers' column blocks into staging (in slice order: the peers
    // below, then above, as the two exchanges send them), the rank's own block into C.
    const std::vector<ColumnBlock> parts =
        column_blocks(width, slices(), slice(), mine, c.row_range(mine.first, mine.count).data,
                      staging.data(), b);
    move_blocks<false>(r.data, width, mine.count, parts);
    // The peers' row chunks land in place: C's rows before this chunk, and after it.
    const std::array<float*, 2> lands{c.data, c.row_range(mine.end(), 0).data};
    std::array<std::unique_ptr<Exchange>, 2> flying;
    const float* send = staging.data();
    for (std::size_t h = 0; h < halves.size(); ++h) {
        if (!halves[h].peers.empty()) {
            flying[h] =
                comm_.start_exchange(halves[h], ConstMatrixView{send, halves[h].num_send_rows(), 1},
                                     MatrixView{lands[h], halves[h].num_recv_rows(), 1});
            count(halves[h], purpose);
            send += halves[h].num_send_rows();
        }
    }
    wait_all(flying);
}

void LayoutSwitch::to_rows(ConstMatrixView c, MatrixView r, std::span<float> staging,
                           ExchangePurpose purpose, SliceBlock b) {
    const index_t width = r.cols;
    const RowRange mine = chunk();
    const std::array<ExchangePattern, 2> forward = columns_patterns(r, c, staging, b);
    const std::array<ExchangePattern, 2> halves{forward[0].reversed(), forward[1].reversed()};
    // The peers' row chunks leave from where they are: C's rows before this chunk, and after it.
    const std::array<const float*, 2> leaves{c.data, c.row_range(mine.end(), 0).data};
    std::array<std::unique_ptr<Exchange>, 2> flying;
    float* recv = staging.data();
    for (std::size_t h = 0; h < halves.size(); ++h) {
        if (!halves[h].peers.empty()) {
            flying[h] = comm_.start_exchange(
                halves[h], ConstMatrixView{leaves[h], halves[h].num_send_rows(), 1},
                MatrixView{recv, halves[h].num_recv_rows(), 1});
            count(halves[h], purpose);
            recv += halves[h].num_recv_rows();
        }
    }
    wait_all(flying);
    // Every peer's block arrived: one pass writes each row of R once, its own block from C
    // (C is only read: the const_cast never writes through it) and the peers' from staging.
    const std::vector<ColumnBlock> parts = column_blocks(
        width, slices(), slice(), mine,
        const_cast<float*>(c.row_range(mine.first, mine.count).data), staging.data(), b);
    move_blocks<true>(r.data, width, mine.count, parts);
}

}  // namespace strata
