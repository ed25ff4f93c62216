// grid_placement: where each rank of a G x F grid sits, (g, f), given the node of every rank
// (docs/layouts.md, "Topology"): the ranks of each node, in rank order, fill feature groups of F
// (nodes in the order of their lowest rank), so that the all-to-all of a feature group stays inside
// a node and the graph groups {(., f)} run across nodes, whatever the launcher's rank mapping (by
// slot or round robin). On one node, and for F = 1, this is the consecutive map r = g F + f. A
// node whose ranks are not a multiple of F falls back to the consecutive map, with a warning
// saying why.
#pragma once

#include <span>
#include <string>
#include <vector>

namespace strata {

/// A rank's place in the grid: part g of the graph, feature slice f.
struct GridCoord {
    int g = 0;
    int f = 0;
    bool operator==(const GridCoord&) const = default;
};

struct GridPlacement {
    std::vector<GridCoord> of_rank;  ///< (g, f) of each rank
    /// Empty when the feature groups are inside nodes; else one line: why the consecutive map
    /// is used instead (a node's ranks are not a multiple of F).
    std::string warning;
};

/// `node_of_rank`: the node of each rank (Communicator::node_of), `slices`: F, dividing the
/// number of ranks. Throws strata::OptionError (feature_slices) when F does not divide it.
[[nodiscard]] GridPlacement place_grid(std::span<const int> node_of_rank, int slices);

}  // namespace strata
