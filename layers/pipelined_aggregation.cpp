// The layer-level pipelined aggregation (heFFTe p2p_plined): the inner product overlaps the
// exchange, and each peer's rows are consumed as they arrive, in peer order (InPeerOrder), so
// that a row's sum over peers is the same in every run.
#include "layers/pipelined_aggregation.hpp"

#include "src/base/error.hpp"
#include "src/comm/peer_order.hpp"

namespace strata {

PipelinedAggregation::PipelinedAggregation(const GraphBlocks& blocks, Communicator& comm)
    : blocks_(blocks), comm_(comm) {}

std::size_t PipelinedAggregation::workspace_floats(index_t width) const {
    const ExchangePattern& pattern = blocks_.pattern();
    return static_cast<std::size_t>(pattern.num_send_rows() + pattern.num_recv_rows()) *
           static_cast<std::size_t>(width);
}

MatrixView PipelinedAggregation::rows_of(MatrixView y, RowRange rows) const {
    if (y.rows == blocks_.num_owned()) {
        return y.rows_of(rows);
    }
    STRATA_CHECK(y.rows == rows.count, "aggregation: output of ", y.rows, " rows for rows [",
                 rows.first, ", ", rows.end(), ") of ", blocks_.num_owned(),
                 " (all rows or exactly the range's)");
    return y;
}

bool PipelinedAggregation::whole(RowRange rows) const {
    if (rows.first == 0 && rows.count == blocks_.num_owned()) {
        return true;
    }
    STRATA_CHECK(blocks_.pattern().peers.empty(), "aggregation: rows [", rows.first, ", ",
                 rows.end(), ") of ", blocks_.num_owned(),
                 ": a partial range needs a rank without halo peers");
    return false;
}

void PipelinedAggregation::forward(ConstMatrixView h, MatrixView z, RowRange rows,
                                   std::span<float> workspace, ExchangePurpose purpose) {
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
    const MatrixView send{workspace.data(), pattern.num_send_rows(), width};
    const MatrixView recv{workspace.data() + send.size(), pattern.num_recv_rows(), width};
    backend.gather_rows(h, blocks_.send_rows(), send);
    auto exchange = comm_.start_exchange(pattern, send, recv);
    const auto bytes = static_cast<std::int64_t>(send.size() * sizeof(float));
    (purpose == ExchangePurpose::recompute ? sent_.recompute : sent_.forward) += bytes;
    backend.spmm(blocks_.inner(), h, z, 0.0f);  // overlaps the exchange
    InPeerOrder arrivals(*exchange, pattern.peers.size());
    while (auto peer = arrivals.next()) {
        const auto p = static_cast<std::size_t>(*peer);
        const index_t first = pattern.recv_offsets[p];
        const index_t count = pattern.recv_offsets[p + 1] - first;
        backend.spmm_scatter_add(blocks_.halo(p), blocks_.halo_rows(p),
                                 recv.row_range(first, count), z);
    }
    exchange->wait_all();
}

void PipelinedAggregation::backward(ConstMatrixView dz, MatrixView dh, RowRange rows, float beta,
                                    std::span<float> workspace) {
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
    const MatrixView outgoing{workspace.data(), reversed.num_send_rows(), width};
    const MatrixView incoming{workspace.data() + outgoing.size(), reversed.num_recv_rows(), width};
    // Gradients for the halo rows we read, computed first so they can be sent while the
    // (larger) inner transposed SpMM runs.
    for (std::size_t p = 0; p < reversed.peers.size(); ++p) {
        const index_t first = reversed.send_offsets[p];
        const index_t count = reversed.send_offsets[p + 1] - first;
        if (count > 0) {
            backend.spmm(blocks_.halo_t(p), dz, outgoing.row_range(first, count), 0.0f);
        }
    }
    auto exchange = comm_.start_exchange(reversed, outgoing, incoming);
    sent_.backward += static_cast<std::int64_t>(outgoing.size() * sizeof(float));
    backend.spmm(blocks_.inner_t(), dz, dh, beta);
    const std::span<const index_t> send_rows = blocks_.send_rows();
    InPeerOrder arrivals(*exchange, reversed.peers.size());
    while (auto peer = arrivals.next()) {
        const auto p = static_cast<std::size_t>(*peer);
        const index_t first = reversed.recv_offsets[p];
        const index_t count = reversed.recv_offsets[p + 1] - first;
        backend.scatter_add_rows(
            incoming.row_range(first, count),
            send_rows.subspan(static_cast<std::size_t>(first), static_cast<std::size_t>(count)),
            dh);
    }
    exchange->wait_all();
}

}  // namespace strata
