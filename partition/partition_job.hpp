// run_partition_job: the whole `strata partition` pipeline (read, partition, adjacency, build,
// write) with phase timings, so that the app only parses arguments and prints the report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "partition/partition_report.hpp"

namespace strata {

struct PartitionJob {
    std::string data_path;         ///< graph dataset (.h5, docs/format.md)
    std::string out_dir;           ///< partition directory to create
    int num_parts = 0;             ///< K >= 1, K <= N
    std::string method = "metis";  ///< metis | random | block
    std::uint64_t seed = 0;
    std::vector<std::string> balance{"vertices", "edges", "train"};  ///< METIS constraints
    /// --distributed: clusters per part of the contraction before PT-Scotch (0: none;
    /// PtScotchOptions::clusters_per_part)
    int clusters_per_part = 500;
    int chunks = 0;         ///< C > 0: also a chunk map of C/K chunks per part (chunk_within_parts)
    bool force = false;     ///< replace an existing out_dir
    bool progress = false;  ///< progress lines on long phases
};

/// Parses a comma-separated balance list ("vertices,edges,train", any non-empty subset, no
/// repeats). Throws strata::Error naming the bad item.
[[nodiscard]] std::vector<std::string> parse_balance(const std::string& text);

/// Checks the job (K >= 1, known method and balance, output absent unless force, parent
/// writable, chunks a multiple of K) before any expensive work, reads and validates the dataset,
/// checks K <= N, runs the partitioner, chunk_within_parts (chunks > 0), adjacency_matrix, and
/// write_partition. Phases: read (incl. the source identity, source_identity()), the method's name,
/// for METIS "reread" (the dataset is released while METIS runs, whose memory is the peak, and read
/// again after it), adjacency, build, write. Throws strata::Error with a one-line message on any
/// bad input; nothing is left at out_dir.
PartitionReport run_partition_job(const PartitionJob& job);

}  // namespace strata
