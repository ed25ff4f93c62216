// AddOp: axpby each way, ordered so that in-place aliases (y over x0, dx0 over dy, one tensor
// as both inputs) read every value before it is overwritten.
#include "layers/add_op.hpp"

#include <sstream>

#include "src/base/error.hpp"
#include "src/nn/op_catalogue.hpp"

namespace strata {

std::string AddOp::describe() const {
    if (a_ == 1.0f && b_ == 1.0f) {
        return "add";
    }
    std::ostringstream out;
    out << "add " << a_ << "·x0 + " << b_ << "·x1";
    return out.str();
}

index_t AddOp::output_cols(std::span<const index_t> input_cols) const {
    STRATA_CHECK(input_cols.size() == 2 && input_cols[0] == input_cols[1], "add: inputs have ",
                 input_cols[0], " and ", input_cols.size() > 1 ? input_cols[1] : 0, " columns");
    return input_cols[0];
}

void AddOp::forward(const OpContext& context, const ForwardArgs& args) {
    const ConstMatrixView x0 = args.x[0].rows_of(args.rows);
    const ConstMatrixView x1 = args.x[1].rows_of(args.rows);
    const MatrixView y = args.y.rows_of(args.rows);
    Backend& backend = context.backend;
    if (x1.data == y.data) {  // x1 is x0 (both inputs one tensor), or y aliases x1
        if (x0.data == y.data) {
            backend.axpby(a_ + b_, x0, 0.0f, y);
        } else {
            backend.axpby(a_, x0, b_, y);
        }
        return;
    }
    if (y.data != x0.data || a_ != 1.0f) {
        backend.axpby(a_, x0, 0.0f, y);  // in place over x0: y = a y
    }
    backend.axpby(b_, x1, 1.0f, y);
}

void AddOp::backward(const OpContext& context, const BackwardArgs& args) {
    const ConstMatrixView dy = args.dy.rows_of(args.rows);
    Backend& backend = context.backend;
    const auto write = [&](GradMode mode, float coefficient, MatrixView dx) {
        if (mode == GradMode::overwrite) {
            if (dx.data != dy.data || coefficient != 1.0f) {
                backend.axpby(coefficient, dy, 0.0f, dx);
            }
        } else if (mode == GradMode::accumulate) {
            backend.axpby(coefficient, dy, 1.0f, dx);
        }
    };
    const MatrixView dx0 = args.dx[0].rows_of(args.rows);
    const MatrixView dx1 = args.dx[1].rows_of(args.rows);
    if (args.modes[0] != GradMode::skip && args.modes[1] != GradMode::skip &&
        dx0.data == dx1.data) {
        // One tensor as both inputs: its gradient is (a + b) dy, written as input 0's mode says.
        write(args.modes[0], a_ + b_, dx0);
        return;
    }
    // dx0 may alias dy (in place): input 1 reads dy first.
    write(args.modes[1], b_, dx1);
    write(args.modes[0], a_, dx0);
}

// The op catalogue's row (src/nn/op_catalogue.hpp).
STRATA_REGISTER_OP(AddOp, OpNeeds{}, [] {
    return op_samples(op_sample(AddOp(), {4, 4}), op_sample(AddOp(0.5f, -2.0f), {4, 4}));
});

}  // namespace strata
