// EdgeList: edges as read by the converters (source, destination, optional weight), and the CSR
// by destination they become in a GraphDataset.
#pragma once

#include <cstdint>
#include <vector>

#include "datasets/graph_dataset.hpp"

namespace strata {

struct EdgeList {
    std::vector<std::int64_t> src;
    std::vector<std::int64_t> dst;
    std::vector<float> weight;  ///< empty = all 1
};

/// g.indptr/indices/edge_weight = the CSR by destination of `edges` over n vertices; within a
/// row, sources ascending, the first listed of duplicate (src, dst) pairs kept. Ids must be in
/// [0, n). Returns the number of duplicates dropped. O(E log d).
std::int64_t edges_to_csr(const EdgeList& edges, std::int64_t n, GraphDataset& g);

}  // namespace strata
