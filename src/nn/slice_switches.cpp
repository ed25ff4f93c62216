// slice_switches: the grid's blocks summed, and the stage's aggregation steps counted.
#include "src/nn/slice_switches.hpp"

#include "src/base/error.hpp"
#include "src/tensor/grid_blocks.hpp"

namespace strata {

std::int64_t switch_floats(index_t rows, index_t width, int slices) {
    STRATA_CHECK(slices >= 1 && rows >= 0 && width >= 0, "switch_floats: ", rows, " x ", width,
                 " over ", slices, " slices");
    std::int64_t diagonal = 0;
    for (int f = 0; f < slices; ++f) {
        diagonal += static_cast<std::int64_t>(grid_rows(rows, slices, f).count) *
                    static_cast<std::int64_t>(grid_block(width, slices, f).count);
    }
    return static_cast<std::int64_t>(rows) * static_cast<std::int64_t>(width) - diagonal;
}

std::vector<SliceSwitches> stage_switches(const ModelGraph& graph, const StageStorage& storage) {
    std::vector<SliceSwitches> out;
    for (const PlanStep& step : storage.schedule.steps) {
        if (step.kind == StepKind::loss || graph.node(step.node).op->row_local()) {
            continue;
        }
        STRATA_CHECK(step.kind != StepKind::recompute && step.folded < 0,
                     "switch_floats: a recomputed or folded aggregation (never in a stage)");
        const Node& node = graph.node(step.node);
        const bool backward = step.kind == StepKind::backward;
        // forward: the input in, the result out; backward: dz in, dh out (and dh in first when
        // it accumulates)
        const int count = backward && step.modes.at(0) == GradMode::accumulate ? 3 : 2;
        out.push_back({graph.tensor(node.output).cols, count, backward, false});
    }
    for (const TensorId t : storage.refill) {  // chunk copies refilled before backward
        out.push_back({graph.tensor(t).cols, 1, true, true});
    }
    return out;
}

std::int64_t stage_switch_floats(const ModelGraph& graph, const StageStorage& storage,
                                 std::span<const index_t> chunk_rows, int slices,
                                 std::optional<bool> refills) {
    std::int64_t floats = 0;
    for (const SliceSwitches& s : stage_switches(graph, storage)) {
        if (refills.has_value() && *refills != s.refill) {
            continue;
        }
        for (const index_t rows : chunk_rows) {
            floats += s.count * switch_floats(rows, s.width, slices);
        }
    }
    return floats;
}

}  // namespace strata
