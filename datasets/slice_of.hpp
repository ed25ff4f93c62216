// slice_of: a GraphSlice cut from a whole GraphDataset in memory (the rows a slice reader
// returns from the file), for tests and for callers that already hold the whole graph.
#pragma once

#include <span>
#include <vector>

#include "datasets/graph_dataset.hpp"
#include "datasets/graph_slice.hpp"

namespace strata {

/// Row-balanced offsets of a P-way split of N vertices: offsets[r] = r N / P (P + 1 entries,
/// the same ranges as partition_block). Throws strata::Error unless P >= 1 and N >= 0.
[[nodiscard]] std::vector<global_id> row_balanced_offsets(global_id num_vertices, int num_ranks);

/// Slice `rank` of `graph`: rows [offsets[rank], offsets[rank + 1]) with their in-edges
/// (indptr rebased to 0), edge weights, features, labels and every split's masks (split-major
/// over the slice's rows), and the whole graph's sizes. Throws strata::Error if `offsets` is not
/// a non-decreasing split of [0, N] or `rank` is outside it.
[[nodiscard]] GraphSlice slice_of(const GraphDataset& graph, std::span<const global_id> offsets,
                                  int rank);

}  // namespace strata
