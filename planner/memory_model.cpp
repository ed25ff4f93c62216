// predict_graph_memory: the executor's plan arithmetic on each rank's sizes.
#include "planner/memory_model.hpp"

#include <algorithm>

#include "partition/distribute_parts.hpp"
#include "planner/cost_model.hpp"
#include "src/nn/full_graph_executor.hpp"
#include "src/nn/model_parameters.hpp"
#include "training/run_memory.hpp"

namespace strata::planner {

MemoryPrediction predict_graph_memory(const ModelGraph& graph, Recompute recompute,
                                      const PartitionStats& stats, const MachineModel& machine,
                                      bool whole_graph_input, FeatureStorage features,
                                      HaloPrecision precision) {
    MemoryPrediction out;
    const std::size_t params = ModelParameters::count(graph);
    const bool sparse = features == FeatureStorage::sparse;
    for (const RankStats& rank : stats.ranks) {
        const ExecutionPlan plan = rank_plan(graph, rank, recompute, precision);
        std::vector<MemoryLine> lines =
            run_memory_lines({{"inputs (graph blocks, features, labels, masks)",
                               sparse ? rank.sparse_input_bytes : rank.input_bytes}},
                             FullGraphExecutor::plan_memory(plan, params), params);
        const std::int64_t total = total_bytes(lines);
        if (total > out.planned_bytes) {
            out.planned_bytes = total;
            out.lines = std::move(lines);
        }
    }
    set_peaks(out, stats, machine, whole_graph_input, features);
    return out;
}

void set_peaks(MemoryPrediction& out, const PartitionStats& stats, const MachineModel& machine,
               bool whole_graph_input, FeatureStorage features, int feature_slices) {
    const bool sparse = features == FeatureStorage::sparse;
    const auto baseline = static_cast<std::int64_t>(machine.baseline_rss_bytes);
    const RankStats& largest = *std::max_element(
        stats.ranks.begin(), stats.ranks.end(),
        [](const RankStats& a, const RankStats& b) { return a.input_bytes < b.input_bytes; });
    // The host part holds the features dense (input_bytes; a grid's rank one column slice of
    // them); the upload is the plan's.
    const std::int64_t slice_columns = (stats.features + feature_slices - 1) / feature_slices;
    const std::int64_t host = largest.input_bytes - static_cast<std::int64_t>(sizeof(float)) *
                                                        largest.owned *
                                                        (stats.features - slice_columns);
    const std::int64_t device = sparse ? largest.sparse_input_bytes : largest.input_bytes;
    if (whole_graph_input) {
        const std::int64_t batch = std::min(host, static_cast<std::int64_t>(default_batch_bytes));
        if (stats.parts == 1 && feature_slices == 1) {  // the part beside the whole graph and A
            out.load_peak_bytes = baseline + stats.load_bytes + host;
        } else if (stats.parts == 1) {  // a 1 x F rank: its slice of every row, then its part
            out.load_peak_bytes = baseline + 2 * host + 2 * batch;
        } else {  // METIS beside the slice, then the slice, the part and a batch each way
            out.load_peak_bytes = baseline + std::max(stats.load_bytes, 2 * host + 2 * batch);
        }
    }
    // While uploading, the host part and its backend copy coexist.
    out.peak_bytes =
        std::max({baseline + out.planned_bytes, baseline + host + device, out.load_peak_bytes});
}

}  // namespace strata::planner
