// The memory plan: schedules (forward, loss, backward with folds and recomputations), what is
// kept or recomputed, in-place aliases — of the whole model or of one pipeline stage; the
// bookkeeping of lifetimes and the arena layout is schedule_builder.cpp.
#include "src/nn/execution_plan.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "src/base/error.hpp"
#include "src/nn/schedule_builder.hpp"

namespace strata {
namespace {

using plan_detail::begin_of;
using plan_detail::end_of;
using plan_detail::input_ref;
using plan_detail::no_ref;
using plan_detail::ScheduleBuilder;

/// Shapes and flags both schedules need.
struct GraphFacts {
    std::vector<bool> needs_grad;       ///< per tensor
    std::vector<bool> backward_needed;  ///< per node
};

GraphFacts facts_of(const ModelGraph& graph) {
    GraphFacts f;
    f.needs_grad.assign(graph.tensors().size(), false);
    f.backward_needed.assign(static_cast<std::size_t>(graph.num_nodes()), false);
    for (int n = 0; n < graph.num_nodes(); ++n) {
        const Node& node = graph.node(n);
        const bool params = !node.op->parameter_specs(graph.input_cols(n)).empty();
        bool inputs = false;
        for (const TensorId t : node.inputs) {
            inputs = inputs || f.needs_grad[static_cast<std::size_t>(t)];
        }
        f.backward_needed[static_cast<std::size_t>(n)] = params || inputs;
        f.needs_grad[static_cast<std::size_t>(node.output)] = params || inputs;
    }
    return f;
}

WorkspaceQuery query(const ModelGraph& graph, const PlanOptions& options, int n,
                     const std::vector<index_t>& cols, std::span<const GradMode> modes = {}) {
    return WorkspaceQuery{.rows = options.rows,
                          .input_cols = cols,
                          .output_cols = graph.tensor(graph.node(n).output).cols,
                          .graph = options.graph,
                          .halo = options.halo,
                          .modes = modes};
}

std::size_t matrix_floats(index_t rows, index_t cols) {
    return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
}

/// Forward steps of every node (of the stage, when there is one) into `b`; returns the value
/// reference of every tensor. `evaluation`: ops that are the identity outside training get no
/// step (their output is their input). A stage's received tensors are buffers written before
/// its first step; it has no workspace slots.
std::vector<int> plan_forward(const ModelGraph& graph, const PlanOptions& options,
                              ScheduleBuilder& b, bool evaluation = false,
                              const StageScope* stage = nullptr) {
    std::vector<int> value(graph.tensors().size(), no_ref);
    const auto& inputs = graph.inputs();
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        value[static_cast<std::size_t>(inputs[k])] = input_ref(static_cast<int>(k));
    }
    const int first = stage != nullptr ? stage->first : 0;
    const int end = stage != nullptr ? stage->end : graph.num_nodes();
    if (stage != nullptr) {
        for (const TensorId t : stage->incoming) {
            const index_t cols = graph.tensor(t).cols;
            value[static_cast<std::size_t>(t)] =
                b.add(matrix_floats(options.rows, cols), cols, begin_of(0),
                      "received " + graph.tensor(t).name);
        }
    }
    for (int n = first; n < end; ++n) {
        const Node& node = graph.node(n);
        if (evaluation && node.op->identity_in_evaluation()) {
            value[static_cast<std::size_t>(node.output)] =
                value[static_cast<std::size_t>(node.inputs[0])];
            continue;
        }
        const int s = static_cast<int>(b.steps.size());
        PlanStep step;
        step.kind = StepKind::forward;
        step.node = n;
        for (const TensorId t : node.inputs) {
            step.x.push_back(value[static_cast<std::size_t>(t)]);
            b.use(step.x.back(), s);
        }
        const index_t cols = graph.tensor(node.output).cols;
        step.y = b.add_at(s, matrix_floats(options.rows, cols), cols, "value " + node.name);
        value[static_cast<std::size_t>(node.output)] = step.y;
        const std::vector<index_t> in_cols = graph.input_cols(n);
        if (const std::size_t ws = node.op->forward_workspace(query(graph, options, n, in_cols));
            ws > 0 && stage == nullptr) {
            step.workspace = b.add_at(s, ws, 0, "scratch " + node.name);
        }
        b.steps.push_back(std::move(step));
    }
    return value;
}

/// In-place outputs: a node's output takes its input 0's memory when that input is read for
/// the last time by this very step (so no later reader, backward included, sees it change).
/// Never a stage's whole-graph buffer: other chunks read its rows.
void alias_in_place(const ModelGraph& graph, ScheduleBuilder& b) {
    for (std::size_t s = 0; s < b.steps.size(); ++s) {
        const PlanStep& step = b.steps[s];
        if (step.kind != StepKind::forward && step.kind != StepKind::recompute) {
            continue;
        }
        const Op& op = *graph.node(step.node).op;
        if (!op.in_place() || step.x.empty() || step.x[0] < 0 || b.is_whole(step.x[0]) ||
            b.is_whole(step.y)) {
            continue;
        }
        if (b.last_use(step.x[0]) == end_of(static_cast<int>(s))) {
            b.alias(step.x[0], step.y);
        }
    }
}

class MemoryPlanner {
public:
    /// `stage`: plan one pipeline stage (plan_stage_schedule) instead of the whole model.
    MemoryPlanner(const ModelGraph& graph, const PlanOptions& options,
                  const StageScope* stage = nullptr)
        : graph_(graph),
          options_(options),
          stage_(stage),
          facts_(facts_of(graph)),
          b_(graph, stage != nullptr ? 1 : 16) {}

    Schedule plan(std::vector<PairChoice>& pairs, std::vector<std::string>& recomputed) {
        if (stage_ == nullptr) {
            choose_pairs(pairs);
        }
        value_ = plan_forward(graph_, options_, b_, /*evaluation=*/false, stage_);
        const int boundary = static_cast<int>(b_.steps.size());
        recomputed_ref_.assign(graph_.tensors().size(), no_ref);
        grad_.assign(graph_.tensors().size(), no_ref);
        const int first = stage_ != nullptr ? stage_->first : 0;
        const int end = stage_ != nullptr ? stage_->end : graph_.num_nodes();
        if (stage_ != nullptr) {
            for (std::size_t t = 0; t < value_.size(); ++t) {
                if (whole_value(static_cast<TensorId>(t))) {
                    b_.set_whole(value_[t]);
                }
            }
            // The next stage's gradients arrive before the chunk's backward starts.
            for (const TensorId t : stage_->outgoing) {
                const index_t c = cols(t);
                int& g = grad_[static_cast<std::size_t>(t)];
                g = b_.add(matrix_floats(options_.rows, c), c, begin_of(boundary),
                           "received grad " + graph_.tensor(t).name);
                if (whole_grad(t)) {
                    b_.set_whole(g);
                }
            }
        }

        // Loss: logits -> dlogits (a stage runs it in the chunk's backward, so it may read
        // recomputed logits).
        int loss_step = -1;
        if (end == graph_.num_nodes()) {
            const TensorId out = graph_.output();
            PlanStep loss;
            loss.kind = StepKind::loss;
            loss.y = stage_ != nullptr ? ensure(out) : value_[static_cast<std::size_t>(out)];
            loss_step = static_cast<int>(b_.steps.size());
            b_.use(loss.y, loss_step);
            const index_t out_cols = graph_.tensor(out).cols;
            loss.dy = b_.add_at(loss_step, matrix_floats(options_.rows, out_cols), out_cols,
                                "grad " + graph_.tensor(out).name);
            grad_[static_cast<std::size_t>(out)] = loss.dy;
            b_.steps.push_back(std::move(loss));
        }

        for (int n = end - 1; n >= first; --n) {
            if (!facts_.backward_needed[static_cast<std::size_t>(n)] ||
                folded_into_.count(n) != 0) {
                continue;
            }
            plan_backward(n);
        }
        if (stage_ != nullptr) {
            // The received tensors' gradients go back after the chunk's last step (one that no
            // step writes is sent all the same: the previous stage expects it).
            const int last = static_cast<int>(b_.steps.size()) - 1;
            for (const TensorId t : stage_->incoming) {
                int& g = grad_[static_cast<std::size_t>(t)];
                if (g == no_ref) {
                    g = b_.add(matrix_floats(options_.rows, cols(t)), cols(t), end_of(last),
                               "grad (unused) " + graph_.tensor(t).name);
                }
                b_.use(g, last);
            }
        }
        alias_in_place(graph_, b_);
        if (stage_ != nullptr) {
            b_.set_whole_across(begin_of(boundary));
        }
        for (const TensorId t : recomputed_names_) {
            recomputed.push_back(graph_.tensor(t).name);
        }
        b_.values = value_;
        b_.grads = grad_;
        return b_.finish(loss_step, boundary);
    }

private:
    [[nodiscard]] TensorId input(int n, int i) const {
        return graph_.node(n).inputs[static_cast<std::size_t>(i)];
    }
    [[nodiscard]] int producer(TensorId t) const { return graph_.tensor(t).producer; }
    [[nodiscard]] index_t cols(TensorId t) const { return graph_.tensor(t).cols; }

    [[nodiscard]] bool in_stage(int node) const {
        return stage_ != nullptr && node >= stage_->first && node < stage_->end;
    }
    [[nodiscard]] static bool reads_every_row(const Op& op) {
        return op.kind() == OpKind::aggregate || op.kind() == OpKind::attention;
    }

    /// A stage's value that must hold every row: received or sent, read or written by an
    /// aggregation (other chunks read its rows, or the stale rows must survive the wave).
    [[nodiscard]] bool whole_value(TensorId t) const {
        if (stage_ == nullptr) {
            return false;
        }
        const auto& in = stage_->incoming;
        const auto& out = stage_->outgoing;
        if (std::find(in.begin(), in.end(), t) != in.end() ||
            std::find(out.begin(), out.end(), t) != out.end()) {
            return true;
        }
        const int p = producer(t);
        if (in_stage(p) && reads_every_row(*graph_.node(p).op)) {
            return true;
        }
        if (p < 0) {
            return false;  // a model input: the data, never a buffer of the plan
        }
        for (const auto& [reader, input] : graph_.consumers(t)) {
            (void)input;
            if (in_stage(reader) && reads_every_row(*graph_.node(reader).op)) {
                return true;
            }
        }
        return false;
    }

    /// A stage's gradient that must hold every row: an aggregation output's (the pull of every
    /// chunk reads all its rows, historical ones included).
    [[nodiscard]] bool whole_grad(TensorId t) const {
        const int p = producer(t);
        return in_stage(p) && reads_every_row(*graph_.node(p).op);
    }

    /// Whether the mode lets backward recompute t rather than keep it.
    [[nodiscard]] bool recomputable(TensorId t) const {
        const int p = producer(t);
        if (p < 0) {
            return false;
        }
        if (stage_ != nullptr) {
            // Received values and every-row values are kept; the logits may be recomputed
            // (the stage's loss runs in the chunk's backward).
            if (!in_stage(p) || whole_value(t)) {
                return false;
            }
        } else if (t == graph_.output()) {
            return false;
        }
        if (forced_recompute_.count(t) != 0) {
            return true;
        }
        switch (options_.recompute) {
            case Recompute::none:
                return false;
            case Recompute::aggregation: {
                const OpKind kind = graph_.node(p).op->kind();
                return kind == OpKind::aggregate || kind == OpKind::attention;
            }
            case Recompute::all:
                return !graph_.tensor(t).layer_input;
        }
        return false;
    }

    /// Decides, for each linear whose input z is an aggregation's output read by nothing else,
    /// whether backward keeps z, folds the aggregation into the linear's backward, or
    /// recomputes z. Cheapest sparse work first (widths of the SpMMs backward adds), then less
    /// memory kept.
    void choose_pairs(std::vector<PairChoice>& pairs) {
        std::set<TensorId> needed_elsewhere;
        std::vector<std::pair<int, int>> candidates;  // (aggregate, linear)
        for (int n = 0; n < graph_.num_nodes(); ++n) {
            if (!facts_.backward_needed[static_cast<std::size_t>(n)]) {
                continue;
            }
            const Node& node = graph_.node(n);
            if (node.op->kind() == OpKind::linear) {
                const TensorId z = node.inputs[0];
                const int a = producer(z);
                const auto readers = graph_.consumers(z);
                const auto& extra = options_.evaluation_outputs;
                if (a >= 0 && graph_.node(a).op->kind() == OpKind::aggregate &&
                    readers.size() == 1 && z != graph_.output() &&
                    std::find(extra.begin(), extra.end(), z) == extra.end()) {
                    candidates.emplace_back(a, n);
                    continue;
                }
            }
            const Saves saves = node.op->saves();
            for (const int i : saves.inputs) {
                needed_elsewhere.insert(node.inputs[static_cast<std::size_t>(i)]);
            }
            if (saves.output) {
                needed_elsewhere.insert(node.output);
            }
        }
        for (const auto& [a, l] : candidates) {
            const TensorId x = input(a, 0);
            const TensorId z = input(l, 0);
            const index_t in = cols(z);
            const index_t out = cols(graph_.node(l).output);
            const bool dx = facts_.needs_grad[static_cast<std::size_t>(x)];
            const bool x_free =
                producer(x) < 0 || (needed_elsewhere.count(x) != 0 && !recomputable(x));
            struct Option {
                char strategy;
                std::int64_t spmm;
                std::int64_t memory;
            };
            std::vector<Option> options;
            if (options_.recompute == Recompute::none) {
                options.push_back({'k', dx ? in : 0, in});
            }
            options.push_back({'f', out, x_free ? 0 : in});
            if (options_.recompute != Recompute::none) {
                options.push_back({'r', in + (dx ? in : 0), x_free ? 0 : in});
            }
            const Option best = *std::min_element(
                options.begin(), options.end(), [](const Option& p, const Option& q) {
                    return p.spmm != q.spmm ? p.spmm < q.spmm : p.memory < q.memory;
                });
            pairs.push_back({a, l, best.strategy});
            if (best.strategy == 'f') {
                folded_into_[a] = l;
                fold_[l] = a;
            } else if (best.strategy == 'r') {
                forced_recompute_.insert(z);
            }
        }
    }

    /// A reference to t's value readable at the next step, recomputing it (and what it needs)
    /// first when the plan does not keep it. The caller extends the lifetime with use().
    int ensure(TensorId t) {
        if (!recomputable(t)) {
            return value_[static_cast<std::size_t>(t)];
        }
        int& ref = recomputed_ref_[static_cast<std::size_t>(t)];
        if (ref != no_ref) {
            return ref;
        }
        const int p = producer(t);
        const Node& node = graph_.node(p);
        PlanStep step;
        step.kind = StepKind::recompute;
        step.node = p;
        for (const TensorId u : node.inputs) {
            step.x.push_back(ensure(u));
        }
        const int s = static_cast<int>(b_.steps.size());
        for (const int r : step.x) {
            b_.use(r, s);
        }
        step.y =
            b_.add_at(s, matrix_floats(options_.rows, cols(t)), cols(t), "recomputed " + node.name);
        const std::vector<index_t> in_cols = graph_.input_cols(p);
        if (const std::size_t ws = node.op->forward_workspace(query(graph_, options_, p, in_cols));
            ws > 0 && stage_ == nullptr) {
            step.workspace = b_.add_at(s, ws, 0, "scratch " + node.name);
        }
        ref = step.y;
        recomputed_names_.push_back(t);
        b_.steps.push_back(std::move(step));
        return ref;
    }

    /// dx slot and mode of gradient target t written from position `first` to the end of step
    /// s (in place over dy if allowed).
    std::pair<int, GradMode> gradient_target(TensorId t, int s, int first, bool in_place_over,
                                             int dy) {
        if (!facts_.needs_grad[static_cast<std::size_t>(t)]) {
            return {no_ref, GradMode::skip};
        }
        int& g = grad_[static_cast<std::size_t>(t)];
        if (g != no_ref) {
            b_.use(g, s);
            return {g, GradMode::accumulate};
        }
        if (in_place_over && !whole_grad(t) && !b_.is_whole(dy)) {
            g = dy;
        } else {
            g = b_.add(matrix_floats(options_.rows, cols(t)), cols(t), first,
                       "grad " + graph_.tensor(t).name);
            if (whole_grad(t)) {
                b_.set_whole(g);
            }
        }
        b_.use(g, s);
        return {g, GradMode::overwrite};
    }

    void plan_backward(int n) {
        const Node& node = graph_.node(n);
        PlanStep step;
        step.kind = StepKind::backward;
        step.node = n;
        step.x.assign(node.inputs.size(), no_ref);
        const auto fold = fold_.find(n);
        if (fold != fold_.end()) {
            step.folded = fold->second;
            step.x[0] = ensure(input(fold->second, 0));
        } else {
            const Saves saves = node.op->saves();
            for (const int i : saves.inputs) {
                step.x[static_cast<std::size_t>(i)] = ensure(input(n, i));
            }
            if (saves.output) {
                step.y = ensure(node.output);
            }
        }
        const int s = static_cast<int>(b_.steps.size());
        const bool folded = fold != fold_.end();
        // A folded step's first phase reads dy and the scratch (G = Âᵀ dy), its second x and G
        // (the linear's backward); dx is written in the second only.
        for (const int r : step.x) {
            b_.use(r, s);
        }
        b_.use(step.y, s);
        step.dy = grad_[static_cast<std::size_t>(node.output)];
        STRATA_CHECK(step.dy != no_ref, "plan: no gradient reaches ", node.name);
        b_.use_at(step.dy, folded ? begin_of(s) : end_of(s));
        const bool in_place = node.op->in_place() && !folded;
        for (std::size_t i = 0; i < node.inputs.size(); ++i) {
            const TensorId target = folded ? input(fold->second, 0) : node.inputs[i];
            const auto [ref, mode] = gradient_target(target, s, folded ? end_of(s) : begin_of(s),
                                                     in_place && i == 0, step.dy);
            step.dx.push_back(ref);
            step.modes.push_back(mode);
        }
        std::vector<index_t> in_cols = graph_.input_cols(n);
        if (folded) {
            const int a = fold->second;
            const index_t out = cols(node.output);
            step.folded_grad =
                b_.add_at(s, matrix_floats(options_.rows, out), out, "scratch Âᵀ dy " + node.name);
            in_cols[0] = cols(input(a, 0));
            const std::vector<index_t> agg_cols{out};
            const std::vector<GradMode> overwrite{GradMode::overwrite};
            const std::size_t agg_ws = graph_.node(a).op->backward_workspace(
                query(graph_, options_, a, agg_cols, overwrite));
            const std::size_t lin_ws =
                node.op->backward_workspace(query(graph_, options_, n, in_cols, step.modes));
            STRATA_CHECK(lin_ws == 0, "plan: ", node.name,
                         " needs backward scratch; it cannot be folded");
            if (agg_ws > 0) {
                step.workspace = b_.add(agg_ws, 0, begin_of(s), "scratch " + graph_.node(a).name);
            }
        } else if (const std::size_t ws =
                       node.op->backward_workspace(query(graph_, options_, n, in_cols, step.modes));
                   ws > 0 && stage_ == nullptr) {
            step.workspace = b_.add_at(s, ws, 0, "scratch " + node.name);
        }
        b_.steps.push_back(std::move(step));
    }

    const ModelGraph& graph_;
    const PlanOptions& options_;
    const StageScope* stage_;
    GraphFacts facts_;
    ScheduleBuilder b_;
    std::vector<int> value_;
    std::vector<int> recomputed_ref_;
    std::vector<int> grad_;
    std::vector<TensorId> recomputed_names_;
    std::map<int, int> folded_into_;  ///< aggregate -> linear
    std::map<int, int> fold_;         ///< linear -> aggregate
    std::set<TensorId> forced_recompute_;
};

Schedule plan_evaluation(const ModelGraph& graph, const PlanOptions& options) {
    ScheduleBuilder b(graph);
    const std::vector<int> value = plan_forward(graph, options, b, /*evaluation=*/true);
    const int last = static_cast<int>(b.steps.size()) - 1;
    b.use(value[static_cast<std::size_t>(graph.output())], last);
    for (const TensorId t : options.evaluation_outputs) {
        b.use(value[static_cast<std::size_t>(t)], last);
    }
    alias_in_place(graph, b);
    b.values = value;
    return b.finish(-1, static_cast<int>(b.steps.size()));
}

}  // namespace

const char* to_string(Recompute mode) {
    switch (mode) {
        case Recompute::none:
            return "none";
        case Recompute::aggregation:
            return "aggregation";
        case Recompute::all:
            return "all";
    }
    return "?";
}

std::optional<Recompute> parse_recompute(const std::string& text) {
    for (const Recompute m : {Recompute::none, Recompute::aggregation, Recompute::all}) {
        if (text == to_string(m)) {
            return m;
        }
    }
    return std::nullopt;
}

ExecutionPlan::ExecutionPlan(Schedule training, Schedule evaluation, std::vector<PairChoice> pairs,
                             std::vector<std::string> recomputed, const PlanOptions& options)
    : training_(std::move(training)),
      evaluation_(std::move(evaluation)),
      pairs_(std::move(pairs)),
      recomputed_(std::move(recomputed)),
      rows_(options.rows) {}

std::size_t ExecutionPlan::arena_floats() const {
    return std::max(training_.arena_floats, evaluation_.arena_floats);
}

ExecutionPlan plan_execution(const ModelGraph& graph, const PlanOptions& options) {
    STRATA_CHECK(options.rows >= 0, "plan: ", options.rows, " rows");
    (void)graph.output();
    for (const Node& node : graph.nodes()) {
        STRATA_CHECK(node.op->kind() != OpKind::aggregate || options.graph != nullptr,
                     "plan: ", node.name, " aggregates but no graph operator was given");
        STRATA_CHECK(node.op->kind() != OpKind::attention || options.halo != nullptr,
                     "plan: ", node.name,
                     " attends over neighbours but no halo exchange was given");
    }
    for (const TensorId t : options.evaluation_outputs) {
        STRATA_CHECK(t >= 0 && t < static_cast<TensorId>(graph.tensors().size()) &&
                         graph.tensor(t).producer >= 0,
                     "plan: evaluation output ", t, " is not a node's output");
    }
    std::vector<PairChoice> pairs;
    std::vector<std::string> recomputed;
    Schedule training;
    if (options.training) {
        MemoryPlanner memory_plan(graph, options);
        training = memory_plan.plan(pairs, recomputed);
    }
    Schedule evaluation = plan_evaluation(graph, options);
    return ExecutionPlan(std::move(training), std::move(evaluation), std::move(pairs),
                         std::move(recomputed), options);
}

Schedule plan_stage_schedule(const ModelGraph& graph, const StageScope& stage,
                             Recompute recompute) {
    STRATA_CHECK(stage.first >= 0 && stage.first < stage.end && stage.end <= graph.num_nodes(),
                 "plan: stage nodes [", stage.first, ", ", stage.end, ") of ", graph.num_nodes());
    (void)graph.output();
    PlanOptions options;
    options.rows = 1;  // per row: a chunk's buffers are its rows times these sizes
    options.recompute = recompute;
    std::vector<PairChoice> pairs;
    std::vector<std::string> recomputed;
    MemoryPlanner memory_plan(graph, options, &stage);
    return memory_plan.plan(pairs, recomputed);
}

}  // namespace strata
