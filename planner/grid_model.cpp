// predict_grid_epoch, predict_grid_memory: the grid as graph parallelism's ranks of a part / F,
// plus the layout switches (formulas in grid_model.hpp).
#include "planner/grid_model.hpp"

#include <algorithm>
#include <cmath>

#include "layers/grid_aggregation.hpp"
#include "layers/layout_switch.hpp"
#include "src/base/error.hpp"
#include "src/nn/full_graph_executor.hpp"
#include "src/nn/model_parameters.hpp"
#include "src/nn/slice_switches.hpp"
#include "training/run_memory.hpp"

namespace strata::planner {
namespace {

/// The grid operator's sizes on rank (g, f): GridAggregation::workspace_floats without a graph.
class GridShapeOperator final : public GraphOperator {
public:
    GridShapeOperator(const RankStats& part, int slices, int slice, int blocks)
        : part_(part), slices_(slices), slice_(slice), blocks_(blocks) {}
    [[nodiscard]] index_t num_rows() const override { return chunk().count; }
    [[nodiscard]] std::size_t workspace_floats(index_t width) const override {
        return backward_workspace_floats(width, false);
    }
    [[nodiscard]] std::size_t backward_workspace_floats(index_t width,
                                                        bool accumulate) const override {
        const int blocks = GridAggregation::blocks_at(width, slices_, blocks_);
        const index_t c = slice_columns(width, slices_, slice_, {blocks, 0}).count;
        return GridAggregation::workspace_floats(
            static_cast<index_t>(part_.owned), width, slices_, slice_, blocks_,
            exchange_workspace_floats(part_.send_rows, part_.recv_rows, c), accumulate);
    }
    void forward(ConstMatrixView, MatrixView, RowRange, std::span<float>, ExchangeCall) override {
        STRATA_FAIL("GridShapeOperator: sizes only");
    }
    void backward(ConstMatrixView, MatrixView, RowRange, float, std::span<float>,
                  ExchangeCall) override {
        STRATA_FAIL("GridShapeOperator: sizes only");
    }
    [[nodiscard]] HaloBytes bytes_sent() const override { return {}; }

private:
    [[nodiscard]] RowRange chunk() const {
        return grid_rows(static_cast<index_t>(part_.owned), slices_, slice_);
    }
    const RankStats& part_;
    int slices_;
    int slice_;
    int blocks_;
};

ExecutionPlan grid_rank_plan(const ModelGraph& graph, const RankStats& part, int slices, int slice,
                             Recompute recompute, int blocks) {
    const GridShapeOperator op(part, slices, slice, blocks);
    PlanOptions options;
    options.rows = op.num_rows();
    options.recompute = recompute;
    options.graph = &op;
    return plan_execution(graph, options);
}

/// Seconds of rank (g, f)'s switches in `schedule` (not overlapped); in `blocks` column blocks,
/// each switch's latencies `blocks` times.
double schedule_switch_seconds(const std::vector<GridSwitches>& calls, const RankStats& part,
                               int slices, int slice, const Network& network, double copy_gbs,
                               int blocks) {
    double seconds = 0.0;
    for (const GridSwitches& call : calls) {
        const int b = GridAggregation::blocks_at(call.width, slices, blocks);
        seconds += call.switches * (switch_seconds(static_cast<index_t>(part.owned), call.width,
                                                   slices, slice, network, copy_gbs) +
                                    (b - 1) * (slices - 1) * network.latency_s);
    }
    return seconds;
}

}  // namespace

double switch_seconds(index_t rows, index_t width, int slices, int slice, const Network& network,
                      double copy_gbs) {
    const auto n = static_cast<double>(rows);
    const auto r = static_cast<double>(grid_rows(rows, slices, slice).count);
    const auto c = static_cast<double>(grid_block(width, slices, slice).count);
    const double sent = r * (static_cast<double>(width) - c);  // to_columns' (to_rows': received)
    const double received = (n - r) * c;
    // Copies: R's staged side (packed by to_columns, unpacked by to_rows) and the rank's own
    // block between R and C, r c floats, at the copy rate; C's side travels in place.
    const double copied = sent + r * c;
    return (slices - 1) * network.latency_s +
           4.0 * std::max(sent, received) / (network.bandwidth_gbs * giga) +
           4.0 * copied / (copy_gbs * giga);
}

Network feature_group_network(const MachineModel& machine, bool inside, int f, int per_node) {
    return inside ? machine.shared_memory : group_link(machine, f, 1, per_node);
}

Network group_link(const MachineModel& machine, int members, int spacing, int per_node) {
    STRATA_CHECK(members >= 1 && spacing >= 1, "group_link: ", members, " members ", spacing,
                 " apart");
    const int m = std::clamp(per_node / spacing, 1, members);
    const int senders = std::clamp(per_node, 1, members * spacing);
    Network link = machine.link(members - m);
    if (m < members && senders > 1) {
        link.bandwidth_gbs /= static_cast<double>(members - m) / (members - 1) * senders;
    }
    return link;
}

std::vector<GridSwitches> grid_switches(const ModelGraph& graph, const Schedule& schedule) {
    std::vector<GridSwitches> calls;
    const auto cols = [&](int slot) { return schedule.slots[static_cast<std::size_t>(slot)].cols; };
    for (const PlanStep& step : schedule.steps) {
        if (step.kind == StepKind::loss) {
            continue;
        }
        const bool recompute = step.kind == StepKind::recompute;
        const bool aggregate = graph.node(step.node).op->kind() == OpKind::aggregate;
        if (step.kind == StepKind::backward && step.folded >= 0) {
            calls.push_back({cols(step.dy), 2, false});
        } else if (aggregate && step.kind == StepKind::backward) {
            if (step.modes[0] != GradMode::skip) {
                calls.push_back(
                    {cols(step.dy), step.modes[0] == GradMode::accumulate ? 3 : 2, false});
            }
        } else if (aggregate) {
            calls.push_back({cols(step.y), 2, recompute});
        }
    }
    return calls;
}

GridPrediction predict_grid_epoch(const ModelGraph& graph, Recompute recompute,
                                  const PartitionStats& stats, int slices, const RunShape& shape,
                                  const Network& feature_network, int blocks) {
    STRATA_CHECK(slices >= 1, "grid: ", slices, " feature slices");
    GridPrediction out;
    // Rank (g, f) as a rank of graph parallelism with part g's sizes / F.
    PartitionStats ranks = stats;
    ranks.parts = stats.parts * slices;
    ranks.ranks.clear();
    const auto divided = [slices](std::int64_t x) {
        return static_cast<std::int64_t>(std::llround(static_cast<double>(x) / slices));
    };
    double switches = 0.0;
    double eval_switches = 0.0;
    // A copy out of cache moves at the node's process-to-process rate (one memcpy per float:
    // bench/layout_switch), not at the streaming triad's.
    const double copy_gbs = shape.machine->shared_memory.bandwidth_gbs;
    for (const RankStats& part : stats.ranks) {
        const ExecutionPlan part_plan = rank_plan(graph, part, recompute);
        for (const Schedule* s : {&part_plan.training(), &part_plan.evaluation()}) {
            const ScheduleBytes halo = schedule_halo_bytes(graph, *s, part, shape.halo_precision);
            out.time.halo_bytes += halo.sent;
            out.time.recompute_halo_bytes += halo.recompute;
            for (const GridSwitches& call : grid_switches(graph, *s)) {
                const std::int64_t bytes =
                    4 * call.switches *
                    switch_floats(static_cast<index_t>(part.owned), call.width, slices);
                (call.recompute ? out.recompute_a2a_bytes : out.a2a_bytes) += bytes;
            }
        }
        // Every rank (g, f) of the part: its row chunk (grid_rows: whole tiles, not always
        // the first the longest) and its column slices (grid_block: the first the widest).
        for (int f = 0; f < slices; ++f) {
            RankStats v = part;
            v.owned = grid_rows(static_cast<index_t>(part.owned), slices, f).count;
            v.inner_nnz = divided(part.inner_nnz);
            v.halo_nnz = divided(part.halo_nnz);
            v.send_rows = divided(part.send_rows);
            v.recv_rows = divided(part.recv_rows);
            ranks.ranks.push_back(v);
            const ExecutionPlan plan = grid_rank_plan(graph, part, slices, f, recompute, blocks);
            switches = std::max(
                switches, schedule_switch_seconds(grid_switches(graph, plan.training()), part,
                                                  slices, f, feature_network, copy_gbs, blocks));
            eval_switches =
                std::max(eval_switches,
                         schedule_switch_seconds(grid_switches(graph, plan.evaluation()), part,
                                                 slices, f, feature_network, copy_gbs, blocks));
        }
    }
    const std::int64_t halo = out.time.halo_bytes;
    const std::int64_t recompute_halo = out.time.recompute_halo_bytes;
    out.time = predict_graph_epoch(graph, recompute, ranks, shape);
    out.time.halo_bytes = halo;
    out.time.recompute_halo_bytes = recompute_halo;
    out.time.wait_s += switches;
    out.time.eval_s += eval_switches;
    out.time.epoch_s += switches + eval_switches;
    out.time.terms.exchange_s += switches + eval_switches;
    out.time.terms.exposed_s += switches + eval_switches;
    out.time.train_terms.exchange_s += switches;
    out.time.train_terms.exposed_s += switches;
    return out;
}

MemoryPrediction predict_grid_memory(const ModelGraph& graph, Recompute recompute,
                                     const PartitionStats& stats, int slices,
                                     const MachineModel& machine, bool whole_graph_input,
                                     int blocks) {
    MemoryPrediction out;
    const std::size_t params = ModelParameters::count(graph);
    for (const RankStats& part : stats.ranks) {
        for (int f = 0; f < slices; ++f) {  // every rank (g, f): the largest
            const ExecutionPlan plan = grid_rank_plan(graph, part, slices, f, recompute, blocks);
            // The rank uploads its row chunk's features, not the part's (docs/layouts.md,
            // "Loading").
            const std::int64_t chunk_rows =
                grid_rows(static_cast<index_t>(part.owned), slices, f).count;
            const std::int64_t features = static_cast<std::int64_t>(sizeof(float)) * stats.features;
            const std::int64_t inputs = part.input_bytes - features * (part.owned - chunk_rows);
            std::vector<MemoryLine> lines =
                run_memory_lines({{"inputs (graph blocks, features, labels, masks)", inputs}},
                                 FullGraphExecutor::plan_memory(plan, params), params);
            const std::int64_t total = total_bytes(lines);
            if (total > out.planned_bytes) {
                out.planned_bytes = total;
                out.lines = std::move(lines);
            }
        }
    }
    set_peaks(out, stats, machine, whole_graph_input, FeatureStorage::dense, slices);
    return out;
}

}  // namespace strata::planner
