// Summary statistics of a graph dataset (`strata info`): sizes, degrees, labels, splits.
#pragma once

#include <cstdint>
#include <vector>

#include "datasets/graph_dataset.hpp"

namespace strata {

/// Vertices in the train, val and test sets of one split.
struct SplitSizes {
    std::int64_t train = 0;
    std::int64_t val = 0;
    std::int64_t test = 0;
};

struct GraphStats {
    std::int64_t num_vertices = 0;
    std::int64_t num_edges = 0;  ///< directed entries of the CSR
    index_t num_features = 0;
    std::int64_t num_classes = 0;
    bool weighted = false;
    /// In-degree (row length) summary; equal to the out-degree for a symmetric graph.
    std::int64_t degree_min = 0;
    std::int64_t degree_max = 0;
    double degree_median = 0.0;
    double degree_mean = 0.0;
    /// degree_histogram[0] counts degree 0; [k >= 1] counts degrees in [2^(k-1), 2^k).
    std::vector<std::int64_t> degree_histogram;
    std::int64_t isolated_vertices = 0;  ///< no in-edge and no out-edge
    std::int64_t self_loops = 0;
    std::int64_t duplicate_edges = 0;  ///< entries repeating an earlier (u, v) of the same row
    bool symmetric = false;            ///< every u -> v has a v -> u (structure only)
    std::vector<std::int64_t> label_counts;  ///< per class
    std::int64_t unlabeled = 0;              ///< label -1
    int num_splits = 1;
    std::vector<SplitSizes> split_sizes;  ///< per split
    std::int64_t num_train = 0;           ///< split 0's sizes
    std::int64_t num_val = 0;
    std::int64_t num_test = 0;
};

/// Computes the statistics of a validated graph. O(E log d) time, O(E) extra memory only when
/// some row is not sorted.
[[nodiscard]] GraphStats graph_stats(const GraphDataset& graph);

/// Lower bound of histogram bin k: 0, 1, 2, 4, 8, ...
[[nodiscard]] std::int64_t degree_bin_low(std::size_t k);

}  // namespace strata
