// GraphBlocks: upload once.
#include "layers/graph_blocks.hpp"

#include "src/base/error.hpp"
#include "src/base/trace.hpp"
#include "src/device/counter_rng.hpp"

namespace strata {

std::optional<HaloRounding> halo_rounding(HaloRoundingMode mode, std::uint64_t seed,
                                          HaloPrecision precision, const ExchangeCall& call,
                                          bool backward, std::span<const global_id> ids) {
    if (mode != HaloRoundingMode::stochastic || precision == HaloPrecision::fp32) {
        return std::nullopt;
    }
    STRATA_CHECK(call.node >= 0, "halo exchange: stochastic rounding needs the exchanging node");
    const auto part = static_cast<std::uint64_t>(2 * call.part + (backward ? 1 : 0));
    return HaloRounding{.stream = halo_rounding_stream(seed, call.epoch,
                                                       static_cast<std::uint64_t>(call.node), part),
                        .ids = ids,
                        .first_column = call.first_column};
}

GraphBlocks::GraphBlocks(Backend& backend, const LocalGraph& graph, const Layout& layout,
                         bool rounding_ids)
    : backend_(backend),
      num_owned_(graph.num_owned),
      pattern_(graph.pattern),
      reversed_(graph.pattern.reversed()),
      inner_(CsrMatrix::upload(backend, graph.inner)),
      send_rows_(backend, std::span<const index_t>(graph.send_rows)),
      row_ids_(backend, std::span<const global_id>(graph.owned_original)) {
    STRATA_CHECK(graph.halo.size() == graph.pattern.peers.size(), "LocalGraph: ", graph.halo.size(),
                 " halo blocks for ", graph.pattern.peers.size(), " peers");
    STRATA_CHECK(graph.send_rows.size() == static_cast<std::size_t>(pattern_.num_send_rows()),
                 "LocalGraph: ", graph.send_rows.size(), " send rows, pattern says ",
                 pattern_.num_send_rows());
    if (!layout.inner_symmetric) {
        inner_t_ = CsrMatrix::upload(backend, transpose(graph.inner));
    }
    for (const HostDcsr& block : graph.halo) {
        STRATA_CHECK(block.rows == num_owned_, "LocalGraph: halo block of height ", block.rows,
                     " for ", num_owned_, " owned rows");
        halo_.push_back(CsrMatrix::upload(backend, block.block));
        halo_rows_.emplace_back(backend, std::span<const index_t>(block.row_ids));
        halo_t_.push_back(CsrMatrix::upload(backend, transpose(block)));
    }
    if (rounding_ids) {
        send_ids_.reserve(graph.send_rows.size());
        for (const index_t r : graph.send_rows) {
            send_ids_.push_back(graph.owned_original[static_cast<std::size_t>(r)]);
        }
        halo_ids_ = graph.halo_original;
        STRATA_CHECK(halo_ids_.size() == static_cast<std::size_t>(pattern_.num_recv_rows()),
                     "LocalGraph: ", halo_ids_.size(), " halo ids, pattern receives ",
                     pattern_.num_recv_rows(), " rows");
    }
}

GraphBlocks::Layout GraphBlocks::plan(const LocalGraph& graph) {
    Layout layout;
    layout.inner_symmetric = is_symmetric(graph.inner);
    std::int64_t bytes = csr_bytes(graph.inner.rows, graph.inner.nnz());
    if (!layout.inner_symmetric) {
        bytes += csr_bytes(graph.inner.cols, graph.inner.nnz());
    }
    for (const HostDcsr& block : graph.halo) {
        bytes +=
            dcsr_bytes(block.listed_rows(), block.nnz()) + csr_bytes(block.cols(), block.nnz());
    }
    bytes += static_cast<std::int64_t>(graph.send_rows.size() * sizeof(index_t) +
                                       graph.owned_original.size() * sizeof(global_id));
    layout.bytes = bytes;
    return layout;
}

WireExchange start_boundary_exchange(const GraphBlocks& blocks, Communicator& comm,
                                     HaloPrecision precision, ConstMatrixView h, MatrixView send,
                                     MatrixView recv, std::span<float> packed,
                                     WireExchange::Arrival arrival, const HaloRounding* rounding) {
    const ExchangePattern& pattern = blocks.pattern();
    if (precision != HaloPrecision::fp32) {
        return {comm, precision, pattern, h, blocks.send_rows(), recv, packed, arrival, rounding};
    }
    {
        const trace::Span span("gather", "exchange", h.cols);
        blocks.backend().gather_rows(h, blocks.send_rows(), send);
    }
    return {comm, precision, pattern, send, recv, packed};
}

}  // namespace strata
