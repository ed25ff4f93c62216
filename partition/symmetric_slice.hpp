// The symmetric, loop-free adjacency of a GraphSlice, built across ranks: what a distributed
// partitioner (PT-Scotch, ParMETIS) needs from a graph stored by destination, maybe directed.
#pragma once

#include <cstdint>
#include <vector>

#include "datasets/graph_slice.hpp"
#include "src/comm/communicator.hpp"

namespace strata {

/// Row i holds the neighbours (original global ids) of vertex slice.first() + i in the pattern of
/// A + Aᵀ: every u with an edge u -> v or v -> u stored anywhere, u != v, sorted, no duplicates.
struct SliceAdjacency {
    std::vector<std::int64_t> indptr{0};  ///< num_local + 1
    std::vector<std::int64_t> indices;    ///< indptr.back()
};

/// Collective over `comm` (P = comm.size() slices, this rank's is slice.rank == comm.rank()).
/// Each stored edge u -> v of this slice (v local) adds u to v's row here, and v to u's row on the
/// owner of u: the reverse edges travel in one Communicator::all_to_all (16 bytes per edge, any
/// count; point-to-point messages on an MpiCommunicator). Memory per rank: the slice, 16 bytes
/// per non-loop edge sent and received, then 8 bytes per row entry. Rows are sorted and
/// deduplicated in parallel (OpenMP). Throws strata::Error if the slice does not match the
/// communicator.
[[nodiscard]] SliceAdjacency symmetric_adjacency(const GraphSlice& slice, Communicator& comm);

}  // namespace strata
