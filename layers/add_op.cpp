// AddOp: axpby each way.
#include "layers/add_op.hpp"

#include "src/base/error.hpp"

namespace strata {

index_t AddOp::output_cols(std::span<const index_t> input_cols) const {
    STRATA_CHECK(input_cols.size() == 2 && input_cols[0] == input_cols[1], "add: inputs have ",
                 input_cols[0], " and ", input_cols.size() > 1 ? input_cols[1] : 0, " columns");
    return input_cols[0];
}

void AddOp::forward(const OpContext& context, const ForwardArgs& args) {
    const ConstMatrixView a = args.x[0].rows_of(args.rows);
    const ConstMatrixView b = args.x[1].rows_of(args.rows);
    const MatrixView y = args.y.rows_of(args.rows);
    if (y.data != a.data) {
        context.backend.axpby(1.0f, a, 0.0f, y);
    }
    context.backend.axpby(1.0f, b, 1.0f, y);  // y == b only if x1 is x0 (then y = 2 x0)
}

void AddOp::backward(const OpContext& context, const BackwardArgs& args) {
    const ConstMatrixView dy = args.dy.rows_of(args.rows);
    for (std::size_t i = 0; i < args.dx.size(); ++i) {
        const MatrixView dx = args.dx[i].rows_of(args.rows);
        if (args.modes[i] == GradMode::overwrite) {
            if (dx.data != dy.data) {
                context.backend.axpby(1.0f, dy, 0.0f, dx);
            }
        } else if (args.modes[i] == GradMode::accumulate) {
            context.backend.axpby(1.0f, dy, 1.0f, dx);
        }
    }
}

}  // namespace strata
