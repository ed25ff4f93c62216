// run_distributed_partition_job: `mpirun -np P strata partition --distributed`: every process reads
// its slice of the graph file, PT-Scotch partitions in parallel, the partition directory is
// written.
#pragma once

#include <cstdint>
#include <vector>

#include "partition/partition_job.hpp"
#include "partition/partition_report.hpp"
#include "src/comm/communicator.hpp"

namespace strata {

/// What each process measured (gathered on rank 0; the report's phases carry the maximum).
struct DistributedPartitionStats {
    std::vector<std::int64_t> slice_rows;      ///< P: rows of each process's slice
    std::vector<std::int64_t> slice_edges;     ///< P: stored edges of each slice
    std::vector<std::int64_t> bytes_read;      ///< P: array bytes each read from the file
    std::vector<std::int64_t> partition_peak;  ///< P: peak RSS at the end of the PT-Scotch phase
    std::vector<std::int64_t> peak;            ///< P: peak RSS at the end (the write included)
};

/// Checks the job as run_partition_job does and what the distributed path refuses (method other
/// than ptscotch, --chunks, a --balance other than one of vertices or edges), then, collectively
/// over `comm` (P processes): slice_offsets(path, P) (rows + edges), read_graph_slice without
/// vertex data, partition_ptscotch into job.num_parts parts (K may differ from P).
///
/// Then every process re-reads its slice with the vertex data, distribute_parts sends every row
/// to its part (part p built on process p % P) and write_partition_parallel writes the part
/// files in parallel and partition.json on rank 0: no process ever holds the whole graph (the
/// owners, 4 bytes per vertex, excepted). Phases (times and peak RSS: the maximum over
/// processes): "read slice", "ptscotch", "build", "write". Returns the report
/// (complete on rank 0); `stats` (if given) is filled on rank 0. Throws
/// strata::Error with a one-line message on bad input; nothing is left at out_dir.
PartitionReport run_distributed_partition_job(const PartitionJob& job, Communicator& comm,
                                              DistributedPartitionStats* stats = nullptr);

}  // namespace strata
