// LayoutSwitch: pack the strided blocks, exchange at width 1 with the peers below and above at
// once (C's side in place), copy the rank's own block while the messages fly, unpack in peer order.
#include "layers/layout_switch.hpp"

#include <algorithm>
#include <memory>

#include "src/base/error.hpp"
#include "src/comm/peer_order.hpp"

namespace strata {
namespace {

/// Copies columns [cols.first, cols.end()) of `rows` rows of a (row stride `from_stride`) into b
/// (row stride `to_stride`, from column `to_col`).
void copy_block(const float* a, index_t from_stride, index_t from_col, float* b, index_t to_stride,
                index_t to_col, index_t rows, index_t cols) {
    for (index_t i = 0; i < rows; ++i) {
        const float* src = a + static_cast<std::size_t>(i) * static_cast<std::size_t>(from_stride) +
                           static_cast<std::size_t>(from_col);
        std::copy(src, src + cols,
                  b + static_cast<std::size_t>(i) * static_cast<std::size_t>(to_stride) +
                      static_cast<std::size_t>(to_col));
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
    const int slices = this->slices();
    const index_t width = r.cols;
    const RowRange mine = chunk();
    const RowRange cols = columns(width, b);
    const std::array<ExchangePattern, 2> halves = columns_patterns(r, c, staging, b);
    float* packed = staging.data();
    for (const ExchangePattern& half : halves) {
        for (const int peer : half.peers) {
            const RowRange theirs = slice_columns(width, slices, peer, b);
            copy_block(r.data, width, theirs.first, packed, theirs.count, 0, mine.count,
                       theirs.count);
            packed += static_cast<std::size_t>(mine.count) * static_cast<std::size_t>(theirs.count);
        }
    }
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
    copy_block(r.data, width, cols.first, c.row_range(mine.first, mine.count).data, cols.count, 0,
               mine.count, cols.count);
    for (const auto& exchange : flying) {
        if (exchange) {
            exchange->wait_all();
        }
    }
}

void LayoutSwitch::to_rows(ConstMatrixView c, MatrixView r, std::span<float> staging,
                           ExchangePurpose purpose, SliceBlock b) {
    const int slices = this->slices();
    const index_t width = r.cols;
    const RowRange mine = chunk();
    const RowRange cols = columns(width, b);
    const std::array<ExchangePattern, 2> forward = columns_patterns(r, c, staging, b);
    const std::array<ExchangePattern, 2> halves{forward[0].reversed(), forward[1].reversed()};
    // The peers' row chunks leave from where they are: C's rows before this chunk, and after it.
    const std::array<const float*, 2> leaves{c.data, c.row_range(mine.end(), 0).data};
    std::array<std::unique_ptr<Exchange>, 2> flying;
    std::array<float*, 2> arrives{};
    float* recv = staging.data();
    for (std::size_t h = 0; h < halves.size(); ++h) {
        arrives[h] = recv;
        if (!halves[h].peers.empty()) {
            flying[h] = comm_.start_exchange(
                halves[h], ConstMatrixView{leaves[h], halves[h].num_send_rows(), 1},
                MatrixView{recv, halves[h].num_recv_rows(), 1});
            count(halves[h], purpose);
            recv += halves[h].num_recv_rows();
        }
    }
    copy_block(c.row_range(mine.first, mine.count).data, cols.count, 0, r.data, width, cols.first,
               mine.count, cols.count);
    for (std::size_t h = 0; h < halves.size(); ++h) {
        if (!flying[h]) {
            continue;
        }
        InPeerOrder arrivals(*flying[h], halves[h].peers.size());
        while (auto peer = arrivals.next()) {
            const auto i = static_cast<std::size_t>(*peer);
            const RowRange theirs = slice_columns(width, slices, halves[h].peers[i], b);
            copy_block(arrives[h] + halves[h].recv_offsets[i], theirs.count, 0, r.data, width,
                       theirs.first, mine.count, theirs.count);
        }
        flying[h]->wait_all();
    }
}

}  // namespace strata
