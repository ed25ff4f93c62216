// GraphHaloExchange: the full-graph executor's HaloExchange, from a rank's graph blocks (exchange
// pattern, send rows, row ids) and its LocalGraph (the structure of A + I, halo ids), over a
// Communicator. The attention structure is built and uploaded once (plan once).
#pragma once

#include "layers/graph_blocks.hpp"
#include "src/comm/communicator.hpp"
#include "src/comm/halo_packing.hpp"
#include "src/nn/halo_exchange.hpp"
#include "src/tensor/csr_matrix.hpp"

namespace strata {

class GraphHaloExchange final : public HaloExchange {
public:
    /// Backend bytes the constructor allocates for `graph` (its memory-plan line).
    [[nodiscard]] static std::int64_t plan_bytes(const LocalGraph& graph);
    /// "attention structure (A + I over owned + halo columns, transpose, ids)" and plan_bytes.
    [[nodiscard]] static MemoryLine plan_line(const LocalGraph& graph);

    /// `blocks` must be GraphBlocks of `graph`; `blocks` and `comm` must outlive it, `graph` need
    /// not. Throws strata::Error if they disagree (owned rows, halo rows).
    /// `precision`: what rows cross the wire as (halo_precision; not fp32: device = cpu only,
    /// else strata::OptionError); `rounding` and `seed` how they round (stochastic: `blocks`
    /// keep their rounding ids).
    GraphHaloExchange(const GraphBlocks& blocks, const LocalGraph& graph, Communicator& comm,
                      HaloPrecision precision = HaloPrecision::fp32,
                      HaloRoundingMode rounding = HaloRoundingMode::nearest,
                      std::uint64_t seed = 0);

    [[nodiscard]] index_t num_owned() const override { return blocks_.num_owned(); }
    [[nodiscard]] index_t num_halo() const override { return num_halo_; }
    /// send rows x width: the gathered rows (gather) or the received gradients (scatter_add);
    /// then, at a precision other than fp32, the packed records of the send and halo rows.
    [[nodiscard]] std::size_t workspace_floats(index_t width) const override;
    /// As OverlappedAggregation's: the precision in force, fp32 or the constructor's.
    [[nodiscard]] HaloPrecision precision() const { return precision_; }
    void set_precision(HaloPrecision precision);
    /// Packs the send rows, exchanges them straight into halo_rows, waits.
    void gather(ConstMatrixView h, MatrixView halo_rows, std::span<float> workspace,
                ExchangeCall call) override;
    /// Sends dhalo to the owners (the reversed pattern), waits, adds the received rows into dh.
    void scatter_add(ConstMatrixView dhalo, MatrixView dh, std::span<float> workspace,
                     ExchangeCall call) override;

    [[nodiscard]] const CsrMatrix& structure() const override { return structure_; }
    [[nodiscard]] const CsrMatrix& structure_t() const override { return structure_t_; }
    [[nodiscard]] std::span<const index_t> transpose_edges() const override {
        return transpose_edges_.span();
    }
    [[nodiscard]] std::span<const global_id> row_ids() const override { return blocks_.row_ids(); }
    [[nodiscard]] std::span<const global_id> column_ids() const override {
        return column_ids_.span();
    }
    [[nodiscard]] HaloBytes bytes_sent() const override { return sent_; }

private:
    const GraphBlocks& blocks_;
    Communicator& comm_;
    HaloPrecision planned_ = HaloPrecision::fp32;  ///< the constructor's (workspace planned for it)
    HaloPrecision precision_ = HaloPrecision::fp32;
    HaloRoundingMode rounding_ = HaloRoundingMode::nearest;
    std::uint64_t seed_ = 0;
    index_t num_halo_ = 0;
    CsrMatrix structure_;
    CsrMatrix structure_t_;
    Buffer<index_t> transpose_edges_;
    Buffer<global_id> column_ids_;
    HaloBytes sent_;
};

}  // namespace strata
