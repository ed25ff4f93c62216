// Distributed k-way partitioning with PT-Scotch (SCOTCH_dgraphPart) of a graph read as one slice
// per rank (datasets/graph_slice_io.hpp), contracted by clusters first and refined after:
// no rank holds the whole graph.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "datasets/graph_slice.hpp"
#include "src/comm/communicator.hpp"

namespace strata {

struct PtScotchOptions {
    std::uint64_t seed = 0;      ///< SCOTCH_contextRandomSeed; at most 2^63 - 1
    bool balance_edges = false;  ///< vertex weight 1 + stored in-degree (else every vertex 1)
    double imbalance = 0.03;     ///< allowed load imbalance of a part (as METIS's default 1.03)
    bool check_graph = false;    ///< SCOTCH_dgraphCheck before partitioning (O(E), for tests)
    /// Clusters of at most total weight / (K * clusters_per_part) contract the graph before
    /// PT-Scotch (partition/cluster_contraction.hpp) when that bound exceeds the heaviest vertex;
    /// 0: PT-Scotch on the whole graph.
    int clusters_per_part = 500;
    int cluster_rounds = 5;  ///< label propagation passes of the clustering
    int refine_rounds = 12;  ///< at most, of the refinement on the fine graph (0: none)
};

/// The mapping strategy partition_ptscotch gives SCOTCH_stratDgraphMap for P = `processes`:
/// SCOTCH_stratDgraphMapBuild's default (Scotch 7.0, SCOTCH_STRATDEFAULT: recursive
/// bipartitioning, each bipartition parallel multilevel with band refinement) with two changes:
/// - the parallel coarsening runs down to 1000 P vertices (where PT-Scotch folds the graph onto
///   single processes and goes on sequentially), not max(2000 P, 10000). On a generated
///   300k-vertex graph (avg. degree 50, P = 2, K = 2) that lowered the peak per process by 8%,
///   the cut by 6.5% (to within 0.3% of serial METIS's) and the time by 1.8-2.6x: the default
///   stops at 10000 vertices, where a graph whose edges barely shrink while coarsening is dense,
///   and gathers it on every process for a sequential multilevel run;
/// - on uncoarsening levels with over 500 arcs per vertex the band graph is refined by parallel
///   diffusion alone, not gathered on every process for a sequential Fiduccia-Mattheyses pass:
///   there the band is the whole (dense) level, gathered while every finer level is still held.
///   On a generated 600k-vertex graph (P = 2, K = 2) that lowered the peak per process by 3.5%,
///   same cut, for about 25% more time in PT-Scotch (noisy medians; docs/scale.md).
[[nodiscard]] std::string ptscotch_strategy(int processes, double imbalance);

/// Collective over `comm` (an MpiCommunicator, one slice per rank: slice.rank == comm.rank()):
/// builds the symmetric, loop-free distributed graph (symmetric_adjacency), partitions it into
/// K = num_parts parts and returns the part in [0, K) of every slice row. K may differ from the
/// number of ranks. K = 1 returns zeros without calling PT-Scotch. The partitioning: clusters
/// of each rank's rows contract the graph (cluster_contraction.hpp; skipped when
/// clusters_per_part is 0 or the bound is not above the heaviest vertex), SCOTCH_dgraphPart
/// (ptscotch_strategy(comm.size(), imbalance)) splits the contracted graph (or the whole one),
/// and label propagation refines the parts on the whole graph (label_refinement.hpp).
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

/// The same, freeing the slice's stored edges (indices, edge_weight) as soon as the symmetric
/// graph is built, before PT-Scotch runs: `slice` keeps its sizes, offsets, rank and indptr (its
/// rows), the rest of it is empty. For a caller that needs the edges no more
/// (`partition --distributed`): the slice and PT-Scotch's graph are never held together.
[[nodiscard]] std::vector<int> partition_ptscotch(GraphSlice&& slice, int num_parts,
                                                  const PtScotchOptions& options,
                                                  Communicator& comm);

}  // namespace strata
