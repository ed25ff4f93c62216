// The node runner: one step of a planned schedule (execution_plan.hpp) and an executor's views
// of its slots turned into an op call — ForwardArgs or BackwardArgs, a folded backward's two
// calls, the loss — so that the full-graph executor and the layer pipeline call nodes through
// the same code. A call covers the rows views.range() names: every owned row (the full-graph
// executor) or one chunk (the pipeline). A row-local op sees the call's rows only (rows
// {0, count}, the chunk's row ids); an op that reads every row (an aggregation) sees every row
// of its inputs and of dy, and writes the call's rows of its output and input gradients.
#pragma once

#include <span>

#include "src/device/backend.hpp"
#include "src/nn/execution_plan.hpp"
#include "src/nn/executor.hpp"
#include "src/nn/model_graph.hpp"
#include "src/nn/op.hpp"
#include "src/nn/phase_clock.hpp"

namespace strata {

/// Where an executor keeps the slots of one call of a schedule.
class StepViews {
public:
    virtual ~StepViews() = default;
    /// The rows this call computes, numbered over every owned row.
    [[nodiscard]] virtual RowRange range() const = 0;
    /// The call's rows of `slot` (range().count rows); an empty view for slot -1.
    [[nodiscard]] virtual MatrixView rows(int slot) const = 0;
    /// Whether `slot` holds every row (a model input, a full-graph arena buffer, a pipeline
    /// stage's whole-graph buffer), not only the call's.
    [[nodiscard]] virtual bool whole(int slot) const = 0;
    /// Every row of a whole slot; an empty view for slot -1.
    [[nodiscard]] virtual MatrixView all(int slot) const = 0;
    /// The scratch `step` may use (its forward or backward workspace).
    [[nodiscard]] virtual std::span<float> workspace(const PlanStep& step) const = 0;
};

/// A forward or recompute step. `context.row_ids` holds every row's id.
void run_forward(const ModelGraph& graph, const PlanStep& step, const StepViews& views,
                 OpContext context, PhaseClock& clock);

/// A backward step (a folded one as two calls: G = Âᵀ dy, then the linear's backward from x
/// and G). `context.row_ids` holds every row's id.
void run_backward(const ModelGraph& graph, const PlanStep& step, const StepViews& views,
                  OpContext context, PhaseClock& clock);

/// The loss step over the call's rows: softmax cross-entropy of the logits (step.y) over the
/// training mask, scaled by 1 / data.global_train, its gradient into step.dy. Returns the
/// call's summed loss (unscaled).
double run_loss(Backend& backend, const PlanStep& step, const StepViews& views,
                const TrainingData& data, PhaseClock& clock);

}  // namespace strata
