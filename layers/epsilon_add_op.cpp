// EpsilonAddOp: axpby with the device scalar ε each way, and a dot product for dε; ordered so
// that in-place aliases (y over x0, dx0 over dy, one tensor as both inputs) read every value
// before it is overwritten.
#include "layers/epsilon_add_op.hpp"

#include "src/base/error.hpp"
#include "src/nn/op_catalogue.hpp"

namespace strata {

index_t EpsilonAddOp::output_cols(std::span<const index_t> input_cols) const {
    STRATA_CHECK(input_cols.size() == 2 && input_cols[0] == input_cols[1],
                 "epsilon add: inputs have ", input_cols.empty() ? 0 : input_cols[0], " and ",
                 input_cols.size() > 1 ? input_cols[1] : 0, " columns");
    return input_cols[0];
}

std::vector<ParameterSpec> EpsilonAddOp::parameter_specs(
    std::span<const index_t> input_cols) const {
    (void)output_cols(input_cols);
    return {{.name = "eps", .rows = 1, .cols = 1, .init = Init::zeros}};
}

void EpsilonAddOp::bind_parameters(std::span<const Parameter> parameters) {
    eps_ = parameters[0];
}

void EpsilonAddOp::forward(const OpContext& context, const ForwardArgs& args) {
    const ConstMatrixView x0 = args.x[0].rows_of(args.rows);
    const ConstMatrixView x1 = args.x[1].rows_of(args.rows);
    const MatrixView y = args.y.rows_of(args.rows);
    const std::span<const float> eps{eps_.value.data, 1};
    Backend& backend = context.backend;
    if (x1.data == y.data) {  // x1 is x0 (one tensor as both inputs), or y aliases x1
        backend.axpby_scalar(x0.data == y.data ? 2.0f : 1.0f, eps, x0,
                             x0.data == y.data ? 0.0f : 1.0f, y);
        return;
    }
    backend.axpby_scalar(1.0f, eps, x0, 0.0f, y);  // in place over x0: y = (1 + ε) y
    backend.axpby(1.0f, x1, 1.0f, y);
}

void EpsilonAddOp::backward(const OpContext& context, const BackwardArgs& args) {
    Backend& backend = context.backend;
    const ConstMatrixView dy = args.dy.rows_of(args.rows);
    const std::span<const float> eps{eps_.value.data, 1};
    // dε first: dx0 may be written over dy.
    backend.dot(dy, args.x[0].rows_of(args.rows), {eps_.grad.data, 1}, 1.0f);
    const auto beta = [](GradMode mode) { return mode == GradMode::accumulate ? 1.0f : 0.0f; };
    const MatrixView dx0 = args.dx[0].rows_of(args.rows);
    const MatrixView dx1 = args.dx[1].rows_of(args.rows);
    if (args.modes[0] != GradMode::skip && args.modes[1] != GradMode::skip &&
        dx0.data == dx1.data) {
        // One tensor as both inputs: its gradient is (2 + ε) dy, written as input 0's mode says.
        backend.axpby_scalar(2.0f, eps, dy, beta(args.modes[0]), dx0);
        return;
    }
    if (args.modes[1] != GradMode::skip &&
        !(args.modes[1] == GradMode::overwrite && dx1.data == dy.data)) {
        backend.axpby(1.0f, dy, beta(args.modes[1]), dx1);
    }
    if (args.modes[0] != GradMode::skip) {
        backend.axpby_scalar(1.0f, eps, dy, beta(args.modes[0]), dx0);
    }
}

// The op catalogue's row (src/nn/op_catalogue.hpp).
STRATA_REGISTER_OP(EpsilonAddOp, OpNeeds{}, [] {
    return op_samples(op_sample(EpsilonAddOp(), {4, 4}));
});

}  // namespace strata
