// LinearOp: two GEMMs forward and backward, over a row range.
#include "layers/linear_op.hpp"

#include "src/base/error.hpp"
#include "src/nn/op_catalogue.hpp"

namespace strata {

LinearOp::LinearOp(index_t in, index_t out, float weight_decay)
    : in_(in), out_(out), weight_decay_(weight_decay) {
    STRATA_CHECK(in > 0 && out > 0, "linear: sizes must be positive, got ", in, " -> ", out);
}

std::string LinearOp::describe() const {
    return "linear " + std::to_string(in_) + " -> " + std::to_string(out_);
}

index_t LinearOp::output_cols(std::span<const index_t> input_cols) const {
    STRATA_CHECK(input_cols.size() == 1 && input_cols[0] == in_, "linear: input has ",
                 input_cols.empty() ? 0 : input_cols[0], " columns, the layer expects ", in_);
    return out_;
}

std::vector<ParameterSpec> LinearOp::parameter_specs(std::span<const index_t> input_cols) const {
    (void)output_cols(input_cols);
    return {{"weight", in_, out_, Init::glorot_uniform, weight_decay_}};
}

void LinearOp::bind_parameters(std::span<const Parameter> parameters) {
    weight_ = parameters[0];
}

void LinearOp::forward(const OpContext& context, const ForwardArgs& args) {
    context.backend.gemm(args.x[0].rows_of(args.rows), Transpose::no, weight_.value, Transpose::no,
                         args.y.rows_of(args.rows), 1.0f, 0.0f);
}

void LinearOp::backward(const OpContext& context, const BackwardArgs& args) {
    Backend& backend = context.backend;
    const ConstMatrixView dy = args.dy.rows_of(args.rows);
    backend.gemm(args.x[0].rows_of(args.rows), Transpose::yes, dy, Transpose::no, weight_.grad,
                 1.0f, 1.0f);
    if (args.modes[0] != GradMode::skip) {
        const float beta = args.modes[0] == GradMode::accumulate ? 1.0f : 0.0f;
        backend.gemm(dy, Transpose::no, weight_.value, Transpose::yes,
                     args.dx[0].rows_of(args.rows), 1.0f, beta);
    }
}

// The op catalogue's row (src/nn/op_catalogue.hpp).
STRATA_REGISTER_OP(LinearOp, OpNeeds{},
                   [] { return op_samples(op_sample(LinearOp(4, 3, 0.0f), {4})); });

}  // namespace strata
