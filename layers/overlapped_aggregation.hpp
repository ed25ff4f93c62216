// OverlappedAggregation: the full-graph executor's GraphOperator. Z = Â H for this rank's rows,
// overlapping the halo exchange with the inner SpMM (and the reverse for backward). The
// schedule lives here, apart from the ops; its exchange buffers are the caller's scratch.
#pragma once

#include "layers/graph_blocks.hpp"
#include "src/comm/communicator.hpp"
#include "src/comm/halo_packing.hpp"
#include "src/nn/graph_operator.hpp"

namespace strata {

/// The row blocks the inner SpMM is split into for progress calls: output blocks of about
/// 1 MiB (rows x width floats), at least 16 and at most 64 blocks, but no block under 64 rows
/// (so a small part is split less, one of under 64 rows not at all). Returns the rows per
/// block (the last block may be shorter); `rows` >= 0, `width` >= 1.
[[nodiscard]] index_t overlap_block_rows(index_t rows, index_t width);

/// The overlapped aggregation's scratch for `send_rows` boundary rows and `recv_rows` halo rows
/// of `width` values. fp32: (send + recv rows) x width, both sets of rows. bf16, int8: recv rows
/// x width (the backward's outgoing gradients, computed in fp32, then packed), then the packed
/// records of both (WireExchange::packed_floats) — the forward packs the boundary rows straight
/// from h, and received records are read as they are — or fp32's, if larger (set_precision may
/// switch the run to fp32).
[[nodiscard]] std::size_t aggregation_workspace_floats(HaloPrecision precision, index_t send_rows,
                                                       index_t recv_rows, index_t width);

struct AggregationOptions {
    /// true: the inner SpMM runs in row blocks (overlap_block_rows) with a Communicator
    /// progress() call after each, so that the exchange advances meanwhile (when the
    /// communicator needs_progress()); false: one inner SpMM, then the waits. Same bits.
    bool overlap = true;
    /// What the halo rows are sent as (the run option halo_precision; src/comm/halo_packing):
    /// forward rows and backward gradients alike. Not fp32: packed into the workspace on the
    /// sender, the received records read as they are (device = cpu only).
    HaloPrecision precision = HaloPrecision::fp32;
    /// Below fp32, how values round to the precision (the run option halo_rounding): to
    /// nearest, or stochastically keyed by (seed, epoch, node, vertex, column) — the blocks
    /// must then keep their rounding ids (GraphBlocks).
    HaloRoundingMode rounding = HaloRoundingMode::nearest;
    std::uint64_t seed = 0;  ///< the run's seed, for stochastic rounding's streams
};

class OverlappedAggregation final : public GraphOperator {
public:
    /// `blocks` and `comm` must outlive it. Throws strata::OptionError for a precision other
    /// than fp32 on a backend that is not the CPU's.
    OverlappedAggregation(const GraphBlocks& blocks, Communicator& comm,
                          AggregationOptions options = {});

    [[nodiscard]] index_t num_rows() const override { return blocks_.num_owned(); }
    /// aggregation_workspace_floats at options().precision and this rank's exchange pattern.
    [[nodiscard]] std::size_t workspace_floats(index_t width) const override;

    /// The precision in force (options().precision until set_precision changes it).
    [[nodiscard]] HaloPrecision precision() const { return precision_; }
    /// Sends at `precision` from the next call on: fp32 or options().precision (the workspace
    /// was planned for it). The precision guard's fp32 evaluation and its fallback. Throws
    /// strata::Error otherwise.
    void set_precision(HaloPrecision precision);

    /// z[rows] = (Â h)[rows].   All rows: pack boundary rows → start exchange →
    /// z = A_inner h (in row blocks with progress calls when overlapping) → z[rows_p] +=
    /// A_halo[p] h_p per arrival (compressed rows: only the rows with entries from p). A partial
    /// range is computed from the
    /// inner block alone and needs a rank without peers (chunks across ranks belong to a
    /// layer-pipelined executor, which keeps its own halo rows).
    void forward(ConstMatrixView h, MatrixView z, RowRange rows, std::span<float> workspace,
                 ExchangeCall call) override;
    /// dh[rows] = (Âᵀ dz)[rows] + beta dh[rows].   All rows: g_p = A_halo[p]ᵀ dz →
    /// start reversed exchange → dh = A_innerᵀ dz + beta dh (in row blocks with progress calls
    /// when overlapping) → dh[send rows of p] += received g
    /// from p, per arrival. A partial range needs a rank without peers, as forward.
    void backward(ConstMatrixView dz, MatrixView dh, RowRange rows, float beta,
                  std::span<float> workspace, ExchangeCall call) override;

    [[nodiscard]] HaloBytes bytes_sent() const override { return sent_; }
    [[nodiscard]] const AggregationOptions& options() const { return options_; }

private:
    [[nodiscard]] bool whole(RowRange rows) const;
    /// The rows `rows` of an output given as all rows or as exactly those rows.
    [[nodiscard]] MatrixView rows_of(MatrixView y, RowRange rows) const;
    /// y = a x + beta y over all rows of `a`, overlapping the exchange in flight.
    void inner_spmm(const CsrMatrix& a, ConstMatrixView x, MatrixView y, float beta);

    const GraphBlocks& blocks_;
    Communicator& comm_;
    AggregationOptions options_;
    HaloPrecision precision_ = HaloPrecision::fp32;
    HaloBytes sent_;
};

}  // namespace strata
