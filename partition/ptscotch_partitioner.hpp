// Distributed k-way partitioning with PT-Scotch (SCOTCH_dgraphPart) of a graph read as one slice
// per rank (datasets/graph_slice_io.hpp): no rank holds the whole graph.
#pragma once

#include <cstdint>
#include <vector>

#include "datasets/graph_slice.hpp"
#include "src/comm/communicator.hpp"

namespace strata {

struct PtScotchOptions {
    std::uint64_t seed = 0;      ///< SCOTCH_contextRandomSeed; at most 2^63 - 1
    bool balance_edges = false;  ///< vertex weight 1 + stored in-degree (else every vertex 1)
    double imbalance = 0.03;     ///< allowed load imbalance of a part (as METIS's default 1.03)
    bool check_graph = false;    ///< SCOTCH_dgraphCheck before partitioning (O(E), for tests)
};

/// Collective over `comm` (an MpiCommunicator, one slice per rank: slice.rank == comm.rank()):
/// builds the symmetric, loop-free distributed graph (symmetric_adjacency), partitions it into
/// K = num_parts parts with SCOTCH_dgraphPart (SCOTCH_STRATDEFAULT mapping strategy for K parts
/// on comm.size() processes, `imbalance`), and returns the part in [0, K) of every slice row.
/// K may differ from the number of ranks. K = 1 returns zeros without calling PT-Scotch.
///
/// Determinism: PT-Scotch runs in a SCOTCH_Context with SCOTCH_OPTIONNUMDETERMINISTIC and a fixed
/// random seed (`seed`), so the same graph, slices, K, seed and number of processes give the same
/// parts call after call and run after run (tested); another number of processes gives another
/// (valid) partition. (SCOTCH_randomSeed + SCOTCH_randomReset alone did not: two calls in one
/// process differed.)
///
/// The libraries are Debian's scotch-int64 variant (SCOTCH_Num = int64_t, checked at build time
/// and against the linked library at run time). Throws strata::Error unless 1 <= K <= N, or if
/// PT-Scotch fails (its own message goes to stderr).
[[nodiscard]] std::vector<int> partition_ptscotch(const GraphSlice& slice, int num_parts,
                                                  const PtScotchOptions& options,
                                                  Communicator& comm);

}  // namespace strata
