// grid_placement: each node's ranks in order fill feature groups; else the consecutive map.
#include "layers/grid_placement.hpp"

#include <algorithm>
#include <map>

#include "src/base/error.hpp"

namespace strata {

GridPlacement place_grid(std::span<const int> node_of_rank, int slices) {
    const auto ranks = static_cast<int>(node_of_rank.size());
    STRATA_CHECK_OPTION(slices >= 1 && ranks % slices == 0, "feature_slices", slices,
                        "must divide the number of ranks (", ranks, ")");
    std::map<int, std::vector<int>> members;  // node -> its ranks, ascending
    for (int r = 0; r < ranks; ++r) {
        members[node_of_rank[static_cast<std::size_t>(r)]].push_back(r);
    }
    GridPlacement placement;
    placement.of_rank.resize(static_cast<std::size_t>(ranks));
    const auto use_consecutive = [&] {
        for (int r = 0; r < ranks; ++r) {
            placement.of_rank[static_cast<std::size_t>(r)] = {r / slices, r % slices};
        }
        return placement;
    };
    if (slices == 1) {  // 1D: part g on rank g, as without a grid
        return use_consecutive();
    }
    for (const auto& [node, on_node] : members) {
        if (on_node.size() % static_cast<std::size_t>(slices) != 0) {
            placement.warning = "feature_slices = " + std::to_string(slices) + ": node " +
                                std::to_string(node) + " has " + std::to_string(on_node.size()) +
                                " ranks, not a multiple of " + std::to_string(slices) +
                                ", so feature groups are consecutive ranks (some span nodes)";
            return use_consecutive();
        }
    }
    // Nodes numbered by their lowest rank (Communicator::node_of) come in rank order; any other
    // numbering still gives one node's ranks whole feature groups.
    std::vector<const std::vector<int>*> nodes;
    for (const auto& entry : members) {
        nodes.push_back(&entry.second);
    }
    std::sort(nodes.begin(), nodes.end(),
              [](const auto* a, const auto* b) { return a->front() < b->front(); });
    int next = 0;  // position in the node-major order
    for (const std::vector<int>* on_node : nodes) {
        for (const int r : *on_node) {
            placement.of_rank[static_cast<std::size_t>(r)] = {next / slices, next % slices};
            ++next;
        }
    }
    return placement;
}

}  // namespace strata
