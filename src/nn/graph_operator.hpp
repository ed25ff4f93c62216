// GraphOperator: Z = Â H for this rank's rows (Â: the model's Normalization of A), the aggregation
// service an executor lends to the ops of a model. The full-graph executor's implementation
// overlaps the halo exchange with the SpMMs (layers/overlapped_aggregation.hpp); ops never see
// partitions or messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "src/base/types.hpp"
#include "src/tensor/matrix_view.hpp"

namespace strata {

/// Which matrix an aggregation multiplies by. Rows are destinations (in-edges); degrees are
/// weighted in-degrees of the stored A (PyG's default on a directed graph).
enum class Normalization {
    symmetric,  ///< Â = D^-1/2 (A+I) D^-1/2, d_v = 1 + Σ_u A_vu (GCN, GCNII, APPNP, ResGCN+; its
                ///< pattern A+I is what GAT attends over)
    mean,       ///< D^-1 A with d_v = Σ_u A_vu and no self loop; a row without in-edges is zero
                ///< (GraphSAGE mean)
    sum,        ///< A, no self loop (GIN)
};
/// "symmetric", "mean", "sum".
[[nodiscard]] std::string_view to_string(Normalization n);
/// The inverse of to_string; nullopt for any other text.
[[nodiscard]] std::optional<Normalization> parse_normalization(std::string_view text);

/// Why rows are exchanged: counted separately so that recomputation's traffic is visible.
enum class ExchangePurpose { forward, backward, recompute };

/// One call's exchange: what it is for (its byte counter), and what keys the stochastic
/// rounding of its rows (halo_rounding_stream(seed, epoch, node, part) and the global columns,
/// src/comm/halo_packing.hpp): unused when rows are sent as they are or rounded to nearest. A
/// recomputation keys as the forward it repeats, so it sends the same bits.
struct ExchangeCall {
    ExchangePurpose purpose = ExchangePurpose::forward;
    std::uint64_t epoch = 0;
    int node = -1;             ///< the model node that exchanges (OpContext::node)
    int part = 0;              ///< which of the node's exchanges (GAT sends two tensors)
    index_t first_column = 0;  ///< the rows' first column in the whole width (a grid's slice)

    constexpr ExchangeCall() = default;
    // NOLINTNEXTLINE(google-explicit-constructor): a bare purpose is a call without a key
    constexpr ExchangeCall(ExchangePurpose p) : purpose(p) {}
    constexpr ExchangeCall(ExchangePurpose p, std::uint64_t e, int n, int k = 0)
        : purpose(p), epoch(e), node(n), part(k) {}
};

/// Halo payload sent by an operator, by purpose (bytes, this rank).
struct HaloBytes {
    std::int64_t forward = 0;
    std::int64_t backward = 0;
    std::int64_t recompute = 0;
    /// Of all three, the bytes sent to ranks on another node (Communicator::node_of).
    std::int64_t inter_node = 0;
};

/// Scratch of one exchange at `width` columns: the packed send rows, then the received rows.
[[nodiscard]] inline std::size_t exchange_workspace_floats(std::int64_t send_rows,
                                                           std::int64_t recv_rows, index_t width) {
    return static_cast<std::size_t>(send_rows + recv_rows) * static_cast<std::size_t>(width);
}

class GraphOperator {
public:
    virtual ~GraphOperator() = default;
    /// Rows this rank owns (rows of H and Z).
    [[nodiscard]] virtual index_t num_rows() const = 0;
    /// Floats of scratch one forward or backward call needs at `width` columns (the exchange
    /// buffers). The caller provides it: executors plan it with the other buffers.
    [[nodiscard]] virtual std::size_t workspace_floats(index_t width) const = 0;
    /// Floats of scratch one backward call needs at `width` columns, accumulating into dh (beta
    /// != 0) or not. workspace_floats(width) unless accumulating costs more (the grid's).
    [[nodiscard]] virtual std::size_t backward_workspace_floats(index_t width,
                                                                bool accumulate) const {
        (void)accumulate;
        return workspace_floats(width);
    }

    /// z[rows] = (Â h)[rows].   h: num_rows x w (all owned rows); z: num_rows x w (only `rows`
    /// written) or, for a partial range, rows.count x w (exactly those rows: a chunk's buffer).
    /// Reads every row of h (and peers' rows of H through the exchange).
    virtual void forward(ConstMatrixView h, MatrixView z, RowRange rows, std::span<float> workspace,
                         ExchangeCall call) = 0;
    /// dh[rows] = (Âᵀ dz)[rows] + beta dh[rows].   dz: num_rows x w; dh: num_rows x w or, for a
    /// partial range, rows.count x w (as z of forward). Reads every row of dz. `call`'s purpose
    /// is backward.
    virtual void backward(ConstMatrixView dz, MatrixView dh, RowRange rows, float beta,
                          std::span<float> workspace, ExchangeCall call) = 0;

    /// Payload sent so far, by purpose.
    [[nodiscard]] virtual HaloBytes bytes_sent() const = 0;
    /// Payload its layout switches sent so far (the feature grid's all-to-all inside a feature
    /// group, layers/grid_aggregation.hpp), by purpose; none for a 1D operator.
    [[nodiscard]] virtual HaloBytes switch_bytes() const { return {}; }
};

}  // namespace strata
