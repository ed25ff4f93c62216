// BatchNormOp: y = (x - μ)/sqrt(σ² + eps)·γ + β per column, with μ, σ² (biased) over ALL rows of
// ALL ranks in training (exact under any K: per-column sums are all-reduced through
// OpContext::comm) and the running estimates in evaluation (PyTorch semantics: running = (1 -
// momentum)·running + momentum·batch, with the unbiased variance). γ "weight" (ones), β "bias"
// (zeros), no weight decay; "running_mean" (zeros) and "running_var" (ones) are non-trainable
// parameters: the optimizer skips them, checkpoints carry them.
//
// Training needs every row at once: forward and backward over a partial row range (chunked
// execution) would normalise with the statistics of the chunk, so they throw. Evaluation is
// row-local and runs over any range.
#pragma once

#include "src/nn/op.hpp"

namespace strata {

class BatchNormOp final : public Op {
public:
    explicit BatchNormOp(index_t cols, float eps = 1e-5f, float momentum = 0.1f);

    /// Row-local only in evaluation (see above); the memory plan treats it like any pointwise op.
    [[nodiscard]] OpKind kind() const override { return OpKind::pointwise; }
    /// Its statistics span all rows (of all ranks).
    [[nodiscard]] bool row_local() const override { return false; }
    /// "batch_norm 16".
    [[nodiscard]] std::string describe() const override;
    [[nodiscard]] int num_inputs() const override { return 1; }
    [[nodiscard]] index_t output_cols(std::span<const index_t> input_cols) const override;
    /// weight, bias (trainable, no decay); running_mean, running_var (not trainable); 1 x cols.
    [[nodiscard]] std::vector<ParameterSpec> parameter_specs(
        std::span<const index_t> input_cols) const override;
    void bind_parameters(std::span<const Parameter> parameters) override;
    /// Backward reads x (the batch statistics are recomputed: nothing is stored in the op).
    [[nodiscard]] Saves saves() const override { return {{0}, false}; }
    /// 4·cols floats: the batch mean and variance and two column sums.
    [[nodiscard]] std::size_t forward_workspace(const WorkspaceQuery& query) const override;
    [[nodiscard]] std::size_t backward_workspace(const WorkspaceQuery& query) const override;
    /// Training (all rows): batch statistics over every rank (3 all-reduces: the row count,
    /// Σx, Σ(x - μ)²), y, and, unless context.recompute, the running estimates. Evaluation:
    /// y from the running estimates.
    void forward(const OpContext& context, const ForwardArgs& args) override;
    /// All rows: dγ += Σ dy ⊙ x̂, dβ += Σ dy over this rank's rows (the executor sums the
    /// ranks); dx (=|+=) γ r (dy - Σdy/N - x̂ Σ(dy ⊙ x̂)/N) with the sums over every rank.
    void backward(const OpContext& context, const BackwardArgs& args) override;

private:
    /// mean and var (biased) of the columns of x over all ranks, into the workspace's first
    /// 2·cols floats (the next cols hold Σ(x - μ)²); returns the global row count N.
    double batch_statistics(const OpContext& context, ConstMatrixView x,
                            std::span<float> workspace) const;
    void check_all_rows(const char* pass, RowRange rows, index_t all) const;

    index_t cols_;
    float eps_;
    float momentum_;
    Parameter weight_;
    Parameter bias_;
    Parameter running_mean_;
    Parameter running_var_;
};

}  // namespace strata
