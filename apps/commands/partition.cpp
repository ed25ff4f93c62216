// `strata partition`: args → run_partition_job (read, METIS/random/block, adjacency, build,
// write) → the report as a table (or JSON with --json).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "apps/commands/command.hpp"
#include "partition/distributed_partition_job.hpp"
#include "partition/partition_job.hpp"
#include "src/base/error.hpp"
#include "src/comm/mpi_communicator.hpp"

namespace strata::app {
namespace {

struct PartitionCommandOptions {
    PartitionJob job;
    std::string balance = "vertices,edges,train";
    bool json = false;
    bool distributed = false;
    CLI::Option* method_option = nullptr;
    CLI::Option* balance_option = nullptr;
    CLI::Option* clusters_option = nullptr;
};

/// Per-process figures of a distributed run (rank 0 prints them).
void print_processes(const DistributedPartitionStats& stats) {
    std::printf("%-8s %12s %14s %14s %18s %14s\n", "process", "slice rows", "slice edges",
                "MiB read", "peak MiB ptscotch", "peak MiB end");
    constexpr double mib = 1024.0 * 1024.0;
    for (std::size_t r = 0; r < stats.slice_rows.size(); ++r) {
        std::printf("%-8zu %12lld %14lld %14.1f %18.1f %14.1f\n", r,
                    static_cast<long long>(stats.slice_rows[r]),
                    static_cast<long long>(stats.slice_edges[r]),
                    static_cast<double>(stats.bytes_read[r]) / mib,
                    static_cast<double>(stats.partition_peak[r]) / mib,
                    static_cast<double>(stats.peak[r]) / mib);
    }
}

int run_distributed(PartitionCommandOptions& o) {
    MpiCommunicator comm;
    if (o.method_option->count() == 0) {
        o.job.method = "ptscotch";
    }
    o.job.balance = parse_balance(o.balance_option->count() == 0 ? "vertices" : o.balance);
    o.job.progress = !o.json;
    const bool root = comm.rank() == 0;
    if (root && !o.json) {
        std::printf("partition: %s into %d parts on %d processes (method %s, seed %llu) -> %s\n",
                    o.job.data_path.c_str(), o.job.num_parts, comm.size(), o.job.method.c_str(),
                    static_cast<unsigned long long>(o.job.seed), o.job.out_dir.c_str());
        std::fflush(stdout);
    }
    DistributedPartitionStats stats;
    const PartitionReport report = run_distributed_partition_job(o.job, comm, &stats);
    if (!root) {
        return 0;
    }
    if (o.json) {
        std::fputs(report_to_json(report).c_str(), stdout);
    } else {
        std::fputs(format_report(report).c_str(), stdout);
        print_processes(stats);
        std::printf("wrote %s (partition.json + %d part files)\n", o.job.out_dir.c_str(),
                    report.num_parts);
    }
    return 0;
}

int run_partition(PartitionCommandOptions& o) {
    if (o.distributed) {
        return run_distributed(o);
    }
    {
        const MpiCommunicator world;
        STRATA_CHECK(world.size() == 1, "partition: ", world.size(),
                     " processes would each write the same directory: use --distributed under "
                     "mpirun (or run one process)");
    }
    STRATA_CHECK(o.clusters_option->count() == 0,
                 "--clusters-per-part: only with --distributed (serial METIS does not contract)");
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
        ->required()
        ->default_str("");  // required: no default to show (the root captures every default)
    cmd->add_option("--out", job.out_dir, "Partition directory to create")->required();
    o->method_option =
        cmd->add_option("--method", job.method,
                        "metis, random or block; with --distributed: ptscotch (its default)")
            ->capture_default_str();
    cmd->add_option("--seed", job.seed, "Seed of METIS, PT-Scotch or the random partitioner")
        ->capture_default_str();
    o->balance_option =
        cmd->add_option("--balance", o->balance,
                        "METIS balance constraints: comma-separated subset of vertices,edges,train "
                        "(--distributed: one of vertices (its default) or edges)")
            ->capture_default_str();
    cmd->add_option("--chunks", job.chunks,
                    "Also cut every part into C/K chunks for train --parallel pipeline (a chunk "
                    "map; C a multiple of K; 0: none)")
        ->capture_default_str();
    o->clusters_option =
        cmd->add_option("--clusters-per-part", job.clusters_per_part,
                        "--distributed: contract the graph into about this many clusters per part "
                        "before PT-Scotch (0: PT-Scotch on the whole graph); docs/scale.md")
            ->capture_default_str();
    cmd->add_flag("--force", job.force, "Replace --out if it exists");
    cmd->add_flag("--distributed", o->distributed,
                  "Partition with PT-Scotch across the processes of mpirun -np P (each reads 1/P "
                  "of the file; K may differ from P); docs/scale.md");
    cmd->add_flag("--json", o->json, "Print the report (partition.json) instead of the table");
    return {cmd, [o] { return run_partition(*o); }};
}

}  // namespace strata::app
