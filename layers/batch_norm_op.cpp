// BatchNormOp: statistics by two passes (Σx, then Σ(x - μ)² around the global mean), each
// all-reduced. Two passes rather than Σx and Σx² in one: device all-reduces are float, and
// Σx²/N - μ² in float cancels catastrophically once |μ| >> σ (activations with a large common
// offset); the centred pass costs one more all-reduce of `cols` floats (latency only).
#include "layers/batch_norm_op.hpp"

#include <array>
#include <cstdint>

#include "src/base/error.hpp"
#include "src/comm/communicator.hpp"
#include "src/nn/op_catalogue.hpp"

namespace strata {
namespace {

/// In-place sum of `data` (backend memory) over the ranks of context.comm (none: one rank).
void allreduce(const OpContext& context, std::span<float> data) {
    if (context.comm != nullptr && context.comm->size() > 1) {
        context.comm->start_allreduce_sum(data)->wait();
    }
}

MatrixView row_view(std::span<float> v) {
    return {v.data(), 1, static_cast<index_t>(v.size())};
}

}  // namespace

BatchNormOp::BatchNormOp(index_t cols, float eps, float momentum)
    : cols_(cols), eps_(eps), momentum_(momentum) {
    STRATA_CHECK(cols > 0, "batch_norm: ", cols, " columns");
    STRATA_CHECK(eps > 0.0f, "batch_norm: eps must be > 0, got ", eps);
    STRATA_CHECK(momentum >= 0.0f && momentum <= 1.0f,
                 "batch_norm: momentum must be in [0, 1], got ", momentum);
}

std::string BatchNormOp::describe() const {
    return "batch_norm " + std::to_string(cols_);
}

index_t BatchNormOp::output_cols(std::span<const index_t> input_cols) const {
    STRATA_CHECK(input_cols.size() == 1 && input_cols[0] == cols_, describe(), ": input has ",
                 input_cols.empty() ? 0 : input_cols[0], " columns, expected ", cols_);
    return cols_;
}

std::vector<ParameterSpec> BatchNormOp::parameter_specs(std::span<const index_t> input_cols) const {
    (void)output_cols(input_cols);
    return {
        {.name = "weight", .rows = 1, .cols = cols_, .init = Init::ones},
        {.name = "bias", .rows = 1, .cols = cols_, .init = Init::zeros},
        {.name = "running_mean", .rows = 1, .cols = cols_, .init = Init::zeros, .trainable = false},
        {.name = "running_var", .rows = 1, .cols = cols_, .init = Init::ones, .trainable = false}};
}

void BatchNormOp::bind_parameters(std::span<const Parameter> parameters) {
    weight_ = parameters[0];
    bias_ = parameters[1];
    running_mean_ = parameters[2];
    running_var_ = parameters[3];
}

std::size_t BatchNormOp::forward_workspace(const WorkspaceQuery& query) const {
    (void)query;
    return 4 * static_cast<std::size_t>(cols_);
}

std::size_t BatchNormOp::backward_workspace(const WorkspaceQuery& query) const {
    (void)query;
    return 4 * static_cast<std::size_t>(cols_);
}

void BatchNormOp::check_all_rows(const char* pass, RowRange rows, index_t all) const {
    STRATA_CHECK(rows.first == 0 && rows.count == all, describe(), ": ", pass,
                 " in training needs all rows at once (its statistics span every row of every "
                 "rank), got rows [",
                 rows.first, ", ", rows.end(), ") of ", all);
}

double BatchNormOp::batch_statistics(const OpContext& context, ConstMatrixView x,
                                     std::span<float> workspace) const {
    const auto c = static_cast<std::size_t>(cols_);
    STRATA_CHECK(workspace.size() >= 3 * c, describe(), ": workspace has ", workspace.size(),
                 " floats, needs ", 4 * c);
    std::array<std::int64_t, 1> count{x.rows};
    if (context.comm != nullptr && context.comm->size() > 1) {
        context.comm->allreduce_sum(count);
    }
    STRATA_CHECK(count[0] > 1, describe(), ": training needs more than one row in all, got ",
                 count[0]);
    const auto n = static_cast<double>(count[0]);
    Backend& backend = context.backend;
    const std::span<float> mean = workspace.subspan(0, c);
    const std::span<float> var = workspace.subspan(c, c);
    const std::span<float> sums = workspace.subspan(2 * c, c);
    backend.column_sums(x, sums, 0.0f);  // Σx
    allreduce(context, sums);
    backend.axpby(static_cast<float>(1.0 / n), row_view(sums), 0.0f, row_view(mean));
    backend.centered_column_sums(x, mean, {}, 0.0f, {}, sums, 0.0f);  // Σ(x - μ)²
    allreduce(context, sums);
    backend.axpby(static_cast<float>(1.0 / n), row_view(sums), 0.0f, row_view(var));
    return n;
}

void BatchNormOp::forward(const OpContext& context, const ForwardArgs& args) {
    const auto c = static_cast<std::size_t>(cols_);
    Backend& backend = context.backend;
    const std::span<const float> gamma{weight_.value.data, c};
    const std::span<const float> beta{bias_.value.data, c};
    if (!context.training) {
        backend.batch_norm(args.x[0].rows_of(args.rows), {running_mean_.value.data, c},
                           {running_var_.value.data, c}, eps_, gamma, beta,
                           args.y.rows_of(args.rows));
        return;
    }
    check_all_rows("forward", args.rows, args.x[0].rows);
    const double n = batch_statistics(context, args.x[0], args.workspace);
    const std::span<float> mean = args.workspace.subspan(0, c);
    const std::span<float> var = args.workspace.subspan(c, c);
    backend.batch_norm(args.x[0], mean, var, eps_, gamma, beta, args.y);
    if (!context.recompute) {  // a re-run during backward must not count the batch twice
        const std::span<float> squares = args.workspace.subspan(2 * c, c);  // Σ(x - μ)²
        backend.axpby(momentum_, row_view(mean), 1.0f - momentum_, running_mean_.value);
        backend.axpby(static_cast<float>(static_cast<double>(momentum_) / (n - 1.0)),
                      row_view(squares), 1.0f - momentum_, running_var_.value);
    }
}

void BatchNormOp::backward(const OpContext& context, const BackwardArgs& args) {
    const auto c = static_cast<std::size_t>(cols_);
    check_all_rows("backward", args.rows, args.x[0].rows);
    Backend& backend = context.backend;
    const ConstMatrixView x = args.x[0];
    const double n = batch_statistics(context, x, args.workspace);
    const std::span<float> mean = args.workspace.subspan(0, c);
    const std::span<float> var = args.workspace.subspan(c, c);
    const std::span<float> sums = args.workspace.subspan(2 * c, 2 * c);  // Σdy, Σdy ⊙ x̂
    const std::span<float> sum_dy = sums.subspan(0, c);
    const std::span<float> sum_dy_xhat = sums.subspan(c, c);
    backend.column_sums(args.dy, sum_dy, 0.0f);
    backend.centered_column_sums(x, mean, var, eps_, args.dy, sum_dy_xhat, 0.0f);
    // This rank's share of the parameter gradients (the executor sums the ranks afterwards).
    backend.axpby(1.0f, row_view(sum_dy), 1.0f, bias_.grad);
    backend.axpby(1.0f, row_view(sum_dy_xhat), 1.0f, weight_.grad);
    if (args.modes[0] == GradMode::skip) {
        return;
    }
    allreduce(context, sums);
    backend.batch_norm_backward(x, args.dy, mean, var, eps_, {weight_.value.data, c}, sum_dy,
                                sum_dy_xhat, n, args.dx[0],
                                args.modes[0] == GradMode::accumulate ? 1.0f : 0.0f);
}

// The op catalogue's row (src/nn/op_catalogue.hpp).
STRATA_REGISTER_OP(BatchNormOp, OpNeeds{.comm = true},
                   [] { return op_samples(op_sample(BatchNormOp(4), {4})); });

}  // namespace strata
