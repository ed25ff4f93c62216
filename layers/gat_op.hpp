// GatOp: one graph attention layer (Veličković et al. 2018) over each vertex's in-neighbours and
// itself (the pattern of A + I), H heads of F features:
//   Wh = x W,  s_src[j, h] = a_src[h] · Wh[j, h, :],  s_dst[i, h] = a_dst[h] · Wh[i, h, :],
//   e_ijh = LeakyReLU(s_dst[i, h] + s_src[j, h]),  α_ijh = softmax over j ∈ N(i) ∪ {i} of e_ijh,
//   attention dropout on α (inverted, keyed by the edge's global ids),
//   y[i, h, :] = Σ_j α_ijh Wh[j, h, :]  — heads concatenated (H·F columns) or averaged (F),
//   plus an optional bias.
// Rows of peers come through the executor's HaloExchange: [Wh | s_src] of every halo row is
// gathered before the softmax, so each row's softmax sees all its scores (exact across ranks).
// Backward keeps nothing of its own: it recomputes Wh, the scores and α from x (re-exchanging
// the halo rows, counted as ExchangePurpose::recompute) instead of keeping O(E·H) per layer.
// The op needs all rows at once: a partial row range throws.
#pragma once

#include <cstdint>
#include <optional>

#include "src/nn/op.hpp"

namespace strata {

struct GatOptions {
    bool concat = true;              ///< heads concatenated (H·F columns), else averaged (F)
    float negative_slope = 0.2f;     ///< LeakyReLU slope of the scores
    float attention_dropout = 0.0f;  ///< rate on α (training only); 0 = none
    bool bias = true;                ///< a bias added to the output
    float weight_decay = 0.0f;       ///< L2 coefficient of weight, att_src and att_dst
    std::uint64_t seed = 0;          ///< attention dropout stream
    std::uint64_t dropout_id = 0;    ///< the `layer` of the dropout key (distinct per op)
};

class GatOp final : public Op {
public:
    /// Input x: N x in; output N x (concat ? heads·out_per_head : out_per_head). Parameters:
    /// "weight" (in x H·F, Glorot), "att_src" and "att_dst" (H x F, Glorot), "bias" (1 x output
    /// columns, zeros) when options.bias. Throws strata::Error on non-positive sizes, a slope
    /// < 0 or a dropout rate outside [0, 1).
    GatOp(index_t in, index_t heads, index_t out_per_head, GatOptions options);

    [[nodiscard]] OpKind kind() const override { return OpKind::attention; }
    /// "gat 16 -> 8 heads x 8 (concat), attention dropout 0.6".
    [[nodiscard]] std::string describe() const override;
    [[nodiscard]] int num_inputs() const override { return 1; }
    [[nodiscard]] index_t output_cols(std::span<const index_t> input_cols) const override;
    [[nodiscard]] std::vector<ParameterSpec> parameter_specs(
        std::span<const index_t> input_cols) const override;
    void bind_parameters(std::span<const Parameter> parameters) override;
    /// Backward reads x only (everything else is recomputed).
    [[nodiscard]] Saves saves() const override { return {{0}, false}; }
    /// [Wh | s_src] of owned and halo rows, s_dst, the edge scores (nnz x H), the exchange
    /// buffers; 0 without a halo exchange in the query.
    [[nodiscard]] std::size_t forward_workspace(const WorkspaceQuery& query) const override;
    /// The forward's, plus α, their gradients and those of [Wh | s_src | s_dst].
    [[nodiscard]] std::size_t backward_workspace(const WorkspaceQuery& query) const override;
    /// y = GAT(x) over all rows (rows must be all of them).
    void forward(const OpContext& context, const ForwardArgs& args) override;
    /// dW, da_src, da_dst, db += ...;  dx (=|+=) ... over all rows.
    void backward(const OpContext& context, const BackwardArgs& args) override;

private:
    struct Attention;
    [[nodiscard]] index_t width() const { return heads_ * per_head_; }
    [[nodiscard]] index_t out_cols() const { return options_.concat ? width() : per_head_; }
    [[nodiscard]] DropoutKey key(const OpContext& context) const;
    /// Wh and s_src of owned and halo rows, s_dst, and the edge scores e, from x.
    void attend(const OpContext& context, ConstMatrixView x, const Attention& a,
                ExchangePurpose purpose) const;

    index_t in_;
    index_t heads_;
    index_t per_head_;
    GatOptions options_;
    Parameter weight_;
    Parameter att_src_;
    Parameter att_dst_;
    std::optional<Parameter> bias_;
};

}  // namespace strata
