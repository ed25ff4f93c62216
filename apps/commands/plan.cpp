// `strata plan`: the candidate layouts for a graph, a model and rank counts, with predicted
// epoch time, halo bytes and memory per rank, and the recommendation (planner/).
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "apps/commands/cli_checks.hpp"
#include "apps/commands/command.hpp"
#include "apps/commands/model_options.hpp"
#include "apps/commands/plan_defaults.hpp"
#include "planner/layout_plan.hpp"
#include "src/base/error.hpp"

namespace strata::app {
namespace {

struct PlanOptions {
    std::string data;
    ModelOptions model;
    std::string ranks;
    std::string machine;
    double memory_gb = 0.0;
    std::string cache_dir;
    int ranks_per_node = 0;
    int threads = 0;
    int max_partition_parts = 64;
    std::uint64_t seed = 0;
    std::string halo_precision = "fp32";
    std::string compare;
    int column_blocks = 1;
    bool json = false;
};

std::vector<int> parse_ranks(const std::string& text) {
    std::vector<int> ranks;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) {
        if (item.empty()) {
            continue;
        }
        char* end = nullptr;
        const long k = std::strtol(item.c_str(), &end, 10);
        STRATA_CHECK(end != nullptr && *end == '\0' && k >= 1 && k <= 1 << 20, "--ranks: '", item,
                     "' is not a rank count (a positive integer)");
        ranks.push_back(static_cast<int>(k));
    }
    STRATA_CHECK(!ranks.empty(), "--ranks: empty rank list (give e.g. --ranks 1,2,4)");
    return ranks;
}

int run_plan(const PlanOptions& o) {
    const planner::MachineFile machine = planner::find_machine(o.machine);
    planner::PlanRequest request;
    request.data = o.data;
    request.spec = resolve_model(o.model);
    request.ranks = parse_ranks(o.ranks);
    request.machine = machine.model;
    request.cache_dir = o.cache_dir.empty() ? default_plan_cache() : o.cache_dir;
    request.memory_per_rank_bytes = o.memory_gb * 1e9;
    request.ranks_per_node = o.ranks_per_node;
    request.threads = o.threads;
    request.max_partition_parts = o.max_partition_parts;
    request.seed = o.seed;
    const std::optional<HaloPrecision> precision = parse_halo_precision(o.halo_precision);
    STRATA_CHECK(precision.has_value(), "--halo-precision: '", o.halo_precision,
                 "' is not fp32, bf16 or int8");
    request.halo_precision = *precision;
    request.column_blocks = o.column_blocks;
    std::stringstream models(o.compare);
    std::string name;
    while (std::getline(models, name, ',')) {
        STRATA_CHECK(name == "plexus" || name == "cagnet", "--compare: '", name,
                     "' is not a model it knows (plexus, cagnet)");
        (name == "plexus" ? request.compare_plexus : request.compare_cagnet) = true;
    }
    // Before the partitioning, which can take a while: a user who asked for more ranks than
    // cores learns it now.
    const std::string oversubscribed = planner::oversubscription_warning(
        request.ranks, o.ranks_per_node, o.threads, planner::node_cores(machine));
    if (!oversubscribed.empty()) {
        std::fprintf(stderr, "warning: %s\n", oversubscribed.c_str());
    }
    planner::Plan plan = planner::make_plan(request);
    if (machine.calibrated()) {  // make_plan itself notes an uncalibrated model
        plan.notes.insert(plan.notes.begin(), "machine model: " + machine.describe());
    }
    if (!oversubscribed.empty()) {
        plan.notes.push_back(oversubscribed);
    }
    std::fputs((o.json ? planner::plan_to_json(plan) : planner::format_plan(plan)).c_str(), stdout);
    return 0;
}

}  // namespace

Command add_plan_command(CLI::App& root) {
    auto o = std::make_shared<PlanOptions>();
    CLI::App* cmd = root.add_subcommand(
        "plan",
        "Predict epoch time, halo bytes and memory per rank of each parallel layout, and "
        "recommend one (docs/planner.md)");
    cmd->add_option("--data", o->data, "Graph .h5 file, or a partition directory")->required();
    add_model_options(*cmd, o->model);
    cmd->add_option("--ranks", o->ranks, "Rank counts to plan for, e.g. 1,2,4,8")->required();
    add_machine_option(*cmd, o->machine, "Machine model");
    cmd->add_option("--memory-per-rank", o->memory_gb,
                    "Memory each rank may use, GB (default: the machine's / ranks per node)")
        ->check(positive());
    cmd->add_option("--cache-dir", o->cache_dir,
                    "Where partition statistics are cached (default ~/.cache/strata/plan; never "
                    "beside the input)");
    cmd->add_option("--ranks-per-node", o->ranks_per_node,
                    "Ranks per node; more ranks than this talk over the machine model's "
                    "inter-node link (default: all on one node)")
        ->check(positive());
    cmd->add_option("--threads", o->threads,
                    "Threads per rank, as strata train --threads (default: the machine's cores / "
                    "ranks per node)")
        ->check(positive());
    cmd->add_option("--max-partition-parts", o->max_partition_parts,
                    "Largest K partitioned here with METIS; larger K are extrapolated")
        ->check(positive())
        ->capture_default_str();
    cmd->add_option("--seed", o->seed, "Partitioning seed (as strata train --seed)");
    cmd->add_option("--halo-precision", o->halo_precision,
                    "Price graph parallelism's halo exchanges at fp32, bf16 or int8 (as strata "
                    "train --halo-precision; lossy precisions are priced only when asked)")
        ->default_str("fp32");
    cmd->add_option("--compare", o->compare,
                    "plexus: also print Plexus's published model (SC'25) for a GCN of these "
                    "widths beside Strata's 1D and best grid, per rank count: a comparison on "
                    "paper (docs/planner.md); cagnet: CAGNET's 1.5D (best replication c) and "
                    "stationary 2D (best Gr x Gc) priced with the plan's partition statistics, "
                    "and which layout moves the fewest bytes; plexus,cagnet: both");
    cmd->add_option("--column-blocks", o->column_blocks,
                    "Price every G x F grid with its aggregation in B column blocks (as strata "
                    "train --column-blocks); a grid that does not fit also tries 2B, 4B, up to 8")
        ->check(positive())
        ->capture_default_str();
    cmd->add_flag("--json", o->json, "Print the plan as JSON (format strata-plan, version 4)");
    return {cmd, [o] { return run_plan(*o); }};
}

}  // namespace strata::app
