// The layer-level overlapped aggregation (heFFTe p2p_plined): the inner product overlaps the
// exchange, and each peer's rows are consumed as they arrive, in peer order (InPeerOrder), so
// that a row's sum over peers is the same in every run. The inner product runs in row blocks
// with a progress call between them: over TCP, MPI moves bytes only inside MPI calls. Rows
// cross the wire at the halo precision (WireExchange): packed as they are gathered, and the
// received records read as they are by the halo SpMM and the gradient sum (no fp32 copy).
#include "layers/overlapped_aggregation.hpp"

#include <algorithm>
#include <cstddef>

#include "src/base/error.hpp"
#include "src/base/trace.hpp"
#include "src/comm/peer_order.hpp"
#include "src/comm/wire_exchange.hpp"
#include "src/device/backend.hpp"

namespace strata {

index_t overlap_block_rows(index_t rows, index_t width) {
    constexpr std::size_t target_bytes = std::size_t{1} << 20;
    constexpr std::size_t min_blocks = 16;
    constexpr std::size_t max_blocks = 64;
    constexpr std::size_t min_rows = 64;
    const auto n = static_cast<std::size_t>(std::max<index_t>(rows, 1));
    const std::size_t row_bytes = static_cast<std::size_t>(std::max<index_t>(width, 1)) * 4;
    const std::size_t by_bytes = (n * row_bytes + target_bytes - 1) / target_bytes;
    std::size_t blocks = std::clamp(by_bytes, min_blocks, max_blocks);
    blocks = std::max<std::size_t>(1, std::min(blocks, n / min_rows));
    return static_cast<index_t>((n + blocks - 1) / blocks);
}

OverlappedAggregation::OverlappedAggregation(const GraphBlocks& blocks, Communicator& comm,
                                             AggregationOptions options)
    : blocks_(blocks), comm_(comm), options_(options), precision_(options.precision) {
    STRATA_CHECK_OPTION(
        options.precision == HaloPrecision::fp32 || blocks.backend().kind() == DeviceKind::cpu,
        "halo_precision", to_string(options.precision),
        "packs halo rows on the host: it needs device = cpu (use fp32 on cuda)");
    STRATA_CHECK(
        options.rounding == HaloRoundingMode::nearest ||
            blocks.send_ids().size() == static_cast<std::size_t>(blocks.pattern().num_send_rows()),
        "aggregation: stochastic halo rounding needs graph blocks with rounding ids");
}

void OverlappedAggregation::set_precision(HaloPrecision precision) {
    STRATA_CHECK(precision == HaloPrecision::fp32 || precision == options_.precision,
                 "aggregation: halo precision ", to_string(precision), " in a run planned for ",
                 to_string(options_.precision));
    precision_ = precision;
}

void OverlappedAggregation::inner_spmm(const CsrMatrix& a, ConstMatrixView x, MatrixView y,
                                       float beta) {
    const trace::Span span("inner SpMM", "aggregation", y.cols);
    Backend& backend = blocks_.backend();
    if (!options_.overlap || !comm_.needs_progress() || blocks_.pattern().peers.empty()) {
        backend.spmm(a, x, y, beta);
        return;
    }
    // Rows are independent sums in a fixed order: the blocks give the same bits as one call.
    const index_t rows = y.rows;
    const index_t step = overlap_block_rows(rows, y.cols);
    for (index_t first = 0; first < rows; first += step) {
        const RowRange block{first, std::min(step, rows - first)};
        backend.spmm(a, block, x, y.rows_of(block), beta);
        comm_.progress();
    }
}

std::size_t aggregation_workspace_floats(HaloPrecision precision, index_t send_rows,
                                         index_t recv_rows, index_t width) {
    const std::size_t fp32 = exchange_workspace_floats(send_rows, recv_rows, width);
    if (precision == HaloPrecision::fp32) {
        return fp32;
    }
    // The backward's outgoing gradients (recv_rows of them, fp32 until packed), then the records;
    // and room for fp32, which the precision guard may switch to.
    return std::max(fp32, exchange_workspace_floats(0, recv_rows, width) +
                              WireExchange::packed_floats(precision, send_rows, recv_rows, width));
}

std::size_t OverlappedAggregation::workspace_floats(index_t width) const {
    const ExchangePattern& pattern = blocks_.pattern();
    return aggregation_workspace_floats(options_.precision, pattern.num_send_rows(),
                                        pattern.num_recv_rows(), width);
}

MatrixView OverlappedAggregation::rows_of(MatrixView y, RowRange rows) const {
    if (y.rows == blocks_.num_owned()) {
        return y.rows_of(rows);
    }
    STRATA_CHECK(y.rows == rows.count, "aggregation: output of ", y.rows, " rows for rows [",
                 rows.first, ", ", rows.end(), ") of ", blocks_.num_owned(),
                 " (all rows or exactly the range's)");
    return y;
}

bool OverlappedAggregation::whole(RowRange rows) const {
    if (rows.first == 0 && rows.count == blocks_.num_owned()) {
        return true;
    }
    STRATA_CHECK(blocks_.pattern().peers.empty(), "aggregation: rows [", rows.first, ", ",
                 rows.end(), ") of ", blocks_.num_owned(),
                 ": a partial range needs a rank without halo peers");
    return false;
}

void OverlappedAggregation::forward(ConstMatrixView h, MatrixView z, RowRange rows,
                                    std::span<float> workspace, ExchangeCall call) {
    STRATA_ASSERT(h.rows == blocks_.num_owned() && z.cols == h.cols);
    Backend& backend = blocks_.backend();
    if (!whole(rows)) {
        backend.spmm(blocks_.inner(), rows, h, rows_of(z, rows), 0.0f);
        return;
    }
    STRATA_ASSERT(z.rows == h.rows);
    const ExchangePattern& pattern = blocks_.pattern();
    const index_t width = h.cols;
    STRATA_CHECK(workspace.size() >= workspace_floats(width), "aggregation: workspace of ",
                 workspace.size(), " floats, needs ", workspace_floats(width));
    // fp32: the gathered send rows and the received rows; below it, only their packed records
    // (gathered and packed in one pass, read by the halo SpMM as they are).
    const bool packed = precision_ != HaloPrecision::fp32;
    float* const base = workspace.data();
    const MatrixView send{packed ? nullptr : base, pattern.num_send_rows(), width};
    const MatrixView recv{packed ? nullptr : base + send.size(), pattern.num_recv_rows(), width};
    const std::optional<HaloRounding> rounding = halo_rounding(
        options_.rounding, options_.seed, precision_, call, false, blocks_.send_ids());
    WireExchange exchange =
        start_boundary_exchange(blocks_, comm_, precision_, h, send, recv,
                                workspace.subspan(packed ? 0 : send.size() + recv.size()),
                                WireExchange::Arrival::packed, rounding ? &*rounding : nullptr);
    (call.purpose == ExchangePurpose::recompute ? sent_.recompute : sent_.forward) +=
        exchange.bytes_sent();
    sent_.inter_node += exchange.inter_node_bytes_sent();
    inner_spmm(blocks_.inner(), h, z, 0.0f);  // overlaps the exchange
    InPeerOrder arrivals(exchange, pattern.peers.size());
    while (auto peer = arrivals.next()) {
        const auto p = static_cast<std::size_t>(*peer);
        const trace::Span span("halo SpMM", "aggregation", pattern.peers[p]);
        if (packed) {
            backend.spmm_scatter_add_packed(blocks_.halo(p), blocks_.halo_rows(p),
                                            exchange.received(*peer), z);
            continue;
        }
        const index_t first = pattern.recv_offsets[p];
        const index_t count = pattern.recv_offsets[p + 1] - first;
        backend.spmm_scatter_add(blocks_.halo(p), blocks_.halo_rows(p),
                                 recv.row_range(first, count), z);
    }
    exchange.wait_all();
}

void OverlappedAggregation::backward(ConstMatrixView dz, MatrixView dh, RowRange rows, float beta,
                                     std::span<float> workspace, ExchangeCall call) {
    STRATA_ASSERT(dz.rows == blocks_.num_owned() && dh.cols == dz.cols);
    Backend& backend = blocks_.backend();
    if (!whole(rows)) {
        backend.spmm(blocks_.inner_t(), rows, dz, rows_of(dh, rows), beta);
        return;
    }
    STRATA_ASSERT(dh.rows == dz.rows);
    const ExchangePattern& reversed = blocks_.reversed_pattern();  // send = forward recv
    const index_t width = dz.cols;
    STRATA_CHECK(workspace.size() >= workspace_floats(width), "aggregation: workspace of ",
                 workspace.size(), " floats, needs ", workspace_floats(width));
    // The outgoing gradients in fp32; the incoming ones too at fp32, below it only as records
    // (summed into dh as they are).
    const bool packed = precision_ != HaloPrecision::fp32;
    const MatrixView outgoing{workspace.data(), reversed.num_send_rows(), width};
    const MatrixView incoming{packed ? nullptr : workspace.data() + outgoing.size(),
                              reversed.num_recv_rows(), width};
    // Gradients for the halo rows we read, computed first so they can be sent while the
    // (larger) inner transposed SpMM runs.
    for (std::size_t p = 0; p < reversed.peers.size(); ++p) {
        const trace::Span span("halo gradient SpMM", "aggregation", reversed.peers[p]);
        const index_t first = reversed.send_offsets[p];
        const index_t count = reversed.send_offsets[p + 1] - first;
        if (count > 0) {
            backend.spmm(blocks_.halo_t(p), dz, outgoing.row_range(first, count), 0.0f);
        }
    }
    const std::optional<HaloRounding> rounding =
        halo_rounding(options_.rounding, options_.seed, precision_, call, true, blocks_.halo_ids());
    WireExchange exchange(comm_, precision_, reversed, outgoing, incoming,
                          workspace.subspan(outgoing.size() + (packed ? 0 : incoming.size())),
                          WireExchange::Arrival::packed, rounding ? &*rounding : nullptr);
    sent_.backward += exchange.bytes_sent();
    sent_.inter_node += exchange.inter_node_bytes_sent();
    inner_spmm(blocks_.inner_t(), dz, dh, beta);
    const std::span<const index_t> send_rows = blocks_.send_rows();
    InPeerOrder arrivals(exchange, reversed.peers.size());
    while (auto peer = arrivals.next()) {
        const auto p = static_cast<std::size_t>(*peer);
        const index_t first = reversed.recv_offsets[p];
        const index_t count = reversed.recv_offsets[p + 1] - first;
        const trace::Span span("halo gradient sum", "aggregation", reversed.peers[p]);
        const std::span<const index_t> rows_of_p =
            send_rows.subspan(static_cast<std::size_t>(first), static_cast<std::size_t>(count));
        if (packed) {
            backend.scatter_add_packed_rows(exchange.received(*peer), rows_of_p, dh);
        } else {
            backend.scatter_add_rows(incoming.row_range(first, count), rows_of_p, dh);
        }
    }
    exchange.wait_all();
}

}  // namespace strata
