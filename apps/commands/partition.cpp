// `strata partition`: args → run_partition_job (read, METIS/random/block, adjacency, build,
// write) → the report as a table (or JSON with --json).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "apps/commands/command.hpp"
#include "partition/partition_job.hpp"

namespace strata::app {
namespace {

struct PartitionCommandOptions {
    PartitionJob job;
    std::string balance = "vertices,edges,train";
    bool json = false;
};

int run_partition(PartitionCommandOptions& o) {
    o.job.balance = parse_balance(o.balance);
    o.job.progress = !o.json;
    if (!o.json) {
        std::printf(
            "partition: %s into %d parts%s (method %s, seed %llu) -> %s\n", o.job.data_path.c_str(),
            o.job.num_parts,
            o.job.chunks > 0
                ? (" of " + std::to_string(o.job.chunks / std::max(o.job.num_parts, 1)) + " chunks")
                      .c_str()
                : "",
            o.job.method.c_str(), static_cast<unsigned long long>(o.job.seed),
            o.job.out_dir.c_str());
        std::fflush(stdout);
    }
    const PartitionReport report = run_partition_job(o.job);
    if (o.json) {
        std::fputs(report_to_json(report).c_str(), stdout);
    } else {
        std::fputs(format_report(report).c_str(), stdout);
        std::printf("wrote %s (partition.json + %d part files)\n", o.job.out_dir.c_str(),
                    report.num_parts);
    }
    return 0;
}

}  // namespace

Command add_partition_command(CLI::App& root) {
    auto o = std::make_shared<PartitionCommandOptions>();
    PartitionJob& job = o->job;
    CLI::App* cmd = root.add_subcommand(
        "partition", "Split a graph dataset into K parts and write a partition directory");
    cmd->add_option("--data", job.data_path, "Graph dataset (.h5)")->required();
    cmd->add_option("-k,--parts", job.num_parts, "Number of parts K (= ranks of the training run)")
        ->required();
    cmd->add_option("--out", job.out_dir, "Partition directory to create")->required();
    cmd->add_option("--method", job.method, "metis, random or block")->capture_default_str();
    cmd->add_option("--seed", job.seed, "Seed of METIS / the random partitioner")
        ->capture_default_str();
    cmd->add_option("--balance", o->balance,
                    "METIS balance constraints: comma-separated subset of vertices,edges,train")
        ->capture_default_str();
    cmd->add_option("--chunks", job.chunks,
                    "Also cut every part into C/K chunks for train --parallel pipeline (a chunk "
                    "map; C a multiple of K; 0: none)")
        ->capture_default_str();
    cmd->add_flag("--force", job.force, "Replace --out if it exists");
    cmd->add_flag("--json", o->json, "Print the report (partition.json) instead of the table");
    return {cmd, [o] { return run_partition(*o); }};
}

}  // namespace strata::app
