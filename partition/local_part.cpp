// build_local_part / attach_vertex_data: a rank's LocalGraph plus its rows of the vertex data.
#include "partition/local_part.hpp"

#include <algorithm>
#include <array>

#include "src/base/error.hpp"

namespace strata {
namespace {

std::int64_t count_ones(std::span<const std::uint8_t> mask) {
    return std::count_if(mask.begin(), mask.end(), [](std::uint8_t m) { return m != 0; });
}

}  // namespace

LocalPart attach_vertex_data(const GraphView& graph, LocalGraph graph_part, bool count_splits) {
    const global_id n = graph.num_vertices();
    const auto num = static_cast<std::size_t>(n);
    STRATA_CHECK(graph_part.num_global_vertices == n, "graph has ", n,
                 " vertices but the local graph was built for ", graph_part.num_global_vertices);
    const std::size_t masks = num * static_cast<std::size_t>(graph.num_splits);
    STRATA_CHECK(graph.features.rows == n && graph.labels.size() == num &&
                     graph.train_mask.size() == masks && graph.val_mask.size() == masks &&
                     graph.test_mask.size() == masks,
                 "graph: vertex data sizes disagree with ", n, " vertices (features ",
                 graph.features.rows, " rows, labels ", graph.labels.size(), ", masks ",
                 graph.train_mask.size(), "/", graph.val_mask.size(), "/", graph.test_mask.size(),
                 ")");
    LocalPart part;
    const index_t rows = graph_part.num_owned;
    const index_t cols = graph.features.cols;
    part.features = HostMatrix(rows, cols);
    part.labels.resize(static_cast<std::size_t>(rows));
    const auto splits = static_cast<std::size_t>(graph.num_splits);
    part.num_splits = graph.num_splits;
    part.train_mask.resize(splits * static_cast<std::size_t>(rows));
    part.val_mask.resize(splits * static_cast<std::size_t>(rows));
    part.test_mask.resize(splits * static_cast<std::size_t>(rows));
    for (index_t i = 0; i < rows; ++i) {
        const auto local = static_cast<std::size_t>(i);
        const global_id v = graph_part.owned_original[local];
        const auto global = static_cast<std::size_t>(v);
        std::copy_n(graph.features.row(v), cols, part.features.row(i));
        const std::int64_t label = graph.labels[global];
        STRATA_CHECK(label >= -1 && label < graph.num_classes, "graph: label ", label,
                     " of vertex ", v, " outside [-1, ", graph.num_classes, ")");
        part.labels[local] = static_cast<index_t>(label);
        for (std::size_t s = 0; s < splits; ++s) {
            const std::size_t at = s * static_cast<std::size_t>(rows) + local;
            part.train_mask[at] = graph.train_mask[s * num + global];
            part.val_mask[at] = graph.val_mask[s * num + global];
            part.test_mask[at] = graph.test_mask[s * num + global];
        }
    }
    part.num_classes = graph.num_classes;
    if (count_splits) {
        part.global_train = count_ones(graph.split_of(graph.train_mask, 0));
        part.global_val = count_ones(graph.split_of(graph.val_mask, 0));
        part.global_test = count_ones(graph.split_of(graph.test_mask, 0));
    }
    part.graph = std::move(graph_part);
    return part;
}

void check_split_index(int num_splits, int index, const std::string& what) {
    STRATA_CHECK(
        index >= 0 && index < num_splits, what, ": --split-index ", index,
        " out of range: the file has ", num_splits,
        num_splits == 1 ? " split (0)" : " splits (0.." + std::to_string(num_splits - 1) + ")");
}

void select_split_locally(LocalPart& part, int index, const std::string& what) {
    check_split_index(part.num_splits, index, what);
    part.split = index;
    part.global_train = count_ones(part.split_of(part.train_mask));
    part.global_val = count_ones(part.split_of(part.val_mask));
    part.global_test = count_ones(part.split_of(part.test_mask));
}

void select_split(LocalPart& part, int index, Communicator& comm, const std::string& what) {
    select_split_locally(part, index, what);
    std::array<std::int64_t, 3> counts{part.global_train, part.global_val, part.global_test};
    comm.allreduce_sum(counts);
    part.global_train = counts[0];
    part.global_val = counts[1];
    part.global_test = counts[2];
}

LocalPart build_local_part(const GraphView& graph, const GlobalCsr& adjacency,
                           const Partition& partition, int rank) {
    STRATA_CHECK(adjacency.num_rows() == graph.num_vertices(), "the adjacency has ",
                 adjacency.num_rows(), " rows but the graph has ", graph.num_vertices(),
                 " vertices");
    return attach_vertex_data(graph, build_local_graph(adjacency, partition, rank));
}

}  // namespace strata
