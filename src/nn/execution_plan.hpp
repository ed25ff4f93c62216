// ExecutionPlan: the memory plan — what a model's training step and evaluation do, step by step,
// and where every tensor lives — planned once from the ModelGraph (plan once, execute many).
// Forward values live from their producer to their last reader (backward included when kept),
// gradients from their first writer to their producer's backward, scratch for one step; buffers
// whose lifetimes do not overlap share memory in one arena (greedy by size, as TFLite's arena
// planner does; "planner" alone names strata plan's layout planner, planner/). Both executors run
// such schedules (node_runner.hpp): the full-graph executor the model's, the layer pipeline one per
// stage (plan_stage_schedule, stage_storage.hpp).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "src/nn/model_graph.hpp"

namespace strata {

/// What backward may recompute instead of keeping (`strata train --recompute`).
enum class Recompute {
    none,         ///< keep whatever makes backward cheapest
    aggregation,  ///< never keep an aggregation's (or attention's) output: fold it or recompute
                  ///< it (re-exchange)
    all,          ///< keep only layer inputs (ModelGraph::mark_layer_input); recompute the rest
};

[[nodiscard]] const char* to_string(Recompute mode);
/// "none" | "aggregation" | "all"; std::nullopt otherwise.
[[nodiscard]] std::optional<Recompute> parse_recompute(const std::string& text);

enum class StepKind {
    forward,    ///< a node's forward
    recompute,  ///< a node's forward re-run during backward (its value was not kept)
    loss,       ///< logits -> loss and dlogits (the executor's loss)
    backward,   ///< a node's backward (with `folded`: an aggregation folded into it)
};

/// A tensor's place: a model input (the executor's data) or floats of the arena.
struct Slot {
    int input = -1;          ///< index into ModelGraph::inputs() when >= 0
    std::size_t offset = 0;  ///< arena offset, in floats (64-byte aligned)
    std::size_t floats = 0;  ///< size
    index_t cols = 0;        ///< columns of a rows x cols matrix; 0 for scratch
    std::string label;       ///< "value gcn0.linear", "grad t3", "scratch gcn1.aggregate"
    /// A pipeline stage's whole-graph buffer (every row, kept across chunks): not in the arena;
    /// plan_stage_storage places it. Never set in a full-graph plan.
    bool whole = false;
};

struct PlanStep {
    StepKind kind = StepKind::forward;
    int node = -1;
    /// Backward of a linear whose input is an aggregation's output z = Â x, done in the
    /// commuted order: G = Âᵀ dy (folded aggregation's backward at the output width), then the
    /// linear's backward with input x and gradient G: dW += xᵀ G, dx = G Wᵀ. z is neither kept
    /// nor recomputed, and the folded node has no step of its own.
    int folded = -1;
    std::vector<int> x;           ///< slot of each input (backward: only those read, else -1)
    int y = -1;                   ///< output slot (backward: only when read, else -1; loss: logits)
    int dy = -1;                  ///< backward: gradient of the output; loss: dlogits
    std::vector<int> dx;          ///< backward: slot of each input's gradient, or -1
    std::vector<GradMode> modes;  ///< backward: per input
    int workspace = -1;           ///< scratch slot, or -1
    int folded_grad = -1;         ///< commuted backward: the slot of G (rows x output cols)
};

struct Schedule {
    std::vector<PlanStep> steps;
    std::vector<Slot> slots;
    std::size_t arena_floats = 0;  ///< arena this schedule needs
    std::size_t kept_floats = 0;   ///< values alive across the loss step (kept for backward)
    int boundary = 0;              ///< the first step after the forward steps
    std::vector<int> values{};     ///< per tensor: slot of its value as forward wrote it, or -1
    std::vector<int> grads{};      ///< per tensor: slot of its gradient, or -1
};

/// How one linear-after-aggregation pair is differentiated.
struct PairChoice {
    int aggregate = -1;
    int linear = -1;
    /// 'k' keep z = Â x;  'f' fold (commuted backward, keep x);  'r' recompute z from x.
    char strategy = 'k';
};

struct PlanOptions {
    index_t rows = 0;  ///< owned rows
    Recompute recompute = Recompute::none;
    const GraphOperator* graph = nullptr;        ///< exchange scratch sizes
    const HaloExchange* halo = nullptr;          ///< attention ops' scratch sizes
    std::vector<TensorId> evaluation_outputs{};  ///< kept to the end of evaluation besides output
    bool training = true;                        ///< false: plan the evaluation only (inference)
};

class ExecutionPlan {
public:
    ExecutionPlan(Schedule training, Schedule evaluation, std::vector<PairChoice> pairs,
                  std::vector<std::string> recomputed, const PlanOptions& options);

    [[nodiscard]] const Schedule& training() const { return training_; }
    [[nodiscard]] const Schedule& evaluation() const { return evaluation_; }
    [[nodiscard]] const std::vector<PairChoice>& pairs() const { return pairs_; }
    /// Names of tensors recomputed during backward.
    [[nodiscard]] const std::vector<std::string>& recomputed() const { return recomputed_; }
    [[nodiscard]] index_t rows() const { return rows_; }
    /// One arena serves both schedules.
    [[nodiscard]] std::size_t arena_floats() const;
    [[nodiscard]] std::size_t arena_bytes() const { return arena_floats() * sizeof(float); }

private:
    Schedule training_;
    Schedule evaluation_;
    std::vector<PairChoice> pairs_;
    std::vector<std::string> recomputed_;
    index_t rows_;
};

/// Plans both schedules. Throws strata::Error if the graph has no output or options are
/// inconsistent (rows < 0, an aggregation without a graph operator).
[[nodiscard]] ExecutionPlan plan_execution(const ModelGraph& graph, const PlanOptions& options);

/// One stage of the layer pipeline (src/nn/stage_layout.hpp): nodes [first, end).
struct StageScope {
    int first = 0;
    int end = 0;
    std::vector<TensorId> incoming{};  ///< values from the previous stage; gradients go back
    std::vector<TensorId> outgoing{};  ///< values for the next stage; gradients come back
};

/// The training schedule of one pipeline stage, run chunk by chunk: steps [0, boundary) are
/// the forward of a chunk, the rest (recomputations, the loss on the last stage, backward) its
/// backward, later in the wave. Sizes are per row (a chunk's buffer is its rows times the
/// slot's floats; no alignment) and there are no workspace slots (the stage sizes one). Slots
/// marked `whole` hold every row: the values alive from a chunk's forward to its backward (what
/// `recompute` keeps), and whatever is read or sent across chunks — aggregation inputs and
/// outputs, cut tensors, aggregation outputs' gradients; the rest is chunk scratch, shared by
/// lifetime as in the full-graph plan. Nothing is folded and no aggregation is recomputed: a
/// chunk's aggregation read rows that other chunks had not refreshed yet, which neither a fold
/// nor a recomputation in backward would see again. Recompute::aggregation therefore keeps what
/// Recompute::none keeps.
[[nodiscard]] Schedule plan_stage_schedule(const ModelGraph& graph, const StageScope& stage,
                                           Recompute recompute);

}  // namespace strata
