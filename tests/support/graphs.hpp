// Small deterministic graphs for tests: a community graph with learnable labels, symmetric or
// directed. Use the directed one wherever a transpose matters: on a symmetric graph Âᵀ = Â, so
// a swapped transpose passes every test.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "datasets/graph_dataset.hpp"

namespace strata::test {

/// `n` vertices in `classes` contiguous-by-modulo communities, about `degree` undirected edges
/// per vertex (80% inside the community), features = one-hot-ish class signal + noise,
/// masks: 30% train, 30% val, 40% test. Symmetric, no self loops. Deterministic in `seed`.
inline GraphDataset community_graph(std::int64_t n, int classes, int degree, index_t features,
                                    std::uint64_t seed, bool directed = false) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::int64_t> any(0, n - 1);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::normal_distribution<float> noise(0.0f, 1.0f);
    std::vector<std::set<std::int64_t>> adj(static_cast<std::size_t>(n));
    for (std::int64_t v = 0; v < n; ++v) {
        for (int k = 0; k < degree; ++k) {
            std::int64_t u = any(rng);
            if (unit(rng) < 0.8) {  // same community: same v % classes
                u = (u / classes) * classes + v % classes;
                if (u >= n) {
                    u -= classes;
                }
            }
            if (u != v && u >= 0) {
                adj[static_cast<std::size_t>(v)].insert(u);  // u -> v: u is an in-neighbour of v
                if (!directed) {
                    adj[static_cast<std::size_t>(u)].insert(v);
                }
            }
        }
    }
    GraphDataset g;
    g.name = directed ? "directed community" : "community";
    g.num_classes = classes;
    g.indptr.assign(1, 0);
    for (const auto& neighbours : adj) {
        g.indices.insert(g.indices.end(), neighbours.begin(), neighbours.end());
        g.indptr.push_back(static_cast<std::int64_t>(g.indices.size()));
    }
    g.features = HostMatrix(static_cast<index_t>(n), features);
    g.labels.resize(static_cast<std::size_t>(n));
    g.train_mask.assign(static_cast<std::size_t>(n), 0);
    g.val_mask.assign(static_cast<std::size_t>(n), 0);
    g.test_mask.assign(static_cast<std::size_t>(n), 0);
    for (std::int64_t v = 0; v < n; ++v) {
        const auto i = static_cast<std::size_t>(v);
        const int label = static_cast<int>(v % classes);
        g.labels[i] = label;
        for (index_t f = 0; f < features; ++f) {
            const float signal = (f % classes == label) ? 1.0f : 0.0f;
            g.features.at(static_cast<index_t>(v), f) = signal + 1.5f * noise(rng);
        }
        const double r = unit(rng);
        (r < 0.3 ? g.train_mask : r < 0.6 ? g.val_mask : g.test_mask)[i] = 1;
    }
    return g;
}

/// The shared directed fixture: `n` vertices, each with about `degree` in-edges and no mirror
/// edge for most of them (so Âᵀ != Â), otherwise like community_graph.
inline GraphDataset directed_graph(std::int64_t n, int classes, int degree, index_t features,
                                   std::uint64_t seed) {
    return community_graph(n, classes, degree, features, seed, /*directed=*/true);
}

/// directed_graph with what a raw adjacency must keep apart from Â: edge weights (`dyadic`:
/// drawn from {0.25, 0.5, 1, 1.5, 2, 3}, so that every sum is exact in float; otherwise
/// arbitrary floats in [0.1, 2)), a stored self loop on every 7th vertex, a duplicate of the
/// first in-edge of every 5th vertex (appended, so the row is unsorted), and no in-edge at all
/// on every 11th vertex. Deterministic in `seed`.
inline GraphDataset weighted_directed_graph(std::int64_t n, std::uint64_t seed, bool dyadic) {
    GraphDataset g = directed_graph(n, 4, 4, 6, seed);
    std::mt19937_64 rng(seed + 1);
    const float dyadic_weights[] = {0.25f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f};
    std::uniform_int_distribution<int> pick(0, 5);
    std::uniform_real_distribution<float> arbitrary(0.1f, 2.0f);
    auto weight = [&] { return dyadic ? dyadic_weights[pick(rng)] : arbitrary(rng); };
    std::vector<std::int64_t> indptr{0};
    std::vector<std::int64_t> indices;
    std::vector<float> weights;
    for (std::int64_t v = 0; v < n; ++v) {
        const auto begin = g.indptr[static_cast<std::size_t>(v)];
        const auto end = g.indptr[static_cast<std::size_t>(v) + 1];
        if (v % 11 != 0) {
            for (auto k = begin; k < end; ++k) {
                indices.push_back(g.indices[static_cast<std::size_t>(k)]);
                weights.push_back(weight());
            }
            if (v % 7 == 0) {
                indices.push_back(v);
                weights.push_back(weight());
            }
            if (v % 5 == 0 && end > begin) {
                indices.push_back(g.indices[static_cast<std::size_t>(begin)]);
                weights.push_back(weight());
            }
        }
        indptr.push_back(static_cast<std::int64_t>(indices.size()));
    }
    g.name = "weighted directed community";
    g.indptr = std::move(indptr);
    g.indices = std::move(indices);
    g.edge_weight = std::move(weights);
    return g;
}

}  // namespace strata::test
