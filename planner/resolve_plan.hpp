// resolve_plan: a run configuration with plan = "auto" or a plan file, turned into the same
// configuration with the plan's layout filled in — the configuration -> configuration step every
// front end (`strata train --plan`, Python, the benches) calls before a Session, so that
// training/ never depends on the planner.
#pragma once

#include <string>

#include "planner/machine_file.hpp"
#include "src/comm/communicator.hpp"
#include "training/run_config.hpp"

namespace strata::planner {

struct ResolvedPlan {
    /// plan cleared; parallel, recompute (stages, ways, chunks; feature_slices: the grid's or
    /// S x F's) set
    RunConfig config;
    /// What was applied: "plan (planned here, machine uncalibrated ...): parallel = graph,
    /// recompute = none, partition_method = metis, for 2 ranks". Empty without a plan.
    std::string line;
    /// plan = auto on more ranks (times threads) than the node's cores: the planned times are
    /// time-shared estimates (planner::oversubscription_warning). Empty otherwise.
    std::string warning;
};

/// Collective over `comm` (its size is the rank count planned for). No plan: `config` unchanged.
/// Rank 0 plans (make_plan of config.data, config.model and comm.size() ranks, with the machine
/// model find_machine(config.machine) names and the statistics cache `cache_dir`) or reads the
/// plan file; every rank receives the chosen layout (the configuration as JSON). A graph-parallel
/// plan of a .h5 on K > 1 ranks partitions it with METIS (what the plan measured) unless
/// partition_method was set. Throws strata::Error naming the plan file and what is wrong
/// (not JSON, no recommendation for this rank count, a layout that does not fit it).
[[nodiscard]] ResolvedPlan resolve_plan(const RunConfig& config, Communicator& comm,
                                        const std::string& cache_dir = default_plan_cache());

}  // namespace strata::planner
