// LayerNormOp: one backend call each way (Backend::layer_norm, layer_norm_backward).
#include "layers/layer_norm_op.hpp"

#include "src/base/error.hpp"
#include "src/nn/op_catalogue.hpp"

namespace strata {

LayerNormOp::LayerNormOp(index_t cols, float eps) : cols_(cols), eps_(eps) {
    STRATA_CHECK(cols > 0, "layer_norm: ", cols, " columns");
    STRATA_CHECK(eps > 0.0f, "layer_norm: eps must be > 0, got ", eps);
}

std::string LayerNormOp::describe() const {
    return "layer_norm " + std::to_string(cols_);
}

index_t LayerNormOp::output_cols(std::span<const index_t> input_cols) const {
    STRATA_CHECK(input_cols.size() == 1 && input_cols[0] == cols_, describe(), ": input has ",
                 input_cols.empty() ? 0 : input_cols[0], " columns, expected ", cols_);
    return cols_;
}

std::vector<ParameterSpec> LayerNormOp::parameter_specs(std::span<const index_t> input_cols) const {
    (void)output_cols(input_cols);
    return {{.name = "weight", .rows = 1, .cols = cols_, .init = Init::ones},
            {.name = "bias", .rows = 1, .cols = cols_, .init = Init::zeros}};
}

void LayerNormOp::bind_parameters(std::span<const Parameter> parameters) {
    weight_ = parameters[0];
    bias_ = parameters[1];
}

void LayerNormOp::forward(const OpContext& context, const ForwardArgs& args) {
    const auto n = static_cast<std::size_t>(cols_);
    context.backend.layer_norm(args.x[0].rows_of(args.rows), {weight_.value.data, n},
                               {bias_.value.data, n}, eps_, args.y.rows_of(args.rows));
}

void LayerNormOp::backward(const OpContext& context, const BackwardArgs& args) {
    const auto n = static_cast<std::size_t>(cols_);
    const GradMode mode = args.modes[0];
    const MatrixView dx = mode == GradMode::skip ? MatrixView{} : args.dx[0].rows_of(args.rows);
    context.backend.layer_norm_backward(
        args.x[0].rows_of(args.rows), args.dy.rows_of(args.rows), {weight_.value.data, n}, eps_, dx,
        mode == GradMode::accumulate ? 1.0f : 0.0f, {weight_.grad.data, n}, {bias_.grad.data, n});
}

// The op catalogue's row (src/nn/op_catalogue.hpp).
STRATA_REGISTER_OP(LayerNormOp, OpNeeds{},
                   [] { return op_samples(op_sample(LayerNormOp(4), {4})); });

}  // namespace strata
