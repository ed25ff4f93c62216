// The stored adjacency A as a matrix: what partitions carry and every graph operator is built
// from (partition/local_normalize.hpp), with duplicates merged and rows sorted.
#pragma once

#include "datasets/graph_dataset.hpp"

namespace strata {

/// A, N x N, rows = destinations like the dataset's CSR: A_vu = the stored weight of edge
/// u -> v (1 when the dataset has no edge_weight). Duplicate edges are summed (in double, then
/// rounded to float once); a stored self loop stays as an entry, and no diagonal is added.
/// Columns of each row are sorted ascending and unique. O(nnz log deg).
[[nodiscard]] GlobalCsr adjacency_matrix(const GraphDataset& graph);

}  // namespace strata
