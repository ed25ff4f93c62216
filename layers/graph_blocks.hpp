// GraphBlocks: a rank's graph operator (a normalized LocalGraph) uploaded to a backend once (inner
// block, one compressed-row halo block per peer with its row ids, their transposes, send rows,
// row ids), shared by every aggregation.
#pragma once

#include <optional>
#include <vector>

#include "partition/local_graph.hpp"
#include "src/comm/wire_exchange.hpp"
#include "src/device/buffer.hpp"
#include "src/nn/executor.hpp"
#include "src/tensor/csr_matrix.hpp"

namespace strata {

class GraphBlocks {
public:
    /// What uploading a LocalGraph takes, from its sizes and structure (an O(nnz) symmetry test).
    struct Layout {
        bool inner_symmetric = false;  ///< the inner block is its own transpose: stored once
        std::int64_t bytes = 0;        ///< backend bytes the constructor allocates
    };
    [[nodiscard]] static Layout plan(const LocalGraph& graph);

    /// Uploads everything and builds the transposed blocks (plan once). `graph` holds the
    /// operator's values (normalized(raw, n), partition/local_normalize.hpp). A symmetric inner
    /// block (e.g. Â of an undirected graph restricted to owned rows and columns) is its own
    /// transpose and is stored once. `layout` must be plan(graph). `rounding_ids`: also keep
    /// the global ids of the send and halo rows in host memory (send_ids, halo_ids).
    GraphBlocks(Backend& backend, const LocalGraph& graph, const Layout& layout,
                bool rounding_ids = false);
    GraphBlocks(Backend& backend, const LocalGraph& graph)
        : GraphBlocks(backend, graph, plan(graph)) {}

    [[nodiscard]] Backend& backend() const { return backend_; }
    [[nodiscard]] index_t num_owned() const { return num_owned_; }
    [[nodiscard]] const ExchangePattern& pattern() const { return pattern_; }
    [[nodiscard]] const ExchangePattern& reversed_pattern() const { return reversed_; }
    [[nodiscard]] const CsrMatrix& inner() const { return inner_; }
    [[nodiscard]] const CsrMatrix& inner_t() const { return inner_t_ ? *inner_t_ : inner_; }
    [[nodiscard]] bool inner_symmetric() const { return !inner_t_.has_value(); }
    /// Peer `peer`'s halo block, compressed rows: listed rows x recv_count; its row r is owned
    /// row halo_rows(peer)[r] (Backend::spmm_scatter_add).
    [[nodiscard]] const CsrMatrix& halo(std::size_t peer) const { return halo_[peer]; }
    [[nodiscard]] std::span<const index_t> halo_rows(std::size_t peer) const {
        return halo_rows_[peer].span();
    }
    /// Its transpose, recv_count x num_owned (column ids = owned rows; reads only listed rows).
    [[nodiscard]] const CsrMatrix& halo_t(std::size_t peer) const { return halo_t_[peer]; }
    /// Local rows to pack for the forward exchange, peer after peer (backend memory).
    [[nodiscard]] std::span<const index_t> send_rows() const { return send_rows_.span(); }
    /// Original (dataset) id of each owned row: the key of dropout masks (backend memory).
    [[nodiscard]] std::span<const global_id> row_ids() const { return row_ids_.span(); }
    /// With rounding_ids (host memory, empty otherwise): the original id of each send row,
    /// peer after peer, and of each halo row in receive order — the keys of stochastic halo
    /// rounding (src/comm/halo_packing.hpp), forward and backward.
    [[nodiscard]] std::span<const global_id> send_ids() const { return send_ids_; }
    [[nodiscard]] std::span<const global_id> halo_ids() const { return halo_ids_; }

private:
    Backend& backend_;
    index_t num_owned_ = 0;
    ExchangePattern pattern_;
    ExchangePattern reversed_;
    CsrMatrix inner_;
    std::optional<CsrMatrix> inner_t_;  ///< absent when the inner block is symmetric
    std::vector<CsrMatrix> halo_;
    std::vector<Buffer<index_t>> halo_rows_;
    std::vector<CsrMatrix> halo_t_;
    Buffer<index_t> send_rows_;
    Buffer<global_id> row_ids_;
    std::vector<global_id> send_ids_;
    std::vector<global_id> halo_ids_;
};

/// The stochastic rounding of one exchange (nullopt when `mode` is nearest or `precision` fp32):
/// stream halo_rounding_stream(seed, call.epoch, call.node, 2 call.part, + 1 for `backward`),
/// `ids` one per packed row (send_ids forward, halo_ids backward), the call's first column. A
/// recomputation keys as its forward: the same bits. Throws strata::Error without a node.
[[nodiscard]] std::optional<HaloRounding> halo_rounding(HaloRoundingMode mode, std::uint64_t seed,
                                                        HaloPrecision precision,
                                                        const ExchangeCall& call, bool backward,
                                                        std::span<const global_id> ids);

/// Starts the exchange of h's boundary rows (blocks.send_rows(), in the forward pattern) into
/// `recv` at `precision`: gathered into `send` at fp32, packed straight from h below it (one pass,
/// `send` untouched). `send`: send rows x h.cols; `packed`, `arrival` and `rounding` (its ids
/// blocks.send_ids()) as WireExchange's.
[[nodiscard]] WireExchange start_boundary_exchange(
    const GraphBlocks& blocks, Communicator& comm, HaloPrecision precision, ConstMatrixView h,
    MatrixView send, MatrixView recv, std::span<float> packed,
    WireExchange::Arrival arrival = WireExchange::Arrival::unpacked,
    const HaloRounding* rounding = nullptr);

}  // namespace strata
