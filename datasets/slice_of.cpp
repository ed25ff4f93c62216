// slice_of: copies of the slice's ranges of every array of the dataset.
#include "datasets/slice_of.hpp"

#include <algorithm>
#include <cstddef>
#include <utility>

#include "src/base/error.hpp"

namespace strata {

std::vector<global_id> row_balanced_offsets(global_id num_vertices, int num_ranks) {
    STRATA_CHECK(num_ranks >= 1 && num_vertices >= 0, "row_balanced_offsets: ", num_vertices,
                 " vertices over ", num_ranks, " ranks");
    std::vector<global_id> offsets(static_cast<std::size_t>(num_ranks) + 1);
    for (int r = 0; r <= num_ranks; ++r) {
        offsets[static_cast<std::size_t>(r)] = num_vertices * r / num_ranks;
    }
    return offsets;
}

GraphSlice slice_of(const GraphDataset& graph, std::span<const global_id> offsets, int rank) {
    const global_id n = graph.num_vertices();
    STRATA_CHECK(offsets.size() >= 2 && offsets.front() == 0 && offsets.back() == n &&
                     std::is_sorted(offsets.begin(), offsets.end()),
                 "slice_of: offsets are not a split of [0, ", n, "]");
    STRATA_CHECK(rank >= 0 && static_cast<std::size_t>(rank) + 1 < offsets.size(),
                 "slice_of: rank ", rank, " outside [0, ", offsets.size() - 1, ")");
    GraphSlice s;
    s.name = graph.name;
    s.num_vertices = n;
    s.num_edges = graph.num_edges();
    s.num_classes = graph.num_classes;
    s.vertex_offsets.assign(offsets.begin(), offsets.end());
    s.rank = rank;
    const auto first = static_cast<std::size_t>(offsets[static_cast<std::size_t>(rank)]);
    const auto last = static_cast<std::size_t>(offsets[static_cast<std::size_t>(rank) + 1]);
    const auto e0 = graph.indptr[first];
    const auto e1 = graph.indptr[last];
    s.indptr.clear();
    for (std::size_t v = first; v <= last; ++v) {
        s.indptr.push_back(graph.indptr[v] - e0);
    }
    s.indices.assign(graph.indices.begin() + e0, graph.indices.begin() + e1);
    if (!graph.edge_weight.empty()) {
        s.edge_weight.assign(graph.edge_weight.begin() + e0, graph.edge_weight.begin() + e1);
    }
    const auto f = static_cast<std::size_t>(graph.features.cols);
    s.features = HostMatrix(static_cast<std::int64_t>(last - first), graph.features.cols);
    std::copy(graph.features.values.begin() + static_cast<std::ptrdiff_t>(first * f),
              graph.features.values.begin() + static_cast<std::ptrdiff_t>(last * f),
              s.features.values.begin());
    s.labels.assign(graph.labels.begin() + static_cast<std::ptrdiff_t>(first),
                    graph.labels.begin() + static_cast<std::ptrdiff_t>(last));
    s.num_splits = graph.num_splits;
    for (auto [from, to] :
         {std::pair{&graph.train_mask, &s.train_mask}, std::pair{&graph.val_mask, &s.val_mask},
          std::pair{&graph.test_mask, &s.test_mask}}) {
        for (int split = 0; split < graph.num_splits; ++split) {
            const std::span<const std::uint8_t> all = graph.split_of(*from, split);
            to->insert(to->end(), all.begin() + static_cast<std::ptrdiff_t>(first),
                       all.begin() + static_cast<std::ptrdiff_t>(last));
        }
    }
    return s;
}

}  // namespace strata
