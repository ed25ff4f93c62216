// BiasActivationOp: one fused backend call each way, plus the bias gradient.
#include "layers/bias_activation_op.hpp"

#include <sstream>

#include "src/base/error.hpp"
#include "src/nn/op_catalogue.hpp"

namespace strata {

BiasActivationOp::BiasActivationOp(index_t cols, const BiasActivationOptions& options)
    : cols_(cols), options_(options) {
    STRATA_CHECK(cols > 0, "bias/activation: ", cols, " columns");
    STRATA_CHECK(options.dropout >= 0.0f && options.dropout < 1.0f,
                 "dropout rate must be in [0, 1), got ", options.dropout);
    STRATA_CHECK(options.activation != Activation::leaky_relu || options.negative_slope >= 0.0f,
                 "leaky_relu negative slope must be >= 0, got ", options.negative_slope);
}

namespace {

const char* activation_name(Activation a) {
    switch (a) {
        case Activation::relu:
            return "relu";
        case Activation::elu:
            return "elu";
        case Activation::leaky_relu:
            return "leaky_relu";
        case Activation::gelu:
            return "gelu";
        case Activation::none:
            break;
    }
    return "";
}

/// Backward reads the output y (and not x).
bool reads_output(Activation a) {
    return a == Activation::relu || a == Activation::elu || a == Activation::leaky_relu;
}

}  // namespace

std::string BiasActivationOp::describe() const {
    std::ostringstream out;
    const char* sep = "";
    if (options_.bias) {
        out << "bias";
        sep = "+";
    }
    if (options_.activation != Activation::none) {
        out << sep << activation_name(options_.activation);
        if (options_.activation == Activation::leaky_relu) {
            out << " " << options_.negative_slope;
        }
        sep = "+";
    }
    if (options_.dropout > 0.0f) {
        out << sep << "dropout " << options_.dropout;
        sep = "+";
    }
    if (*sep == '\0') {
        out << "identity";
    }
    return out.str();
}

index_t BiasActivationOp::output_cols(std::span<const index_t> input_cols) const {
    STRATA_CHECK(input_cols.size() == 1 && input_cols[0] == cols_, describe(), ": input has ",
                 input_cols.empty() ? 0 : input_cols[0], " columns, expected ", cols_);
    return cols_;
}

std::vector<ParameterSpec> BiasActivationOp::parameter_specs(
    std::span<const index_t> input_cols) const {
    (void)output_cols(input_cols);
    if (!options_.bias) {
        return {};
    }
    return {{"bias", 1, cols_, Init::zeros, 0.0f}};
}

void BiasActivationOp::bind_parameters(std::span<const Parameter> parameters) {
    if (options_.bias) {
        bias_ = parameters[0];
    }
}

Saves BiasActivationOp::saves() const {
    if (options_.activation == Activation::gelu) {
        return {{0}, false};
    }
    return {{}, reads_output(options_.activation)};
}

std::size_t BiasActivationOp::backward_workspace(const WorkspaceQuery& query) const {
    const bool separate =
        options_.bias && (query.modes.empty() || query.modes[0] != GradMode::overwrite);
    return separate ? static_cast<std::size_t>(query.rows) * static_cast<std::size_t>(cols_) : 0;
}

DropoutKey BiasActivationOp::key(const OpContext& context) const {
    return {.seed = options_.seed,
            .epoch = context.epoch,
            .layer = options_.dropout_id,
            .rate = context.training ? options_.dropout : 0.0f};
}

void BiasActivationOp::forward(const OpContext& context, const ForwardArgs& args) {
    const DropoutKey k = key(context);
    const auto first = static_cast<std::size_t>(args.rows.first);
    const auto count = static_cast<std::size_t>(args.rows.count);
    std::span<const float> bias;
    if (bias_) {
        bias = {bias_->value.data, static_cast<std::size_t>(cols_)};
    }
    context.backend.bias_activation(
        args.x[0].rows_of(args.rows), bias, spec(), k,
        k.rate > 0.0f ? context.row_ids.subspan(first, count) : std::span<const global_id>{},
        args.y.rows_of(args.rows));
}

void BiasActivationOp::backward(const OpContext& context, const BackwardArgs& args) {
    const GradMode mode = args.modes[0];
    if (mode == GradMode::skip && !bias_) {
        return;
    }
    Backend& backend = context.backend;
    const DropoutKey k = key(context);
    const auto first = static_cast<std::size_t>(args.rows.first);
    const auto count = static_cast<std::size_t>(args.rows.count);
    const Activation act = options_.activation;
    const std::span<const global_id> ids = k.rate > 0.0f && act != Activation::relu
                                               ? context.row_ids.subspan(first, count)
                                               : std::span<const global_id>{};
    const ConstMatrixView saved = act == Activation::gelu ? args.x[0].rows_of(args.rows)
                                  : reads_output(act)     ? args.y.rows_of(args.rows)
                                                          : ConstMatrixView{};
    std::span<const float> bias;
    if (bias_ && act == Activation::gelu) {
        bias = {bias_->value.data, static_cast<std::size_t>(cols_)};
    }
    const ConstMatrixView dy = args.dy.rows_of(args.rows);
    if (!bias_) {
        backend.bias_activation_backward(saved, bias, dy, spec(), k, ids,
                                         args.dx[0].rows_of(args.rows),
                                         mode == GradMode::accumulate ? 1.0f : 0.0f);
        return;
    }
    if (mode == GradMode::overwrite) {
        const MatrixView dx = args.dx[0].rows_of(args.rows);
        backend.bias_activation_backward(saved, bias, dy, spec(), k, ids, dx, 0.0f);
        backend.column_sums(dx, {bias_->grad.data, static_cast<std::size_t>(cols_)}, 1.0f);
        return;
    }
    // The bias gradient needs the pre-activation gradient alone: build it in the workspace.
    STRATA_CHECK(args.workspace.size() >= dy.size(), describe(), ": backward workspace has ",
                 args.workspace.size(), " floats, needs ", dy.size());
    const MatrixView pre{args.workspace.data(), dy.rows, dy.cols};
    backend.bias_activation_backward(saved, bias, dy, spec(), k, ids, pre, 0.0f);
    backend.column_sums(pre, {bias_->grad.data, static_cast<std::size_t>(cols_)}, 1.0f);
    if (mode == GradMode::accumulate) {
        backend.axpby(1.0f, pre, 1.0f, args.dx[0].rows_of(args.rows));
    }
}

// The op catalogue's row (src/nn/op_catalogue.hpp).
STRATA_REGISTER_OP(BiasActivationOp, OpNeeds{}, [] {
    const auto sample = [](Activation act, bool bias, float dropout) {
        return op_sample(BiasActivationOp(4, {.bias = bias,
                                              .activation = act,
                                              .negative_slope = 0.15f,
                                              .dropout = dropout,
                                              .seed = 2,
                                              .dropout_id = 1}),
                         {4});
    };
    return op_samples(sample(Activation::relu, true, 0.3f), sample(Activation::none, false, 0.3f),
                      sample(Activation::elu, true, 0.3f),
                      sample(Activation::leaky_relu, true, 0.3f),
                      sample(Activation::gelu, true, 0.3f), sample(Activation::none, true, 0.0f));
});

}  // namespace strata
