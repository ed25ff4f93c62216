// GraphDataset: one whole graph in host memory, as stored in the HDF5 graph format
// (docs/format.md).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "datasets/graph_view.hpp"
#include "src/base/types.hpp"
#include "src/tensor/host_matrix.hpp"

namespace strata {

/// CSR by destination: the in-neighbours of v are indices[indptr[v] : indptr[v+1]].
/// An undirected graph stores both directions. Global ids are 64-bit.
/// The masks hold `num_splits` splits, split-major: vertex v is in split s's training set when
/// train_mask[s * N + v] == 1 (so with one split, train_mask[v]).
struct GraphDataset {
    std::string name;
    std::int64_t num_classes = 0;
    std::vector<std::int64_t> indptr{0};   ///< N+1
    std::vector<std::int64_t> indices;     ///< E, source vertex of each edge
    std::vector<float> edge_weight;        ///< empty (all 1) or E
    HostMatrix features;                   ///< N x F
    std::vector<std::int64_t> labels;      ///< N, class id or -1 (unlabeled)
    int num_splits = 1;                    ///< S >= 1
    std::vector<std::uint8_t> train_mask;  ///< S x N, 0/1
    std::vector<std::uint8_t> val_mask;    ///< S x N, 0/1
    std::vector<std::uint8_t> test_mask;   ///< S x N, 0/1

    [[nodiscard]] global_id num_vertices() const {
        return static_cast<global_id>(indptr.size()) - 1;
    }
    [[nodiscard]] std::int64_t num_edges() const {
        return static_cast<std::int64_t>(indices.size());
    }
    [[nodiscard]] index_t num_features() const { return features.cols; }

    /// This graph as a view (the read paths take GraphView; a GraphDataset converts to one).
    [[nodiscard]] GraphView view() const {
        return GraphView{
            .name = name,
            .num_classes = num_classes,
            .indptr = indptr,
            .indices = indices,
            .edge_weight = edge_weight,
            .features = {.rows = features.rows, .cols = features.cols, .values = features.values},
            .labels = labels,
            .num_splits = num_splits,
            .train_mask = train_mask,
            .val_mask = val_mask,
            .test_mask = test_mask};
    }
    operator GraphView() const { return view(); }  // NOLINT: implicit, so callers keep compiling

    /// Split s of a mask: its N entries (mask is train_mask, val_mask or test_mask).
    [[nodiscard]] std::span<const std::uint8_t> split_of(const std::vector<std::uint8_t>& mask,
                                                         int s) const {
        const auto n = static_cast<std::size_t>(num_vertices());
        return std::span<const std::uint8_t>(mask).subspan(static_cast<std::size_t>(s) * n, n);
    }
};

}  // namespace strata

namespace strata {

/// A whole-graph sparse matrix with 64-bit ids and explicit values (e.g. Â = D^-1/2 (A+I) D^-1/2):
/// row v holds the in-neighbours u of v with weight values[k] (rows = destinations).
struct GlobalCsr {
    std::vector<std::int64_t> indptr{0};
    std::vector<std::int64_t> indices;
    std::vector<float> values;

    [[nodiscard]] global_id num_rows() const { return static_cast<global_id>(indptr.size()) - 1; }
    [[nodiscard]] std::int64_t nnz() const { return static_cast<std::int64_t>(indices.size()); }
};

}  // namespace strata
