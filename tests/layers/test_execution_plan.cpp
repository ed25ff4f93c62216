// The memory plan: no buffer is overwritten while a later step still reads it (simulated over
// every schedule), what each --recompute mode keeps, folds and recomputes, memory linear in
// depth, the executor allocating exactly the plan, and every mode giving the same losses. A
// layer-pipeline stage's schedule (plan_stage_schedule) replays chunk by chunk: its chunk
// scratch never carries a value from a chunk's forward to its backward (other chunks run in
// between); whole-graph buffers do.
#include <map>

#include <catch2/catch.hpp>

#include "layers/add_op.hpp"
#include "layers/aggregate_op.hpp"
#include "layers/bias_activation_op.hpp"
#include "layers/gcn_model.hpp"
#include "layers/linear_op.hpp"
#include "layers/model_zoo.hpp"
#include "src/nn/optimizer.hpp"
#include "src/nn/stage_layout.hpp"
#include "tests/layers/layer_harness.hpp"

using namespace strata;
using strata::test::OneRankGraph;
using strata::test::OneRankModel;

namespace {

/// A graph operator that only answers sizes (plans need nothing else).
class SizesOnly final : public GraphOperator {
public:
    explicit SizesOnly(index_t rows) : rows_(rows) {}
    [[nodiscard]] index_t num_rows() const override { return rows_; }
    [[nodiscard]] std::size_t workspace_floats(index_t width) const override {
        return static_cast<std::size_t>(rows_ / 3) * static_cast<std::size_t>(width);
    }
    void forward(ConstMatrixView, MatrixView, RowRange, std::span<float>, ExchangeCall) override {}
    void backward(ConstMatrixView, MatrixView, RowRange, float, std::span<float>,
                  ExchangeCall) override {}
    [[nodiscard]] HaloBytes bytes_sent() const override { return {}; }

private:
    index_t rows_;
};

/// Replays a schedule on an ownership map of the arena: every write makes its slot the owner of
/// its range (clobbering whatever overlapped), every read requires its slot to still own its
/// whole range. Returns the first violation, or "".
std::string replay(const Schedule& schedule) {
    std::map<std::size_t, std::pair<std::size_t, int>> owners;  // offset -> (end, slot)
    auto write = [&](int slot) {
        if (slot < 0 || schedule.slots[static_cast<std::size_t>(slot)].input >= 0) {
            return;
        }
        const Slot& s = schedule.slots[static_cast<std::size_t>(slot)];
        const std::size_t begin = s.offset;
        const std::size_t end = s.offset + s.floats;
        for (auto it = owners.begin(); it != owners.end();) {
            if (it->first < end && begin < it->second.first) {
                it = owners.erase(it);
            } else {
                ++it;
            }
        }
        owners[begin] = {end, slot};
    };
    auto intact = [&](int slot) {
        if (slot < 0 || schedule.slots[static_cast<std::size_t>(slot)].input >= 0) {
            return true;
        }
        const Slot& s = schedule.slots[static_cast<std::size_t>(slot)];
        const auto it = owners.find(s.offset);
        return it != owners.end() && it->second.second == slot &&
               it->second.first == s.offset + s.floats;
    };
    for (std::size_t i = 0; i < schedule.steps.size(); ++i) {
        const PlanStep& step = schedule.steps[i];
        const std::string where =
            "step " + std::to_string(i) + " (node " + std::to_string(step.node) + "): ";
        auto read = [&](int slot, const char* what) {
            return intact(slot) ? std::string()
                                : where + what + " slot " + std::to_string(slot) + " (" +
                                      schedule.slots[static_cast<std::size_t>(slot)].label +
                                      ") was overwritten";
        };
        std::vector<int> reads;
        std::vector<int> writes;
        if (step.kind == StepKind::backward && step.folded >= 0) {
            // Phase 1: G = Âᵀ dy (scratch); phase 2: the linear's backward from x and G.
            write(step.workspace);
            write(step.folded_grad);
            if (auto e = read(step.dy, "dy"); !e.empty()) {
                return e;
            }
            for (std::size_t k = 0; k < step.dx.size(); ++k) {
                if (step.modes[k] == GradMode::overwrite) {
                    write(step.dx[k]);
                } else if (auto e2 = read(step.dx[k], "dx"); !e2.empty()) {
                    return e2;
                }
            }
            for (const int x : step.x) {
                if (auto e3 = read(x, "x"); !e3.empty()) {
                    return e3;
                }
            }
            if (auto e4 = read(step.folded_grad, "G"); !e4.empty()) {
                return e4;
            }
            continue;
        }
        write(step.workspace);
        for (const int x : step.x) {
            reads.push_back(x);
        }
        if (step.kind == StepKind::backward || step.kind == StepKind::loss) {
            reads.push_back(step.y);
            reads.push_back(step.dy);
        }
        if (step.kind == StepKind::loss) {
            writes.push_back(step.dy);
        } else if (step.kind == StepKind::backward) {
            for (std::size_t k = 0; k < step.dx.size(); ++k) {
                if (step.modes[k] == GradMode::accumulate) {
                    reads.push_back(step.dx[k]);
                }
                writes.push_back(step.dx[k]);
            }
        } else {
            writes.push_back(step.y);
        }
        // Outputs are written while inputs are still read: an overlap that is not the same slot
        // (an in-place alias) shows up as a clobbered read.
        for (const int w : writes) {
            write(w);
        }
        for (const int r : reads) {
            if (std::find(writes.begin(), writes.end(), r) != writes.end()) {
                continue;  // in place: read and written as one slot
            }
            if (auto e = read(r, "input"); !e.empty()) {
                return e;
            }
        }
    }
    return "";
}

/// A pipeline stage's schedule as the pipeline runs it: a chunk's forward steps, then (after the
/// other chunks' forward, which rewrite every chunk buffer) its backward steps, which start
/// with the next stage's gradients received. Whole-graph slots hold every row: never rewritten.
std::string replay_stage(Schedule schedule, const Stage& stage) {
    for (Slot& slot : schedule.slots) {
        if (slot.whole) {
            slot.input = 1000;  // replay() leaves inputs alone
        }
    }
    Schedule forward = schedule;
    forward.steps.resize(static_cast<std::size_t>(schedule.boundary));
    Schedule backward = schedule;
    backward.steps.erase(backward.steps.begin(), backward.steps.begin() + schedule.boundary);
    // The receive of each outgoing tensor's gradient: a step that writes it first.
    for (const TensorId t : stage.outgoing) {
        PlanStep receive;
        receive.kind = StepKind::forward;
        receive.y = schedule.grads[static_cast<std::size_t>(t)];
        backward.steps.insert(backward.steps.begin(), receive);
    }
    if (std::string e = replay(forward); !e.empty()) {
        return "forward: " + e;
    }
    if (std::string e = replay(backward); !e.empty()) {
        return "backward: " + e;
    }
    return "";
}

ExecutionPlan plan_gcn(index_t features, int layers, index_t hidden, Recompute mode,
                       index_t rows = 1000) {
    const ModelGraph graph =
        build_gcn(features, 5, GcnOptions{.layers = layers, .hidden = hidden, .dropout = 0.5f});
    SizesOnly sizes(rows);
    PlanOptions options;
    options.rows = rows;
    options.recompute = mode;
    options.graph = &sizes;
    return plan_execution(graph, options);
}

}  // namespace

TEST_CASE("no planned buffer is overwritten while a later step still reads it", "[plan]") {
    SizesOnly sizes(300);
    for (const Recompute mode : {Recompute::none, Recompute::aggregation, Recompute::all}) {
        for (const auto& [features, layers, hidden] :
             std::vector<std::tuple<index_t, int, index_t>>{
                 {100, 3, 256}, {1433, 2, 16}, {8, 8, 32}, {64, 1, 16}, {40, 4, 40}}) {
            INFO("recompute " << to_string(mode) << ", " << features << " features, " << layers
                              << " x " << hidden);
            const ExecutionPlan plan = plan_gcn(features, layers, hidden, mode, 300);

            CHECK(replay(plan.training()) == "");
            CHECK(replay(plan.evaluation()) == "");
            for (const Slot& s : plan.training().slots) {
                CHECK(s.offset + s.floats <= plan.arena_floats());
            }
        }
        ModelGraph graph = strata::test::residual_model(9, 12, 4);
        PlanOptions options;
        options.rows = 300;
        options.recompute = mode;
        options.graph = &sizes;
        const ExecutionPlan plan = plan_execution(graph, options);
        CHECK(replay(plan.training()) == "");
    }
}

TEST_CASE("each recompute mode keeps what it says for a 3-layer GCN", "[plan]") {
    // 100 -> 256 -> 256 -> 5: layer 0 aggregates first (its input 100 is narrower), layer 1
    // aggregates at 256 (a fold costs no more sparse work than keeping Â x), layer 2 transforms
    // first. Kept across the loss: per row, floats.
    const auto kept = [](Recompute mode) {
        return plan_gcn(100, 3, 256, mode).training().kept_floats / 1000;
    };
    const ExecutionPlan none = plan_gcn(100, 3, 256, Recompute::none);
    const ExecutionPlan aggregation = plan_gcn(100, 3, 256, Recompute::aggregation);
    const ExecutionPlan all = plan_gcn(100, 3, 256, Recompute::all);

    // none: Â x of layer 0 (100) and the two hidden layers' outputs (256 each).
    CHECK(kept(Recompute::none) == 100 + 256 + 256);
    // aggregation: layer 0's input (100, to recompute Â x from) instead of Â x.
    CHECK(kept(Recompute::aggregation) == 100 + 256 + 256);
    // all: only layer inputs (the hidden outputs); layer 0 is recomputed from the features.
    CHECK(kept(Recompute::all) == 256 + 256);
    REQUIRE(none.pairs().size() == 2);
    CHECK(none.pairs()[0].strategy == 'k');
    CHECK(none.pairs()[1].strategy == 'f');
    CHECK(aggregation.pairs()[0].strategy == 'r');
    CHECK(aggregation.pairs()[1].strategy == 'f');
    CHECK(none.recomputed().empty());
    CHECK(aggregation.recomputed() == std::vector<std::string>{"gcn0.aggregate"});
    CHECK(all.recomputed() == std::vector<std::string>{"gcn0.dropout", "gcn0.aggregate"});
    CHECK(all.arena_bytes() < none.arena_bytes());
}

TEST_CASE("the plan grows linearly with depth by one hidden tensor per layer", "[plan]") {
    // A 64-layer GCN keeps one rows x hidden output per hidden layer; the rest of the arena
    // does not depend on depth.
    const index_t rows = 2708;
    const index_t hidden = 256;
    const std::size_t per_layer = static_cast<std::size_t>(rows) * hidden;
    for (const Recompute mode : {Recompute::none, Recompute::all}) {
        std::vector<std::size_t> arena;
        std::vector<std::size_t> kept;
        for (const int layers : {16, 32, 64}) {
            const ExecutionPlan plan = plan_gcn(1433, layers, hidden, mode, rows);
            arena.push_back(plan.arena_floats());
            kept.push_back(plan.training().kept_floats);
        }
        INFO("recompute " << to_string(mode));
        CHECK(kept[1] - kept[0] == 16 * per_layer);
        CHECK(kept[2] - kept[1] == 32 * per_layer);
        CHECK(arena[1] - arena[0] == 16 * per_layer);
        CHECK(arena[2] - arena[1] == 32 * per_layer);
    }
}

TEST_CASE("the executor allocates exactly its plan", "[plan]") {
    OneRankGraph g(200, 24);
    const MemoryStats before = g.backend->memory_stats();
    ModelGraph graph = build_gcn(24, 3, GcnOptions{.layers = 3, .hidden = 32, .seed = 1});
    ModelParameters parameters(*g.backend, graph, 1);
    FullGraphExecutor executor(*g.backend, g.comm, graph, parameters, *g.aggregation,
                               g.inputs->data(), ExecutorOptions{});

    const MemoryStats after = g.backend->memory_stats();
    std::int64_t planned = 0;
    for (const MemoryLine& line : executor.memory_plan()) {
        planned += line.bytes;
    }

    CHECK(after.bytes_in_use - before.bytes_in_use == planned);
    CHECK(executor.plan().arena_bytes() > 0);
}

TEST_CASE("training inputs allocate exactly what they plan", "[plan]") {
    for (const bool directed : {true, false}) {
        OneRankGraph g(200, 24, directed);
        for (const Normalization n :
             {Normalization::symmetric, Normalization::mean, Normalization::sum}) {
            std::int64_t planned = 0;
            const TrainingInputs::Plan plan = TrainingInputs::plan(g.part, n);
            for (const MemoryLine& line : plan.lines) {
                planned += line.bytes;
            }
            const MemoryStats before = g.backend->memory_stats();

            const TrainingInputs again(*g.backend, g.part, plan);

            INFO(to_string(n) << (directed ? ", directed" : ", symmetric graph"));
            CHECK(g.backend->memory_stats().bytes_in_use - before.bytes_in_use == planned);
            CHECK(again.blocks.inner().nnz() == plan.graph_operator.inner.nnz());
            // The symmetric operator of a symmetric graph is stored once; mean's is not.
            CHECK(plan.graph.inner_symmetric == (!directed && n != Normalization::mean));
        }
    }
}

TEST_CASE("every recompute mode gives the same losses to 1e-6", "[plan]") {
    OneRankGraph g(300, 24, /*directed=*/true);
    std::vector<std::vector<double>> losses;
    for (const Recompute mode : {Recompute::none, Recompute::aggregation, Recompute::all}) {
        OneRankModel m(
            g, build_gcn(24, 3, GcnOptions{.layers = 3, .hidden = 32, .dropout = 0.5f, .seed = 4}),
            mode);
        Adam adam(*g.backend, m.parameters->size(), AdamOptions{.lr = 0.01f});
        std::vector<double> run;
        for (int epoch = 1; epoch <= 8; ++epoch) {
            run.push_back(m.loss(epoch));
            adam.step(m.parameters->all());
        }
        losses.push_back(run);
    }

    for (std::size_t mode = 1; mode < losses.size(); ++mode) {
        for (std::size_t e = 0; e < losses[0].size(); ++e) {
            INFO("mode " << mode << ", epoch " << e + 1);
            CHECK(std::abs(losses[mode][e] - losses[0][e]) <= 1e-6 * std::abs(losses[0][e]));
        }
    }
}

TEST_CASE("every model of the zoo has a plan that replays", "[plan][models]") {
    SizesOnly sizes(300);
    for (const ModelInfo& info : model_zoo()) {
        if (info.name == "gat") {
            continue;  // attention ops need a halo exchange's sizes (tests/layers/test_gat.cpp)
        }
        ModelSpec spec = info.recipe.spec;
        spec.layers = std::min(spec.layers, 4);
        spec.hops = 4;
        for (const Recompute mode : {Recompute::none, Recompute::aggregation, Recompute::all}) {
            INFO(describe(spec) << ", recompute " << to_string(mode));
            const BuiltModel model = build_model(spec, 50, 5);
            PlanOptions options;
            options.rows = 300;
            options.recompute = mode;
            options.graph = &sizes;
            const ExecutionPlan plan = plan_execution(model.graph, options);
            CHECK(replay(plan.training()) == "");
            CHECK(replay(plan.evaluation()) == "");
        }
    }
}

TEST_CASE("a pipeline stage's schedule replays chunk by chunk, in every recompute mode",
          "[plan][models]") {
    for (const ModelInfo& info : model_zoo()) {
        ModelSpec spec = info.recipe.spec;
        spec.layers = std::min(spec.layers, 4);
        spec.hops = 4;
        const BuiltModel model = build_model(spec, 50, 5);
        bool chunkable = true;
        for (const Node& node : model.graph.nodes()) {
            chunkable = chunkable && (node.op->row_local() || node.op->kind() == OpKind::aggregate);
        }
        if (!chunkable) {
            continue;  // attention, batch norm: the pipeline refuses them
        }
        for (int stages = 1; stages <= std::min(3, max_stages(model.graph)); ++stages) {
            const StageLayout layout = plan_stages(model.graph, stages, {.rows = 300, .nnz = 3000});
            for (std::size_t s = 0; s < layout.stages.size(); ++s) {
                const Stage& stage = layout.stages[s];
                std::vector<Schedule> modes;
                for (const Recompute mode :
                     {Recompute::none, Recompute::aggregation, Recompute::all}) {
                    INFO(describe(spec) << ", stage " << s << " of " << stages << ", recompute "
                                        << to_string(mode));
                    const Schedule schedule = plan_stage_schedule(model.graph,
                                                                  {.first = stage.first,
                                                                   .end = stage.end,
                                                                   .incoming = stage.incoming,
                                                                   .outgoing = stage.outgoing},
                                                                  mode);
                    CHECK(replay_stage(schedule, stage) == "");
                    // Aggregations read and write every row: their inputs, outputs and output
                    // gradients are whole-graph buffers, and never recomputed.
                    for (int n = stage.first; n < stage.end; ++n) {
                        const Node& node = model.graph.node(n);
                        if (node.op->kind() != OpKind::aggregate) {
                            continue;
                        }
                        const auto whole = [&](int slot) {
                            return slot >= 0 &&
                                   (schedule.slots[static_cast<std::size_t>(slot)].whole ||
                                    schedule.slots[static_cast<std::size_t>(slot)].input >= 0);
                        };
                        CHECK(whole(schedule.values[static_cast<std::size_t>(node.output)]));
                        const int grad = schedule.grads[static_cast<std::size_t>(node.output)];
                        CHECK((grad < 0 || whole(grad)));  // none: no backward (raw features)
                        for (const TensorId t : node.inputs) {
                            CHECK(whole(schedule.values[static_cast<std::size_t>(t)]));
                        }
                    }
                    for (const PlanStep& step : schedule.steps) {
                        CHECK((step.kind != StepKind::recompute ||
                               model.graph.node(step.node).op->row_local()));
                        CHECK(step.folded < 0);
                    }
                    modes.push_back(schedule);
                }
                const auto recomputes = [](const Schedule& schedule) {
                    return std::count_if(
                        schedule.steps.begin(), schedule.steps.end(),
                        [](const PlanStep& step) { return step.kind == StepKind::recompute; });
                };
                CHECK(recomputes(modes[0]) == 0);  // none keeps every value backward reads
                CHECK(recomputes(modes[1]) == 0);  // aggregation: nothing the pipeline may
            }
        }
    }
}

TEST_CASE("a GCNII stage: all keeps the layer inputs and recomputes the rest", "[plan]") {
    ModelSpec spec = find_model("gcnii").recipe.spec;
    spec.layers = 2;
    spec.hidden = 8;
    const BuiltModel model = build_model(spec, 50, 5);
    const StageLayout layout = plan_stages(model.graph, 1, {.rows = 300, .nnz = 3000});
    const Stage& stage = layout.stages[0];
    const StageScope scope{.first = stage.first, .end = stage.end};
    // The whole-graph value buffers, each with the tensors it holds (in-place ops share one).
    const auto whole_values = [&](const Schedule& schedule) {
        std::vector<std::string> slots(schedule.slots.size());
        for (std::size_t t = 0; t < schedule.values.size(); ++t) {
            const int slot = schedule.values[t];
            if (slot >= 0 && schedule.slots[static_cast<std::size_t>(slot)].whole) {
                std::string& names = slots[static_cast<std::size_t>(slot)];
                names +=
                    (names.empty() ? "" : "=") + model.graph.tensor(static_cast<TensorId>(t)).name;
            }
        }
        slots.erase(std::remove(slots.begin(), slots.end(), std::string()), slots.end());
        return slots;
    };
    // all: h0 and each layer's h (layer inputs, read by ReLU's backward and the next layers),
    // written in place over their layer's linear output; the aggregations' inputs (dropout
    // outputs) and outputs. The residual sums, the logits and the input dropout (read by the
    // first linear's weight gradient) are recomputed chunk by chunk.
    const Schedule all = plan_stage_schedule(model.graph, scope, Recompute::all);
    CHECK(whole_values(all) ==
          std::vector<std::string>{"fc_in.linear=fc_in.act", "conv1.dropout", "conv1.aggregate",
                                   "conv1.linear=conv1.identity=conv1.act", "conv2.dropout",
                                   "conv2.aggregate", "conv2.linear=conv2.identity=conv2.act"});
    std::vector<std::string> recomputed;
    for (const PlanStep& step : all.steps) {
        if (step.kind == StepKind::recompute) {
            recomputed.push_back(model.graph.node(step.node).name);
        }
    }
    CHECK(recomputed == std::vector<std::string>{"fc_out.dropout", "fc_out.linear", "fc_out.bias",
                                                 "conv2.residual", "conv1.residual",
                                                 "fc_in.dropout"});
    // none: every value a backward reads besides.
    const Schedule none = plan_stage_schedule(model.graph, scope, Recompute::none);
    CHECK(whole_values(none).size() > whole_values(all).size());
    CHECK(none.arena_floats <= all.arena_floats + 1000);  // per row: not a whole-graph cost
}
