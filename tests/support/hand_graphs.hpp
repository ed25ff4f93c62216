// Hand-written graphs for tests, small enough to check by eye: tiny_graph (4 vertices, weighted,
// every dataset part filled in) and edge_list_graph (any edge list, unweighted). Generated graphs
// are in graphs.hpp.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "datasets/graph_dataset.hpp"

namespace strata::test {

/// 4 vertices, edges (u -> v): 1->0, 2->0, 0->1, 3->2, 2->3 with weights 0.5, 1, 2, 1.5, 3;
/// features 4 x 3 = 0..11 / 4; labels {0, 1, -1, 2}; train {0}, val {1}, test {2, 3}.
inline GraphDataset tiny_graph(bool weighted = true) {
    GraphDataset g;
    g.name = "tiny";
    g.num_classes = 3;
    g.indptr = {0, 2, 3, 4, 5};
    g.indices = {1, 2, 0, 3, 2};
    if (weighted) {
        g.edge_weight = {0.5f, 1.0f, 2.0f, 1.5f, 3.0f};
    }
    g.features = HostMatrix(4, 3);
    for (std::size_t i = 0; i < g.features.values.size(); ++i) {
        g.features.values[i] = static_cast<float>(i) / 4.0f;
    }
    g.labels = {0, 1, -1, 2};
    g.train_mask = {1, 0, 0, 0};
    g.val_mask = {0, 1, 0, 0};
    g.test_mask = {0, 0, 1, 1};
    return g;
}

/// A dataset around a hand-written edge list of `n` vertices (u -> v stored in v's row, in list
/// order; duplicates kept), F = 2 (vertex v: v, -2v), 2 classes: labels v % 2, except -1 where
/// v % 3 == 2; train where v % 3 == 0, val where 1, test where 2.
inline GraphDataset edge_list_graph(
    std::int64_t n, const std::vector<std::pair<std::int64_t, std::int64_t>>& edges) {
    GraphDataset g;
    g.name = "edge list";
    g.num_classes = 2;
    g.indptr.assign(static_cast<std::size_t>(n) + 1, 0);
    for (const auto& e : edges) {
        ++g.indptr[static_cast<std::size_t>(e.second) + 1];
    }
    for (std::size_t v = 0; v < static_cast<std::size_t>(n); ++v) {
        g.indptr[v + 1] += g.indptr[v];
    }
    g.indices.resize(edges.size());
    std::vector<std::int64_t> next(g.indptr.begin(), g.indptr.end() - 1);
    for (const auto& e : edges) {
        g.indices[static_cast<std::size_t>(next[static_cast<std::size_t>(e.second)]++)] = e.first;
    }
    g.features = HostMatrix(static_cast<index_t>(n), 2);
    for (index_t v = 0; v < static_cast<index_t>(n); ++v) {
        g.features.at(v, 0) = static_cast<float>(v);
        g.features.at(v, 1) = static_cast<float>(-2 * v);
    }
    g.labels.resize(static_cast<std::size_t>(n));
    g.train_mask.assign(static_cast<std::size_t>(n), 0);
    g.val_mask.assign(static_cast<std::size_t>(n), 0);
    g.test_mask.assign(static_cast<std::size_t>(n), 0);
    for (std::size_t v = 0; v < static_cast<std::size_t>(n); ++v) {
        g.labels[v] = v % 3 == 2 ? -1 : static_cast<std::int64_t>(v % 2);
        (v % 3 == 0 ? g.train_mask : v % 3 == 1 ? g.val_mask : g.test_mask)[v] = 1;
    }
    return g;
}

}  // namespace strata::test
