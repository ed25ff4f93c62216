// ColumnScaleOp: row loops over host memory (the CPU backend's memory is host memory).
#include "column_scale_op.hpp"

#include <cstddef>

#include "src/base/error.hpp"

namespace example {
namespace {

void require_cpu(const strata::OpContext& context) {
    STRATA_CHECK(context.backend.kind() == strata::DeviceKind::cpu,
                 "column scale: runs on the CPU backend only, got ", context.backend.describe());
}

}  // namespace

ColumnScaleOp::ColumnScaleOp(strata::index_t cols, float weight_decay)
    : cols_(cols), weight_decay_(weight_decay) {
    STRATA_CHECK(cols > 0, "column scale: ", cols, " columns");
}

std::string ColumnScaleOp::describe() const {
    return "column scale " + std::to_string(cols_);
}

strata::index_t ColumnScaleOp::output_cols(std::span<const strata::index_t> input_cols) const {
    STRATA_CHECK(input_cols.size() == 1 && input_cols[0] == cols_, describe(), ": input has ",
                 input_cols.empty() ? 0 : input_cols[0], " columns, expected ", cols_);
    return cols_;
}

std::vector<strata::ParameterSpec> ColumnScaleOp::parameter_specs(
    std::span<const strata::index_t> input_cols) const {
    (void)output_cols(input_cols);
    return {{"shift", 1, cols_, strata::Init::zeros, weight_decay_}};
}

void ColumnScaleOp::bind_parameters(std::span<const strata::Parameter> parameters) {
    shift_ = parameters[0];
}

void ColumnScaleOp::forward(const strata::OpContext& context, const strata::ForwardArgs& args) {
    require_cpu(context);
    const float* t = shift_.value.data;
    const auto cols = static_cast<std::size_t>(cols_);
    for (strata::index_t i = args.rows.first; i < args.rows.end(); ++i) {
        const float* x = args.x[0].data + static_cast<std::size_t>(i) * cols;
        float* y = args.y.data + static_cast<std::size_t>(i) * cols;
        for (std::size_t j = 0; j < cols; ++j) {
            y[j] = x[j] * (1.0f + t[j]);
        }
    }
}

void ColumnScaleOp::backward(const strata::OpContext& context, const strata::BackwardArgs& args) {
    require_cpu(context);
    const float* t = shift_.value.data;
    float* dt = shift_.grad.data;
    const strata::GradMode mode = args.modes[0];
    const auto cols = static_cast<std::size_t>(cols_);
    for (strata::index_t i = args.rows.first; i < args.rows.end(); ++i) {
        const std::size_t row = static_cast<std::size_t>(i) * cols;
        const float* x = args.x[0].data + row;
        const float* dy = args.dy.data + row;
        for (std::size_t j = 0; j < cols; ++j) {
            dt[j] += x[j] * dy[j];
        }
        if (mode == strata::GradMode::skip) {
            continue;
        }
        float* dx = args.dx[0].data + row;
        for (std::size_t j = 0; j < cols; ++j) {
            const float g = dy[j] * (1.0f + t[j]);
            dx[j] = mode == strata::GradMode::accumulate ? dx[j] + g : g;
        }
    }
}

}  // namespace example
