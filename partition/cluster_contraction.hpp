// Cluster contraction: the first coarsening level of the distributed partitioner, before
// PT-Scotch. Each slice groups its own rows into clusters by size-constrained label propagation
// (as ParHIP does), and the graph of clusters (vertex weight = members' weight, edge weight =
// arcs between two clusters) is what PT-Scotch partitions. On a graph whose edges barely merge
// under matching (PT-Scotch's and METIS's coarsening: random edges within and across classes),
// clusters of hundreds of vertices collapse most arcs at once, so PT-Scotch's levels are small
// (docs/scale.md, "Cluster contraction").
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "partition/ghost_graph.hpp"
#include "src/base/types.hpp"
#include "src/comm/communicator.hpp"

namespace strata {

/// Every local row's cluster, in [0, count), numbered by first member.
struct LocalClusters {
    std::vector<index_t> of;
    index_t count = 0;
};

/// Size-constrained label propagation over the rows' local neighbours (ghost columns ignored):
/// starting from singletons, `rounds` passes over the rows in a seeded order; each row joins the
/// cluster it has the most neighbours in, if that cluster's weight stays <= max_weight
/// (ties: the current cluster, then a seeded hash of the cluster). Deterministic. O(rounds * E).
[[nodiscard]] LocalClusters cluster_locally(const GhostGraph& g,
                                            std::span<const std::int64_t> vertex_weight,
                                            std::int64_t max_weight, int rounds,
                                            std::uint64_t seed);

/// The graph of every rank's clusters, distributed as the slices are: this rank holds rows
/// [offsets[rank], offsets[rank + 1]) of it (its own clusters, in order). Symmetric: the
/// weight of c -> d is the number of arcs between their members, loops dropped.
struct ContractedGraph {
    std::vector<global_id> offsets;           ///< P + 1
    std::vector<std::int64_t> indptr{0};      ///< local clusters + 1
    std::vector<std::int64_t> indices;        ///< global cluster ids, sorted per row
    std::vector<std::int64_t> edge_weight;    ///< one per entry
    std::vector<std::int64_t> vertex_weight;  ///< one per local cluster
};

/// Collective: contracts `g` by `clusters` (one all_reduce for the offsets, one ghost exchange
/// for the ghosts' clusters). Memory: 8 bytes per ghost and per local row, 8 per arc of the
/// largest cluster, plus the result.
[[nodiscard]] ContractedGraph contract_clusters(const GhostGraph& g, const LocalClusters& clusters,
                                                std::span<const std::int64_t> vertex_weight,
                                                Communicator& comm);

}  // namespace strata
