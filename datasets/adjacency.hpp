// The stored adjacency A as a matrix: what partitions carry and every graph operator is built
// from (partition/local_normalize.hpp), with duplicates merged and rows sorted.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "datasets/graph_dataset.hpp"

namespace strata {

/// A, N x N, rows = destinations like the dataset's CSR: A_vu = the stored weight of edge
/// u -> v (1 when the dataset has no edge_weight). Duplicate edges are summed (in double, then
/// rounded to float once); a stored self loop stays as an entry, and no diagonal is added.
/// Columns of each row are sorted ascending and unique. O(nnz log deg).
[[nodiscard]] GlobalCsr adjacency_matrix(const GraphView& graph);

/// Sorts every row of a CSR pattern (indptr, indices) ascending, drops repeated ids, and compacts
/// the rows leftwards in place (OpenMP over rows). indices keeps its capacity (no second copy).
void sort_unique_rows(std::vector<std::int64_t>& indptr, std::vector<std::int64_t>& indices);
/// The same merge on any rows stored like the dataset's CSR (row i: in-neighbours
/// indices[indptr[i] : indptr[i+1]], weights edge_weight or all 1), e.g. one rank's GraphSlice:
/// a (indptr.size() - 1)-row matrix whose columns keep the stored (global) ids.
/// adjacency_matrix(g) == merged_rows(g.indptr, g.indices, g.edge_weight), bit for bit.
[[nodiscard]] GlobalCsr merged_rows(std::span<const std::int64_t> indptr,
                                    std::span<const std::int64_t> indices,
                                    std::span<const float> edge_weight);

}  // namespace strata
