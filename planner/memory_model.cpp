// predict_graph_memory: the executor's plan arithmetic on each rank's sizes.
#include "planner/memory_model.hpp"

#include <algorithm>

#include "planner/cost_model.hpp"
#include "src/nn/full_graph_executor.hpp"
#include "src/nn/model_parameters.hpp"
#include "training/run_memory.hpp"

namespace strata::planner {

MemoryPrediction predict_graph_memory(const ModelGraph& graph, Recompute recompute,
                                      const PartitionStats& stats, const MachineModel& machine,
                                      bool whole_graph_input) {
    MemoryPrediction out;
    const std::size_t params = ModelParameters::count(graph);
    for (const RankStats& rank : stats.ranks) {
        const ExecutionPlan plan = rank_plan(graph, rank, recompute);
        std::vector<MemoryLine> lines =
            run_memory_lines({{"inputs (graph blocks, features, labels, masks)", rank.input_bytes}},
                             FullGraphExecutor::plan_memory(plan, params), params);
        const std::int64_t total = total_bytes(lines);
        if (total > out.planned_bytes) {
            out.planned_bytes = total;
            out.lines = std::move(lines);
        }
    }
    const auto baseline = static_cast<std::int64_t>(machine.baseline_rss_bytes);
    const RankStats& largest = *std::max_element(
        stats.ranks.begin(), stats.ranks.end(),
        [](const RankStats& a, const RankStats& b) { return a.input_bytes < b.input_bytes; });
    out.load_peak_bytes = whole_graph_input ? baseline + stats.load_bytes + largest.input_bytes : 0;
    // While uploading, the host part and its backend copy coexist.
    out.peak_bytes = std::max(
        {baseline + out.planned_bytes, baseline + 2 * largest.input_bytes, out.load_peak_bytes});
    return out;
}

}  // namespace strata::planner
