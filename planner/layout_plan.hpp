// The plan: for every rank count asked for, the candidate layouts (graph parallelism in each
// --recompute mode; the G x F grid, feature_slices = F, for every F > 1 dividing the ranks whose
// slices keep a column each, planner/grid_model.hpp; the layer pipeline, S stages x 1 way x C
// chunks and S stages x F feature slices x C chunks, planner/pipeline_model.hpp), each with its
// predicted epoch time and parts, bytes per epoch, memory per rank and whether it fits; the
// recommendation is the fastest that fits. Text table and JSON (format "strata-plan", version 4:
// adds the grid's column_blocks; version 3 added feature_slices and the all-to-all bytes, version 2
// the pipeline fields; versions 1 to 3 are still read, as column_blocks = 1).
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
    /// Also print, per rank count, Plexus's published model for a GCN of the plan's widths beside
    /// Strata's 1D and best grid (planner/plexus_model.hpp): a comparison on paper.
    bool compare_plexus = false;
    /// Also print, per rank count, CAGNET's 1.5D (best replication c) and stationary 2D (best
    /// Gr x Gc) on paper beside the same 1D and grid (planner/cagnet_model.hpp), and which of
    /// the four moves the fewest bytes.
    bool compare_cagnet = false;
    /// The grids' column blocks (strata plan --column-blocks; a grid that does not fit tries more)
    int column_blocks = 1;
};

struct Candidate {
    std::string parallel = "graph";
    int ranks = 1;
    std::string recompute = "none";
    int stages = 0;  ///< pipeline: S, W and C (0 for graph parallelism)
    int ways = 0;
    int chunks = 0;
    std::int64_t stage_bytes = 0;  ///< pipeline: the metrics' stage_bytes per epoch
    std::int64_t way_bytes = 0;    ///< pipeline, W > 1 ways: the metrics' way_bytes per epoch
    double bubble = 0.0;           ///< pipeline: idle fraction of the busiest stage's wave
    std::string split;             ///< pipeline: the stage split (StageLayout::describe)
    /// F: of the G x F grid (1: 1D), or the pipeline's feature slices per stage (S x F)
    int feature_slices = 1;
    /// The grid's column blocks (column_blocks; 1 otherwise): the asked number, or more when
    /// that grid does not fit
    int column_blocks = 1;
    std::int64_t a2a_bytes = 0;  ///< grid, S x F: the layout switches' bytes per epoch (metrics)
    std::int64_t recompute_a2a_bytes = 0;
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

/// One rank count's comparison on paper (PlanRequest::compare_plexus, compare_cagnet).
struct PaperComparison {
    int ranks = 0;
    std::string plexus_grid;  ///< compare_plexus only: Plexus's fields  ///< "XxYxZ" of the P the
                              ///< model ran (the power of two <= ranks)
    int plexus_ranks = 0;
    double plexus_bytes = 0.0;         ///< received per rank per training step
    double plexus_memory_bytes = 0.0;  ///< per rank
    double oned_bytes = 0.0;           ///< Strata 1D: halo bytes per rank per evaluated epoch
    double oned_memory_bytes = 0.0;    ///< its memory plan (largest rank)
    std::string grid;                  ///< Strata's grid with the fewest bytes ("" if none)
    double grid_bytes = 0.0;           ///< its halo + all-to-all bytes per rank
    double grid_memory_bytes = 0.0;
    // compare_cagnet only (cagnet_model.hpp), bytes per rank per evaluated epoch as oned_bytes:
    double h = 0.0;             ///< h(P) of the plan's P-way partition
    bool extrapolated = false;  ///< h(P) or h(P/c) extrapolated (error_band: the larger band)
    double error_band = 0.0;
    int replication = 0;  ///< 1.5D's best c (0: none for this P)
    double team_h = 0.0;  ///< its h(P/c)
    double one_and_half_d_bytes = 0.0;
    double one_and_half_d_memory_bytes = 0.0;  ///< memory plan of its largest rank
    std::string two_d;                         ///< 2D's best "GrxGc" ("" if P has none)
    double two_d_bytes = 0.0;
    double two_d_memory_bytes = 0.0;
    std::string fewest;  ///< which of 1D, the grid, 1.5D and 2D moves the fewest bytes
};

struct Plan {
    static constexpr int format_version = 4;
    std::string data;
    std::string model;  ///< describe(spec)
    std::string machine_host;
    double memory_per_rank_bytes = 0.0;
    std::vector<Candidate> candidates;
    std::vector<std::string> notes;
    std::vector<PaperComparison> paper;  ///< compare_plexus or compare_cagnet only
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
    int feature_slices = 1;  ///< the grid's F, or the pipeline's (S x F, one way)
    int column_blocks = 1;   ///< the grid's
};
/// From a plan JSON (plan_to_json); `what` names the file. Throws if it has no recommendation
/// for `ranks`.
[[nodiscard]] ChosenLayout chosen_layout(const std::string& json_text, const std::string& what,
                                         int ranks);

}  // namespace strata::planner
