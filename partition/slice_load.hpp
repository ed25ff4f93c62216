// local_part_of_slices: every rank's LocalPart from per-rank GraphSlices a front end holds in
// memory (Python's strata.GraphSlice): each rank gives only its own consecutive rows, and the
// ranks build their parts as from the slices of a graph .h5 (distributed_load.hpp), without any
// rank holding the whole graph.
#pragma once

#include <string>

#include "datasets/graph_slice.hpp"
#include "partition/distributed_load.hpp"
#include "partition/local_part.hpp"
#include "src/comm/communicator.hpp"

namespace strata {

/// Collective over `comm` (P ranks). On entry `slice` is this rank's rows: vertex_offsets holds
/// its range {first, first + rows} (or every rank's, as a previous call over `comm` left them);
/// num_vertices is N of the whole graph, num_classes and num_splits the same on every rank. The
/// ranges must follow one another in rank order from 0 to N. The slices are checked (every rank
/// agrees before any work: a bad slice on one rank fails every rank, each naming the first rank at
/// fault), vertex_offsets, rank and num_edges are set to the whole graph's, the owners come from
/// options.method (block, random or ptscotch; metis, which needs the whole graph on one rank, is
/// refused; ignored with one rank) and distribute_parts builds the parts (the slice is kept); split
/// `split_index` is selected. With the offsets of slice_offsets(path, P), the part equals
/// load_local_part's of the .h5 holding the same graph. `what` names the input in messages. Throws
/// strata::Error.
[[nodiscard]] LocalPart local_part_of_slices(GraphSlice& slice, Communicator& comm,
                                             const InMemoryPartitionOptions& options,
                                             int split_index, const std::string& what);

/// The checks of one rank's slice alone (sizes, ids in [0, N), labels in [-1, C), 0/1 masks).
void check_slice(const GraphSlice& slice, const std::string& what);

}  // namespace strata
