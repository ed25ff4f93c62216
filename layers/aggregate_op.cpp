// AggregateOp: delegates to the GraphOperator the executor lends.
#include "layers/aggregate_op.hpp"

#include "src/base/error.hpp"
#include "src/nn/op_catalogue.hpp"

namespace strata {
namespace {

GraphOperator& operator_of(const OpContext& context) {
    STRATA_CHECK(context.graph != nullptr, "aggregate: the executor lent no graph operator");
    return *context.graph;
}

}  // namespace

std::string AggregateOp::describe() const {
    return "aggregate (the model's graph operator)";
}

std::size_t AggregateOp::forward_workspace(const WorkspaceQuery& query) const {
    return query.graph == nullptr ? 0 : query.graph->workspace_floats(query.input_cols[0]);
}

std::size_t AggregateOp::backward_workspace(const WorkspaceQuery& query) const {
    // input_cols, not output_cols: a folded backward (execution_plan.hpp) asks at dy's width.
    const bool accumulate = !query.modes.empty() && query.modes[0] == GradMode::accumulate;
    return query.graph == nullptr
               ? 0
               : query.graph->backward_workspace_floats(query.input_cols[0], accumulate);
}

void AggregateOp::forward(const OpContext& context, const ForwardArgs& args) {
    operator_of(context).forward(
        args.x[0], args.y, args.rows, args.workspace,
        ExchangeCall(context.recompute ? ExchangePurpose::recompute : ExchangePurpose::forward,
                     context.epoch, context.node));
}

void AggregateOp::backward(const OpContext& context, const BackwardArgs& args) {
    if (args.modes[0] == GradMode::skip) {
        return;
    }
    operator_of(context).backward(
        args.dy, args.dx[0], args.rows, args.modes[0] == GradMode::accumulate ? 1.0f : 0.0f,
        args.workspace, ExchangeCall(ExchangePurpose::backward, context.epoch, context.node));
}

// The op catalogue's row (src/nn/op_catalogue.hpp).
STRATA_REGISTER_OP(AggregateOp, OpNeeds{.graph = true},
                   [] { return op_samples(op_sample(AggregateOp(), {4})); });

}  // namespace strata
