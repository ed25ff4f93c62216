// run_distributed_partition_job: slice → PT-Scotch → rows to their parts → part files written
// in parallel, partition.json by rank 0.
#include "partition/distributed_partition_job.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <span>

#include "datasets/adjacency.hpp"
#include "datasets/graph_io.hpp"
#include "datasets/graph_slice_io.hpp"
#include "partition/distribute_parts.hpp"
#include "partition/local_part.hpp"
#include "partition/ptscotch_partitioner.hpp"
#include "src/base/atomic_output.hpp"
#include "src/base/error.hpp"
#include "src/base/log.hpp"
#include "src/base/timer.hpp"
#include "src/comm/broadcast_string.hpp"

namespace strata {
namespace {

/// Every process's value, on rank 0 (empty elsewhere).
std::vector<std::int64_t> gather_values(std::int64_t value, Communicator& comm) {
    const std::vector<std::byte> all = comm.gather(std::as_bytes(std::span(&value, 1)), 0);
    std::vector<std::int64_t> values(all.size() / sizeof(std::int64_t));
    std::memcpy(values.data(), all.data(), all.size());
    return values;
}

}  // namespace

PartitionReport run_distributed_partition_job(const PartitionJob& job, Communicator& comm,
                                              DistributedPartitionStats* stats) {
    STRATA_CHECK(job.num_parts >= 1, "--parts must be >= 1, got ", job.num_parts);
    STRATA_CHECK(job.method == "ptscotch", "--distributed: method '", job.method,
                 "' does not run distributed (--distributed partitions with ptscotch)");
    STRATA_CHECK(job.chunks == 0,
                 "--distributed: --chunks is not supported (partition serially "
                 "for a chunk map)");
    STRATA_CHECK(
        job.balance.size() == 1 && (job.balance[0] == "vertices" || job.balance[0] == "edges"),
        "--distributed: PT-Scotch balances one quantity: --balance vertices or "
        "--balance edges");
    STRATA_CHECK(job.clusters_per_part >= 0, "--clusters-per-part must be >= 0, got ",
                 job.clusters_per_part);
    if (comm.rank() == 0) {
        // Fail before reading anything if the output cannot be written (exists, no parent).
        const AtomicOutput probe(job.out_dir, job.force);
    }
    comm.barrier();

    PartitionInfo info;
    info.source_path = job.data_path;
    info.method = job.method;
    info.seed = job.seed;
    info.balance = job.balance;
    info.progress = job.progress && comm.rank() == 0;
    Stopwatch watch;
    auto end_phase = [&](const char* name, bool collective) {
        std::vector<double> seconds{watch.seconds()};
        std::vector<std::int64_t> peak{peak_rss_bytes()};
        if (collective) {
            comm.allreduce_max(seconds);
            comm.allreduce_max(peak);
        }
        info.phases.push_back({name, seconds[0], peak[0]});
        watch.restart();
    };
    auto announce = [&](const std::string& line) {
        if (info.progress) {
            std::printf("%s\n", line.c_str());
            std::fflush(stdout);
        }
    };

    const int p = comm.size();
    announce("read slice: " + job.data_path + " (" + std::to_string(p) +
             " slices by rows + edges)");
    const std::vector<global_id> offsets = slice_offsets(job.data_path, p);
    std::int64_t bytes_read = 0;
    GraphSlice slice = read_graph_slice(job.data_path, offsets, comm.rank(),
                                        {.vertex_data = false, .bytes_read = &bytes_read});
    STRATA_CHECK(job.num_parts <= std::max<global_id>(slice.num_vertices, 1), job.data_path,
                 ": cannot split ", slice.num_vertices, " vertices into ", job.num_parts,
                 " parts (--parts must be <= vertices)");
    end_phase("read slice", true);

    announce("ptscotch: SCOTCH_dgraphPart, " + std::to_string(slice.num_vertices) + " vertices, " +
             std::to_string(slice.num_edges) + " stored edges, K=" + std::to_string(job.num_parts) +
             " on " + std::to_string(p) + " processes");
    const std::int64_t rows = slice.num_local();
    const std::int64_t edges = slice.indptr.back();
    // The slice's edges are freed once the symmetric graph is built (PT-Scotch's input).
    const std::vector<int> owners =
        partition_ptscotch(std::move(slice), job.num_parts,
                           PtScotchOptions{.seed = job.seed,
                                           .balance_edges = job.balance[0] == "edges",
                                           .clusters_per_part = job.clusters_per_part},
                           comm);
    end_phase("ptscotch", true);
    const std::int64_t partition_peak = peak_rss_bytes();

    // The parts: every process re-reads its slice, now with the vertex data (after PT-Scotch,
    // whose memory is gone), sends each row to its part (distribute_parts: part p is built on
    // process p % P) and writes the part files it holds, in parallel.
    {
        std::string checksum = comm.rank() == 0 ? source_identity(job.data_path) : std::string();
        broadcast_string(comm, checksum, 0);
        info.source_checksum = checksum;
    }
    announce("distribute: rows to their parts (part p on process p % " + std::to_string(p) + ")");
    const Partition partition = gather_owners(slice, owners, job.num_parts, comm);
    std::int64_t reread_bytes = 0;
    GraphSlice full = read_graph_slice(job.data_path, offsets, comm.rank(),
                                       {.vertex_data = true, .bytes_read = &reread_bytes});
    bytes_read += reread_bytes;
    const PartitionTotals totals{.num_edges = full.num_edges,
                                 .num_features = full.features.cols,
                                 .num_classes = full.num_classes};
    const std::vector<LocalPart> parts =
        distribute_parts(std::move(full), owners, job.num_parts, comm);
    end_phase("build", true);
    announce("write: " + std::to_string(job.num_parts) + " part files from " + std::to_string(p) +
             " processes");
    const PartitionReport report =
        write_partition_parallel(parts, partition, info, totals, job.out_dir, job.force, comm);

    const std::vector<std::int64_t> row_counts = gather_values(rows, comm);
    const std::vector<std::int64_t> edge_counts = gather_values(edges, comm);
    const std::vector<std::int64_t> bytes = gather_values(bytes_read, comm);
    const std::vector<std::int64_t> partition_peaks = gather_values(partition_peak, comm);
    const std::vector<std::int64_t> peaks = gather_values(peak_rss_bytes(), comm);
    if (stats != nullptr && comm.rank() == 0) {
        *stats = {row_counts, edge_counts, bytes, partition_peaks, peaks};
    }
    return report;
}

}  // namespace strata
