// The plan: for every rank count asked for, the candidate layouts (graph parallelism in each
// --recompute mode; the layer pipeline, S stages x 1 way x C chunks, planner/pipeline_model.hpp),
// each with its predicted epoch time and parts, bytes per epoch, memory per rank and whether it
// fits; the recommendation is the fastest that fits. Text table and JSON (format "strata-plan",
// version 2: adds the pipeline fields; version 1 files are still read).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "layers/model_zoo.hpp"
#include "planner/cost_model.hpp"
#include "planner/machine_model.hpp"
#include "planner/memory_model.hpp"

namespace strata::planner {

struct PlanRequest {
    std::string data;  ///< graph .h5 or partition directory
    ModelSpec spec;
    std::vector<int> ranks;
    MachineModel machine;
    std::string cache_dir;
    double memory_per_rank_bytes = 0.0;  ///< 0: the machine's memory / ranks on a node
    int ranks_per_node = 0;              ///< 0: every rank on one node (shared memory)
    int threads = 0;                     ///< per rank; 0: the machine's cores / ranks per node
    int max_partition_parts = 64;        ///< larger K are extrapolated from the measured ones
    std::uint64_t seed = 0;
    /// Graph parallelism's halo rows on the wire (halo_precision): priced at this precision;
    /// fp32 unless asked (the pipeline is always priced at fp32, the only one it runs).
    HaloPrecision halo_precision = HaloPrecision::fp32;
};

struct Candidate {
    std::string parallel = "graph";
    int ranks = 1;
    std::string recompute = "none";
    int stages = 0;  ///< pipeline: S, W and C (0 for graph parallelism)
    int ways = 0;
    int chunks = 0;
    std::int64_t stage_bytes = 0;  ///< pipeline: the metrics' stage_bytes per epoch
    double bubble = 0.0;           ///< pipeline: idle fraction of the busiest stage's wave
    std::string split;             ///< pipeline: the stage split (StageLayout::describe)
    int threads = 1;
    EpochPrediction time;
    MemoryPrediction memory;
    bool fits = true;
    bool extrapolated = false;
    /// Relative error band of the epoch: the extrapolation's (halo terms, extrapolated K only)
    /// plus the calibration's (the epoch predicted with slowed_by_spread's machine over the
    /// epoch predicted, less 1; 0 for a machine model without spreads).
    double error_band = 0.0;
    bool recommended = false;
};

struct Plan {
    static constexpr int format_version = 2;
    std::string data;
    std::string model;  ///< describe(spec)
    std::string machine_host;
    double memory_per_rank_bytes = 0.0;
    std::vector<Candidate> candidates;
    std::vector<std::string> notes;
    double planning_s = 0.0;
};

/// Throws strata::Error (one line) on an empty rank list, a rank count < 1, or a memory limit
/// no candidate can meet.
[[nodiscard]] Plan make_plan(const PlanRequest& request);

[[nodiscard]] std::string plan_to_json(const Plan& plan);
[[nodiscard]] std::string format_plan(const Plan& plan);

/// What `strata train --plan` applies: the recommended candidate for `ranks`.
struct ChosenLayout {
    std::string parallel = "graph";
    std::string recompute = "none";
    int stages = 0;  ///< pipeline only
    int ways = 0;
    int chunks = 0;
};
/// From a plan JSON (plan_to_json); `what` names the file. Throws if it has no recommendation
/// for `ranks`.
[[nodiscard]] ChosenLayout chosen_layout(const std::string& json_text, const std::string& what,
                                         int ranks);

}  // namespace strata::planner
