// build_local_part / attach_vertex_data: a rank's LocalGraph plus its rows of the vertex data.
#include "partition/local_part.hpp"

#include <algorithm>

#include "src/base/error.hpp"

namespace strata {
namespace {

std::int64_t count_ones(const std::vector<std::uint8_t>& mask) {
    return std::count_if(mask.begin(), mask.end(), [](std::uint8_t m) { return m != 0; });
}

}  // namespace

LocalPart attach_vertex_data(const GraphDataset& graph, LocalGraph graph_part, bool count_splits) {
    const global_id n = graph.num_vertices();
    const auto num = static_cast<std::size_t>(n);
    STRATA_CHECK(graph_part.num_global_vertices == n, "graph has ", n,
                 " vertices but the local graph was built for ", graph_part.num_global_vertices);
    STRATA_CHECK(
        graph.features.rows == n && graph.labels.size() == num && graph.train_mask.size() == num &&
            graph.val_mask.size() == num && graph.test_mask.size() == num,
        "graph: vertex data sizes disagree with ", n, " vertices (features ", graph.features.rows,
        " rows, labels ", graph.labels.size(), ", masks ", graph.train_mask.size(), "/",
        graph.val_mask.size(), "/", graph.test_mask.size(), ")");
    LocalPart part;
    const index_t rows = graph_part.num_owned;
    const index_t cols = graph.features.cols;
    part.features = HostMatrix(rows, cols);
    part.labels.resize(static_cast<std::size_t>(rows));
    part.train_mask.resize(static_cast<std::size_t>(rows));
    part.val_mask.resize(static_cast<std::size_t>(rows));
    part.test_mask.resize(static_cast<std::size_t>(rows));
    for (index_t i = 0; i < rows; ++i) {
        const auto local = static_cast<std::size_t>(i);
        const global_id v = graph_part.owned_original[local];
        const auto global = static_cast<std::size_t>(v);
        std::copy_n(graph.features.row(static_cast<index_t>(v)), cols, part.features.row(i));
        const std::int64_t label = graph.labels[global];
        STRATA_CHECK(label >= -1 && label < graph.num_classes, "graph: label ", label,
                     " of vertex ", v, " outside [-1, ", graph.num_classes, ")");
        part.labels[local] = static_cast<index_t>(label);
        part.train_mask[local] = graph.train_mask[global];
        part.val_mask[local] = graph.val_mask[global];
        part.test_mask[local] = graph.test_mask[global];
    }
    part.num_classes = graph.num_classes;
    if (count_splits) {
        part.global_train = count_ones(graph.train_mask);
        part.global_val = count_ones(graph.val_mask);
        part.global_test = count_ones(graph.test_mask);
    }
    part.graph = std::move(graph_part);
    return part;
}

LocalPart build_local_part(const GraphDataset& graph, const GlobalCsr& adjacency,
                           const Partition& partition, int rank) {
    STRATA_CHECK(adjacency.num_rows() == graph.num_vertices(), "the adjacency has ",
                 adjacency.num_rows(), " rows but the graph has ", graph.num_vertices(),
                 " vertices");
    return attach_vertex_data(graph, build_local_graph(adjacency, partition, rank));
}

}  // namespace strata
