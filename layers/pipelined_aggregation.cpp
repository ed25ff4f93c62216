// The layer-level pipelined executor (heFFTe p2p_plined: consume whichever peer arrives first).
#include "layers/pipelined_aggregation.hpp"

#include "src/base/error.hpp"

namespace strata {

PipelinedAggregation::PipelinedAggregation(const GraphBlocks& blocks, Communicator& comm,
                                           index_t width)
    : blocks_(blocks),
      comm_(comm),
      width_(width),
      send_(blocks.backend(), blocks.pattern().num_send_rows(), width),
      recv_(blocks.backend(), blocks.pattern().num_recv_rows(), width) {}

void PipelinedAggregation::forward(ConstMatrixView h, MatrixView z) {
    STRATA_ASSERT(h.rows == blocks_.num_owned() && h.cols == width_ && z.cols == width_);
    Backend& backend = blocks_.backend();
    const ExchangePattern& pattern = blocks_.pattern();
    backend.gather_rows(h, blocks_.send_rows(), send_.view());
    auto exchange = comm_.start_exchange(pattern, send_.view(), recv_.view());
    backend.spmm(blocks_.inner(), h, z, 0.0f);  // overlaps the exchange
    while (auto peer = exchange->wait_any()) {
        const auto p = static_cast<std::size_t>(*peer);
        const index_t first = pattern.recv_offsets[p];
        const index_t count = pattern.recv_offsets[p + 1] - first;
        backend.spmm(blocks_.halo(p), recv_.view().row_range(first, count), z, 1.0f);
    }
    exchange->wait_all();
}

void PipelinedAggregation::backward(ConstMatrixView dz, MatrixView dh) {
    STRATA_ASSERT(dz.rows == blocks_.num_owned() && dz.cols == width_ && dh.cols == width_);
    Backend& backend = blocks_.backend();
    const ExchangePattern& reversed = blocks_.reversed_pattern();  // send = forward recv
    // Gradients for the halo rows we read, computed first so they can be sent while the
    // (larger) inner transposed SpMM runs.
    for (std::size_t p = 0; p < reversed.peers.size(); ++p) {
        const index_t first = reversed.send_offsets[p];
        const index_t count = reversed.send_offsets[p + 1] - first;
        if (count > 0) {
            backend.spmm(blocks_.halo_t(p), dz, recv_.view().row_range(first, count), 0.0f);
        }
    }
    auto exchange = comm_.start_exchange(reversed, recv_.view(), send_.view());
    backend.spmm(blocks_.inner_t(), dz, dh, 0.0f);
    const std::span<const index_t> rows = blocks_.send_rows();
    while (auto peer = exchange->wait_any()) {
        const auto p = static_cast<std::size_t>(*peer);
        const index_t first = reversed.recv_offsets[p];
        const index_t count = reversed.recv_offsets[p + 1] - first;
        backend.scatter_add_rows(
            send_.view().row_range(first, count),
            rows.subspan(static_cast<std::size_t>(first), static_cast<std::size_t>(count)), dh);
    }
    exchange->wait_all();
}

}  // namespace strata
