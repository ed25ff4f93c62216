// The node runner: views in, op call out.
#include "src/nn/node_runner.hpp"

#include <array>
#include <string>
#include <vector>

#include "src/base/trace.hpp"

namespace strata {
namespace {

/// The call's rows of every slot, for a row-local op; every row of whole slots otherwise.
MatrixView operand(const StepViews& views, int slot, bool local) {
    return local || !views.whole(slot) ? views.rows(slot) : views.all(slot);
}

/// A step's span name while a trace records ("linear 1433 -> 16 backward"); empty otherwise.
std::string span_name(const Op& op, const char* pass) {
    return trace::on() ? op.describe() + " " + pass : std::string();
}

std::span<const global_id> call_ids(std::span<const global_id> ids, RowRange range, bool local) {
    return local ? ids.subspan(static_cast<std::size_t>(range.first),
                               static_cast<std::size_t>(range.count))
                 : ids;
}

}  // namespace

void run_forward(const ModelGraph& graph, const PlanStep& step, const StepViews& views,
                 OpContext context, PhaseClock& clock) {
    Op& op = *graph.node(step.node).op;
    const bool local = op.row_local();
    const RowRange range = views.range();
    std::vector<ConstMatrixView> x;
    for (const int slot : step.x) {
        x.push_back(local ? views.rows(slot) : views.all(slot));
    }
    context.row_ids = call_ids(context.row_ids, range, local);
    context.node = step.node;
    const ForwardArgs args{.x = x,
                           .y = operand(views, step.y, local),
                           .rows = local ? RowRange{0, range.count} : range,
                           .workspace = views.workspace(step)};
    clock.time(PhaseClock::slot(op.kind()), span_name(op, "forward"),
               [&] { op.forward(context, args); });
}

void run_backward(const ModelGraph& graph, const PlanStep& step, const StepViews& views,
                  OpContext context, PhaseClock& clock) {
    Op& op = *graph.node(step.node).op;
    const bool local = op.row_local();
    const RowRange range = views.range();
    const std::span<float> workspace = views.workspace(step);
    std::vector<ConstMatrixView> x;
    for (const int slot : step.x) {
        x.push_back(local ? views.rows(slot) : views.all(slot));
    }
    std::vector<MatrixView> dx;
    for (const int slot : step.dx) {
        dx.push_back(operand(views, slot, local));
    }
    context.node = step.node;
    if (step.folded < 0) {
        context.row_ids = call_ids(context.row_ids, range, local);
        const BackwardArgs args{.x = x,
                                .y = operand(views, step.y, local),
                                .dy = local ? views.rows(step.dy) : views.all(step.dy),
                                .dx = dx,
                                .modes = step.modes,
                                .rows = local ? RowRange{0, range.count} : range,
                                .workspace = workspace};
        clock.time(PhaseClock::slot(op.kind()), span_name(op, "backward"),
                   [&] { op.backward(context, args); });
        return;
    }
    // Commuted: G = Âᵀ dy at the output width (the aggregation reads every row of dy), then
    // the linear's backward from x and G.
    const MatrixView g = views.rows(step.folded_grad);
    const std::array<MatrixView, 1> g_out{g};
    const std::array<GradMode, 1> overwrite{GradMode::overwrite};
    Op& folded = *graph.node(step.folded).op;
    OpContext folded_context = context;
    folded_context.node = step.folded;
    clock.time(PhaseClock::slot(folded.kind()), span_name(folded, "backward (commuted)"), [&] {
        folded.backward(folded_context, BackwardArgs{.x = {},
                                                     .y = {},
                                                     .dy = views.all(step.dy),
                                                     .dx = g_out,
                                                     .modes = overwrite,
                                                     .rows = range,
                                                     .workspace = workspace});
    });
    context.row_ids = call_ids(context.row_ids, range, local);
    clock.time(PhaseClock::slot(op.kind()), span_name(op, "backward"), [&] {
        op.backward(context, BackwardArgs{.x = x,
                                          .y = {},
                                          .dy = g,
                                          .dx = dx,
                                          .modes = step.modes,
                                          .rows = local ? RowRange{0, range.count} : range,
                                          .workspace = workspace});
    });
}

double run_loss(Backend& backend, const PlanStep& step, const StepViews& views,
                const TrainingData& data, PhaseClock& clock) {
    const RowRange range = views.range();
    const auto first = static_cast<std::size_t>(range.first);
    const auto count = static_cast<std::size_t>(range.count);
    const float scale = 1.0f / static_cast<float>(data.global_train);
    double loss = 0.0;
    clock.time(&PhaseTimes::loss, "softmax cross-entropy", [&] {
        loss = backend
                   .softmax_cross_entropy(views.rows(step.y), data.labels.subspan(first, count),
                                          data.train_mask.subspan(first, count), scale,
                                          views.rows(step.dy))
                   .loss;
    });
    return loss;
}

}  // namespace strata
