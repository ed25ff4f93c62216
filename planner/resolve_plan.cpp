// resolve_plan: rank 0 chooses, everyone applies.
#include "planner/resolve_plan.hpp"

#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "planner/layout_plan.hpp"
#include "src/base/error.hpp"
#include "src/comm/broadcast_string.hpp"

namespace strata::planner {
namespace {

/// The recommended layout for comm.size() ranks, from the plan file or planned here.
ChosenLayout choose(const RunConfig& config, int ranks, const MachineFile& machine,
                    const std::string& cache_dir) {
    if (config.plan == "auto") {
        PlanRequest request{.data = config.data,
                            .spec = config.model,
                            .ranks = {ranks},
                            .machine = machine.model,
                            .cache_dir = cache_dir,
                            .seed = config.seed,
                            .halo_precision = *parse_halo_precision(config.halo_precision)};
        return chosen_layout(plan_to_json(make_plan(request)), "plan = auto", ranks);
    }
    std::ifstream in(config.plan);
    STRATA_CHECK(in.good(), config.plan, ": cannot read the plan");
    std::stringstream text;
    text << in.rdbuf();
    return chosen_layout(text.str(), config.plan, ranks);
}

}  // namespace

ResolvedPlan resolve_plan(const RunConfig& config, Communicator& comm,
                          const std::string& cache_dir) {
    ResolvedPlan resolved{config, {}, {}};
    if (config.plan.empty()) {
        return resolved;
    }
    std::string text;
    std::string line;
    std::string warning;
    const int ranks = comm.size();
    if (comm.rank() == 0) {
        const MachineFile machine = find_machine(config.plan == "auto" ? config.machine : "");
        if (config.plan == "auto") {
            const std::array<int, 1> counts{ranks};
            warning = oversubscription_warning(counts, 0, config.threads, node_cores(machine));
        }
        const ChosenLayout layout = choose(config, ranks, machine, cache_dir);
        RunConfig c = config;
        c.parallel = layout.parallel;
        c.recompute = layout.recompute;
        line =
            "plan (" +
            (config.plan == "auto" ? "planned here, machine " + machine.describe() : config.plan) +
            "): parallel = " + c.parallel;
        if (c.parallel == "pipeline") {
            c.stages = layout.stages;
            c.ways = layout.ways;
            c.chunks = layout.chunks;
            line += ", stages = " + std::to_string(c.stages) +
                    ", ways = " + std::to_string(c.ways) + ", chunks = " + std::to_string(c.chunks);
            if (layout.feature_slices > 1) {  // S x F
                c.feature_slices = layout.feature_slices;
                line += ", feature_slices = " + std::to_string(c.feature_slices);
            }
        } else {
            line += ", recompute = " + c.recompute;
            if (layout.feature_slices > 1) {
                c.feature_slices = layout.feature_slices;
                line += ", feature_slices = " + std::to_string(c.feature_slices);
            }
            if (layout.feature_slices > 1 && layout.column_blocks > 1) {
                c.column_blocks = layout.column_blocks;
                line += ", column_blocks = " + std::to_string(c.column_blocks);
            }
            // The plan's statistics come from METIS's partition of a .h5
            // (planner/partition_stats.cpp): a planned run partitions the same way.
            std::error_code ec;
            if (c.partition_method == "auto" && !std::filesystem::is_directory(c.data, ec) &&
                ranks > 1) {
                c.partition_method = "metis";
                line += ", partition_method = metis";
            }
        }
        line += ", for " + std::to_string(ranks) + " ranks";
        c.plan.clear();
        c.machine.clear();
        text = config_to_json(c);
    }
    broadcast_string(comm, text, 0);
    broadcast_string(comm, line, 0);
    broadcast_string(comm, warning, 0);
    resolved.config = config_from_json(text, "the plan's configuration");
    resolved.line = line;
    resolved.warning = warning;
    return resolved;
}

}  // namespace strata::planner
