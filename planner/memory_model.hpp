// The memory of one rank of graph parallelism: the run's memory plan (training/run_memory.hpp:
// the upload's bytes, the executor's arena and parameters laid out by the executor's own
// planner, Adam, the best weights) and the resident peak, which is the larger of
//   steady state   baseline (MPI, BLAS, the program) + the plan
//   upload         baseline + the host part + its backend copy
//   load time      a .h5 input: baseline + what the load adds to rank 0 (load_bytes, measured
//                  by doing its reads when the planner partitioned): K = 1 the whole graph and A,
//                  plus the part built beside them; K > 1 its slice, the whole adjacency and
//                  METIS, or, after them, the slice, the part and a row batch each way
//                  (distribute_parts), whichever is larger; a 1 x F grid's rank the latter.
#pragma once

#include <cstdint>
#include <vector>

#include "layers/sparse_features.hpp"
#include "planner/machine_model.hpp"
#include "planner/partition_stats.hpp"
#include "src/nn/execution_plan.hpp"
#include "src/nn/executor.hpp"
#include "src/nn/model_graph.hpp"
#include "src/tensor/packed_rows.hpp"

namespace strata::planner {

struct MemoryPrediction {
    std::int64_t planned_bytes = 0;    ///< the largest rank's plan (strata train's "MB per rank")
    std::int64_t load_peak_bytes = 0;  ///< the load-time peak (0 for a partition directory)
    std::int64_t peak_bytes = 0;       ///< predicted resident peak of the largest rank
    /// Pipeline: what the accuracy guard's check step (one chunk per way) adds to the plan while
    /// it runs (in peak_bytes; 0: nothing, or no guard).
    std::int64_t guard_bytes = 0;
    std::vector<MemoryLine> lines;  ///< the largest rank's plan
};

/// `whole_graph_input`: --data is a .h5 file, not a directory. `features`: how the run uploads
/// the features (sparse: the plan's inputs are each rank's sparse_input_bytes; the host part
/// holds them dense either way). `precision`: the halo precision (its exchange scratch).
[[nodiscard]] MemoryPrediction predict_graph_memory(const ModelGraph& graph, Recompute recompute,
                                                    const PartitionStats& stats,
                                                    const MachineModel& machine,
                                                    bool whole_graph_input,
                                                    FeatureStorage features = FeatureStorage::dense,
                                                    HaloPrecision precision = HaloPrecision::fp32);

/// Sets m.load_peak_bytes and m.peak_bytes from m.planned_bytes (above): the steady state, the
/// upload of the largest rank's host part and the load-time peak. `feature_slices` (a grid's F):
/// each rank's host part holds one column slice of the features, and a 1 x F rank reads its
/// slice of every row (no whole-graph read).
void set_peaks(MemoryPrediction& m, const PartitionStats& stats, const MachineModel& machine,
               bool whole_graph_input, FeatureStorage features, int feature_slices = 1);

}  // namespace strata::planner
