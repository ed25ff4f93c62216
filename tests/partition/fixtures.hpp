// Graphs for the partition tests: Cora (data/cora.h5, else converted from data/cora/*.txt),
// generated community graphs, and tiny hand-written ones.
#pragma once

#include <filesystem>
#include <string>

#include "datasets/generate.hpp"
#include "datasets/graph_dataset.hpp"
#include "datasets/graph_io.hpp"
#include "datasets/text_convert.hpp"

namespace strata::test {

inline std::string data_dir() {
    return STRATA_DATA_DIR;
}

/// Cora from the repository (never /work/shared): the .h5 if committed, else the text files.
inline const GraphDataset& cora() {
    static const GraphDataset graph = [] {
        const std::string h5 = data_dir() + "/cora.h5";
        if (std::filesystem::exists(h5)) {
            return read_graph(h5);
        }
        return convert_text(data_dir() + "/cora", TextConvertOptions{.name = "cora"});
    }();
    return graph;
}

/// A symmetric power-law community graph (datasets/generate.hpp) with shuffled ids,
/// deterministic in `seed`: `classes` communities, a fraction `homophily` of edges inside one.
inline GraphDataset generated(std::int64_t n, double degree, std::uint64_t seed,
                              std::int64_t classes = 5, double homophily = 0.8) {
    GenerateOptions options;
    options.num_vertices = n;
    options.avg_degree = degree;
    options.num_features = 8;
    options.num_classes = classes;
    options.homophily = homophily;
    options.seed = seed;
    options.shuffle = true;
    return generate_graph(options);
}

/// A dataset around a hand-written edge list (u -> v stored in v's row), F = 2, 2 classes.
inline GraphDataset tiny_graph(std::int64_t n,
                               const std::vector<std::pair<std::int64_t, std::int64_t>>& edges) {
    GraphDataset g;
    g.name = "tiny";
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

/// Undirected path 0 - 1 - ... - (n-1), both directions stored.
inline GraphDataset path_graph(std::int64_t n) {
    std::vector<std::pair<std::int64_t, std::int64_t>> edges;
    for (std::int64_t v = 0; v + 1 < n; ++v) {
        edges.emplace_back(v, v + 1);
        edges.emplace_back(v + 1, v);
    }
    return tiny_graph(n, edges);
}

/// A second split (a different pattern than the first), so that masks are checked split-major.
inline void add_second_split(GraphDataset& graph) {
    const auto n = static_cast<std::size_t>(graph.num_vertices());
    for (std::size_t v = 0; v < n; ++v) {
        graph.train_mask.push_back(v % 4 == 0 ? 1 : 0);
        graph.val_mask.push_back(v % 4 == 1 ? 1 : 0);
        graph.test_mask.push_back(v % 4 >= 2 ? 1 : 0);
    }
    graph.num_splits = 2;
}

}  // namespace strata::test
