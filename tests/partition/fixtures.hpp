// Graphs for the partition tests: Cora (data/cora.h5, else converted from data/cora/*.txt),
// generated community graphs, a path and a second split; hand-written ones (edge_list_graph)
// come from tests/support/hand_graphs.hpp.
#pragma once

#include <filesystem>
#include <string>

#include "datasets/generate.hpp"
#include "datasets/graph_dataset.hpp"
#include "datasets/graph_io.hpp"
#include "datasets/text_convert.hpp"
#include "tests/support/hand_graphs.hpp"

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

/// Undirected path 0 - 1 - ... - (n-1), both directions stored.
inline GraphDataset path_graph(std::int64_t n) {
    std::vector<std::pair<std::int64_t, std::int64_t>> edges;
    for (std::int64_t v = 0; v + 1 < n; ++v) {
        edges.emplace_back(v, v + 1);
        edges.emplace_back(v + 1, v);
    }
    return edge_list_graph(n, edges);
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
