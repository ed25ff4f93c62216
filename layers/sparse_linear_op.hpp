// SparseLinearOp: y = dropout(x) W over a model input stored sparse (layers/sparse_features.hpp),
// the input's dropout fused in: it acts on the stored non-zeros only (a dropped zero is a zero),
// with the mask of the dense BiasActivationOp it replaces, so both give the same values.
#pragma once

#include "src/nn/op.hpp"

namespace strata {

struct SparseLinearOptions {
    float dropout = 0.0f;          ///< the input dropout's rate; 0 = none
    std::uint64_t seed = 0;        ///< its stream (BiasActivationOptions::seed)
    std::uint64_t dropout_id = 0;  ///< its `layer` key (BiasActivationOptions::dropout_id)
};

class SparseLinearOp final : public Op {
public:
    /// W: in x out, Glorot-uniform, L2 coefficient `weight_decay` (LinearOp's parameter, under
    /// the same name, so checkpoints and initial values are shared with the dense model).
    SparseLinearOp(index_t in, index_t out, float weight_decay, const SparseLinearOptions& options);

    [[nodiscard]] OpKind kind() const override { return OpKind::linear; }
    /// The input dropout's rate (0: none).
    [[nodiscard]] float dropout() const { return options_.dropout; }
    [[nodiscard]] std::string describe() const override;
    [[nodiscard]] int num_inputs() const override { return 1; }
    [[nodiscard]] index_t output_cols(std::span<const index_t> input_cols) const override;
    [[nodiscard]] std::vector<ParameterSpec> parameter_specs(
        std::span<const index_t> input_cols) const override;
    void bind_parameters(std::span<const Parameter> parameters) override;
    /// Backward reads the sparse input from the context, not a saved tensor.
    [[nodiscard]] Saves saves() const override { return {{}, false}; }
    /// Reads every row's non-zeros at once: not run on row chunks.
    [[nodiscard]] bool row_local() const override { return false; }
    /// y[rows] = d(x)[rows] W, d(x)_k = keep_k x_k / (1 - rate) for each stored entry
    /// k = (i, c), keep_k the dense dropout's bit for (row id of i, c) (regenerated for all rows);
    /// no dropout outside training. An SpMM with the CSR x.
    void forward(const OpContext& context, const ForwardArgs& args) override;
    /// dW += d(x)ᵀ dy: an SpMM with xᵀ whose values are d(x)'s (regenerated, then gathered
    /// through the entry map). All rows; the input gets no gradient (its mode must be skip).
    void backward(const OpContext& context, const BackwardArgs& args) override;

private:
    /// x with its values after dropout (in.x_dropped, rewritten).
    [[nodiscard]] CsrMatrix& dropped(const OpContext& context, const SparseInput& in) const;

    index_t in_;
    index_t out_;
    float weight_decay_;
    SparseLinearOptions options_;
    Parameter weight_;
};

}  // namespace strata
