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
/// Writing (TEMPORARY, until partition/distribute_parts lands): rank 0 gathers the N owners
/// (4 bytes each), reads the whole graph and writes the directory with write_partition, as the
/// serial job does; the other ranks wait. So the PT-Scotch phase holds no whole graph, but the
/// write phase does on rank 0. Phases (times and peak RSS: the maximum over processes): "read
/// slice", "ptscotch", then on rank 0 "reread", "adjacency", "build", "write". Returns the report
/// on rank 0 (an empty report elsewhere); `stats` (if given) is filled on rank 0. Throws
/// strata::Error with a one-line message on bad input; nothing is left at out_dir.
PartitionReport run_distributed_partition_job(const PartitionJob& job, Communicator& comm,
                                              DistributedPartitionStats* stats = nullptr);

}  // namespace strata
