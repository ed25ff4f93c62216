// GraphHaloExchange: the attention structure (built on the host once) and the two exchanges, at
// the halo precision (WireExchange).
#include "layers/graph_halo_exchange.hpp"

#include "src/base/error.hpp"
#include "src/comm/wire_exchange.hpp"

namespace strata {
namespace {

std::int64_t entries(const LocalGraph& graph) {
    std::int64_t nnz = graph.inner.nnz();
    for (const HostDcsr& block : graph.halo) {
        nnz += block.nnz();
    }
    return nnz;
}

/// Row i: the inner block's columns, then each peer's halo columns shifted by N + its first
/// received row. Inner columns are < N and peers come in ascending order: rows stay sorted.
/// Row lengths first, then the inner block and each peer's listed rows at a row cursor.
HostCsr joined_structure(const LocalGraph& graph) {
    const index_t n = graph.num_owned;
    const auto rows = static_cast<std::size_t>(n);
    HostCsr a;
    a.rows = n;
    a.cols = n + graph.pattern.num_recv_rows();
    a.row_ptr.assign(rows + 1, 0);
    for (std::size_t i = 0; i < rows; ++i) {
        a.row_ptr[i + 1] = graph.inner.row_ptr[i + 1] - graph.inner.row_ptr[i];
    }
    for (const HostDcsr& block : graph.halo) {
        for (std::size_t r = 0; r < block.row_ids.size(); ++r) {
            a.row_ptr[static_cast<std::size_t>(block.row_ids[r]) + 1] +=
                block.block.row_ptr[r + 1] - block.block.row_ptr[r];
        }
    }
    for (std::size_t i = 0; i < rows; ++i) {
        a.row_ptr[i + 1] += a.row_ptr[i];
    }
    a.col_idx.resize(static_cast<std::size_t>(a.row_ptr[rows]));
    std::vector<index_t> next(a.row_ptr.begin(), a.row_ptr.end() - 1);
    for (std::size_t i = 0; i < rows; ++i) {
        for (index_t k = graph.inner.row_ptr[i]; k < graph.inner.row_ptr[i + 1]; ++k) {
            a.col_idx[static_cast<std::size_t>(next[i]++)] =
                graph.inner.col_idx[static_cast<std::size_t>(k)];
        }
    }
    for (std::size_t p = 0; p < graph.halo.size(); ++p) {
        const HostDcsr& block = graph.halo[p];
        const index_t shift = n + graph.pattern.recv_offsets[p];
        for (std::size_t r = 0; r < block.row_ids.size(); ++r) {
            index_t& cursor = next[static_cast<std::size_t>(block.row_ids[r])];
            for (index_t k = block.block.row_ptr[r]; k < block.block.row_ptr[r + 1]; ++k) {
                a.col_idx[static_cast<std::size_t>(cursor++)] =
                    shift + block.block.col_idx[static_cast<std::size_t>(k)];
            }
        }
    }
    a.values.assign(a.col_idx.size(), 1.0f);
    return a;
}

std::vector<global_id> column_ids_of(const LocalGraph& graph) {
    std::vector<global_id> ids = graph.owned_original;
    ids.insert(ids.end(), graph.halo_original.begin(), graph.halo_original.end());
    return ids;
}

}  // namespace

std::int64_t GraphHaloExchange::plan_bytes(const LocalGraph& graph) {
    const std::int64_t nnz = entries(graph);
    const index_t columns = graph.num_owned + graph.pattern.num_recv_rows();
    return csr_bytes(graph.num_owned, nnz) + csr_bytes(columns, nnz) +
           nnz * static_cast<std::int64_t>(sizeof(index_t)) +
           static_cast<std::int64_t>(columns) * static_cast<std::int64_t>(sizeof(global_id));
}

MemoryLine GraphHaloExchange::plan_line(const LocalGraph& graph) {
    return {"attention structure (A + I over owned + halo columns, transpose, ids)",
            plan_bytes(graph)};
}

GraphHaloExchange::GraphHaloExchange(const GraphBlocks& blocks, const LocalGraph& graph,
                                     Communicator& comm, HaloPrecision precision,
                                     HaloRoundingMode rounding, std::uint64_t seed)
    : blocks_(blocks),
      comm_(comm),
      planned_(precision),
      precision_(precision),
      rounding_(rounding),
      seed_(seed),
      num_halo_(graph.pattern.num_recv_rows()) {
    STRATA_CHECK(rounding == HaloRoundingMode::nearest ||
                     blocks.halo_ids().size() == static_cast<std::size_t>(num_halo_),
                 "halo exchange: stochastic halo rounding needs graph blocks with rounding ids");
    STRATA_CHECK_OPTION(
        precision == HaloPrecision::fp32 || blocks.backend().kind() == DeviceKind::cpu,
        "halo_precision", to_string(precision),
        "packs halo rows on the host: it needs device = cpu (use fp32 on cuda)");
    STRATA_CHECK(graph.num_owned == blocks.num_owned(), "halo exchange: LocalGraph has ",
                 graph.num_owned, " owned rows, the graph blocks ", blocks.num_owned());
    STRATA_CHECK(num_halo_ == blocks.pattern().num_recv_rows() &&
                     graph.halo_original.size() == static_cast<std::size_t>(num_halo_),
                 "halo exchange: LocalGraph has ", graph.halo_original.size(),
                 " halo ids and receives ", num_halo_, " rows, the graph blocks ",
                 blocks.pattern().num_recv_rows());
    Backend& backend = blocks.backend();
    const HostCsr a = joined_structure(graph);
    std::vector<index_t> edges;
    const HostCsr t = transpose_with_entries(a, edges);
    structure_ = CsrMatrix::upload(backend, a);
    structure_t_ = CsrMatrix::upload(backend, t);
    transpose_edges_ = Buffer<index_t>(backend, std::span<const index_t>(edges));
    const std::vector<global_id> ids = column_ids_of(graph);
    column_ids_ = Buffer<global_id>(backend, std::span<const global_id>(ids));
}

void GraphHaloExchange::set_precision(HaloPrecision precision) {
    STRATA_CHECK(precision == HaloPrecision::fp32 || precision == planned_,
                 "halo exchange: precision ", to_string(precision), " in a run planned for ",
                 to_string(planned_));
    precision_ = precision;
}

std::size_t GraphHaloExchange::workspace_floats(index_t width) const {
    const ExchangePattern& pattern = blocks_.pattern();
    return static_cast<std::size_t>(pattern.num_send_rows()) * static_cast<std::size_t>(width) +
           WireExchange::packed_floats(planned_, pattern.num_send_rows(), pattern.num_recv_rows(),
                                       width);
}

void GraphHaloExchange::gather(ConstMatrixView h, MatrixView halo_rows, std::span<float> workspace,
                               ExchangeCall call) {
    const ExchangePattern& pattern = blocks_.pattern();
    STRATA_CHECK(h.rows == num_owned() && halo_rows.rows == num_halo_ && halo_rows.cols == h.cols,
                 "halo exchange: gather of ", h.rows, " x ", h.cols, " into ", halo_rows.rows,
                 " x ", halo_rows.cols, ", expected ", num_owned(), " and ", num_halo_, " rows");
    if (pattern.peers.empty()) {
        return;
    }
    STRATA_CHECK(workspace.size() >= workspace_floats(h.cols), "halo exchange: workspace of ",
                 workspace.size(), " floats, needs ", workspace_floats(h.cols));
    const MatrixView send{workspace.data(), pattern.num_send_rows(), h.cols};
    const std::optional<HaloRounding> rounding =
        halo_rounding(rounding_, seed_, precision_, call, false, blocks_.send_ids());
    WireExchange exchange = start_boundary_exchange(
        blocks_, comm_, precision_, h, send, halo_rows, workspace.subspan(send.size()),
        WireExchange::Arrival::unpacked, rounding ? &*rounding : nullptr);
    (call.purpose == ExchangePurpose::recompute  ? sent_.recompute
     : call.purpose == ExchangePurpose::backward ? sent_.backward
                                                 : sent_.forward) += exchange.bytes_sent();
    sent_.inter_node += exchange.inter_node_bytes_sent();
    exchange.wait_all();
}

void GraphHaloExchange::scatter_add(ConstMatrixView dhalo, MatrixView dh,
                                    std::span<float> workspace, ExchangeCall call) {
    const ExchangePattern& reversed = blocks_.reversed_pattern();  // send = forward recv
    STRATA_CHECK(dh.rows == num_owned() && dhalo.rows == num_halo_ && dhalo.cols == dh.cols,
                 "halo exchange: scatter_add of ", dhalo.rows, " x ", dhalo.cols, " into ", dh.rows,
                 " x ", dh.cols, ", expected ", num_halo_, " and ", num_owned(), " rows");
    if (reversed.peers.empty()) {
        return;
    }
    STRATA_CHECK(workspace.size() >= workspace_floats(dh.cols), "halo exchange: workspace of ",
                 workspace.size(), " floats, needs ", workspace_floats(dh.cols));
    // Below fp32 the incoming gradients stay records, summed into dh as they are.
    const bool packed = precision_ != HaloPrecision::fp32;
    const MatrixView incoming{packed ? nullptr : workspace.data(), reversed.num_recv_rows(),
                              dh.cols};
    const std::optional<HaloRounding> rounding =
        halo_rounding(rounding_, seed_, precision_, call, true, blocks_.halo_ids());
    WireExchange exchange(comm_, precision_, reversed, dhalo, incoming,
                          workspace.subspan(packed ? 0 : incoming.size()),
                          WireExchange::Arrival::packed, rounding ? &*rounding : nullptr);
    sent_.backward += exchange.bytes_sent();
    sent_.inter_node += exchange.inter_node_bytes_sent();
    exchange.wait_all();
    // One call per peer, in peer order: a peer's send rows are distinct, so on CUDA no two
    // atomics meet on one element and the result is reproducible (Backend::scatter_add_rows).
    const std::span<const index_t> send_rows = blocks_.send_rows();
    for (std::size_t p = 0; p < reversed.peers.size(); ++p) {
        const index_t first = reversed.recv_offsets[p];
        const index_t count = reversed.recv_offsets[p + 1] - first;
        if (count == 0) {
            continue;
        }
        const std::span<const index_t> rows_of_p =
            send_rows.subspan(static_cast<std::size_t>(first), static_cast<std::size_t>(count));
        if (packed) {
            blocks_.backend().scatter_add_packed_rows(exchange.received(static_cast<int>(p)),
                                                      rows_of_p, dh);
        } else {
            blocks_.backend().scatter_add_rows(incoming.row_range(first, count), rows_of_p, dh);
        }
    }
}

}  // namespace strata
