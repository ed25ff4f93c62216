// The loads of partition/distributed_load.hpp and partition/chunking.hpp for a whole graph that
// every rank already holds in memory (a front end's arrays, a test's graph) instead of a file:
// the same parts, the same chunks, no file read.
#pragma once

#include "datasets/graph_dataset.hpp"
#include "partition/chunking.hpp"
#include "partition/distributed_load.hpp"

namespace strata {

/// This rank's part of `graph` (the same graph on every rank of `comm`), split `split_index`
/// selected. One rank: the whole graph. K > 1 ranks: the owners from options.method (metis: on
/// rank 0, broadcast; random and block on every rank; ptscotch: on row slices of the graph, as
/// load_local_part does with a file), then distribute_parts. Collective. Throws strata::Error as
/// load_local_part does ("<what>: ...").
[[nodiscard]] LocalPart local_part_in_memory(const GraphView& graph, Communicator& comm,
                                             const InMemoryPartitionOptions& options,
                                             int split_index, const std::string& what);

/// load_chunked_part of a graph in memory: the whole graph on every rank, chunk_partition on
/// rank 0 (broadcast), rows reordered into chunks, split selected locally. Collective.
[[nodiscard]] ChunkedPart chunked_part_in_memory(const GraphView& graph, Communicator& comm,
                                                 const ChunkOptions& options, int split_index,
                                                 const std::string& what);

}  // namespace strata
