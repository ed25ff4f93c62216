// Distributed refinement of a K-way partition on the fine graph, after PT-Scotch has split the
// contracted graph (partition/cluster_contraction.hpp): size-constrained label propagation with
// parts for labels, the moves of each round limited so that no part can exceed its bound.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "partition/ghost_graph.hpp"
#include "src/comm/communicator.hpp"

namespace strata {

struct RefineOptions {
    int num_parts = 2;
    double imbalance = 0.03;  ///< a part's weight stays <= (1 + imbalance) * total / K
    int max_rounds = 12;
};

/// Collective. Each round refreshes the ghosts' parts (one ghost exchange) and the parts'
/// weights (one all_reduce), then visits the local rows in order: a row moves to the part it
/// has strictly more neighbours in than its own, if that part's share of the room left under
/// the bound allows (room split evenly over the ranks, so that no part overflows whatever
/// the other ranks move). Even rounds move only to higher part numbers, odd rounds to lower:
/// two neighbours on different ranks never swap in one round. Stops after two rounds without
/// a move, or max_rounds. Deterministic. Returns the number of moves over all ranks.
std::int64_t refine_parts(const GhostGraph& g, std::span<const std::int64_t> vertex_weight,
                          std::vector<int>& part, const RefineOptions& options, Communicator& comm);

}  // namespace strata
