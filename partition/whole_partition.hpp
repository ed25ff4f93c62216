// read_whole_partition: a partition directory put back together as the whole graph (every part
// file read), for --parallel pipeline, where every stage holds the whole graph.
#pragma once

#include <string>

#include "datasets/graph_dataset.hpp"
#include "partition/partition.hpp"

namespace strata {

struct WholePartition {
    /// The graph in original ids: indptr/indices/edge_weight are A (duplicates merged, as the
    /// part files store it), vertex data in original order, all splits.
    GraphDataset graph;
    GlobalCsr adjacency;  ///< the same A as a matrix (adjacency_matrix's form)
    Partition parts;      ///< the part of every original vertex
    /// The chunk of every original vertex, p * chunks_per_part + /owned/chunk (num_parts = 0
    /// when the partition has no chunk map).
    Partition chunks;
};

/// Reads partition.json and every part file of `dir` (read_part: each fully validated) and
/// assembles the whole graph. O(nnz + N F). Throws strata::Error naming the file on any
/// invalid input, or if the parts do not cover every vertex exactly once.
[[nodiscard]] WholePartition read_whole_partition(const std::string& dir);

}  // namespace strata
