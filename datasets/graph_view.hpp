// GraphView: a whole graph in host memory that something else owns — a GraphDataset (view()),
// or a caller's arrays (the Python module's numpy arrays: no copy) — in the layout of the HDF5
// graph format (docs/format.md). Every path that reads a graph in memory (validation, content
// id, adjacency, slices, parts, partitioners, prepare) reads it through this type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "src/base/types.hpp"

namespace strata {

/// rows x cols float32, row-major, not owned.
struct FeaturesView {
    std::int64_t rows = 0;
    index_t cols = 0;
    std::span<const float> values;  ///< rows * cols

    [[nodiscard]] const float* row(std::int64_t r) const {
        return values.data() + static_cast<std::size_t>(r) * static_cast<std::size_t>(cols);
    }
};

/// The fields of GraphDataset (graph_dataset.hpp) as spans: CSR by destination, masks split-major
/// [S x N]. The memory must outlive the view and not change while it is read.
struct GraphView {
    std::string name;
    std::int64_t num_classes = 0;
    std::span<const std::int64_t> indptr;      ///< N+1
    std::span<const std::int64_t> indices;     ///< E
    std::span<const float> edge_weight;        ///< empty (all 1) or E
    FeaturesView features;                     ///< N x F
    std::span<const std::int64_t> labels;      ///< N
    int num_splits = 1;                        ///< S
    std::span<const std::uint8_t> train_mask;  ///< S x N
    std::span<const std::uint8_t> val_mask;    ///< S x N
    std::span<const std::uint8_t> test_mask;   ///< S x N

    [[nodiscard]] global_id num_vertices() const {
        return static_cast<global_id>(indptr.size()) - 1;
    }
    [[nodiscard]] std::int64_t num_edges() const {
        return static_cast<std::int64_t>(indices.size());
    }
    [[nodiscard]] index_t num_features() const { return features.cols; }

    /// Split s of a mask (train_mask, val_mask or test_mask): its N entries.
    [[nodiscard]] std::span<const std::uint8_t> split_of(std::span<const std::uint8_t> mask,
                                                         int s) const {
        const auto n = static_cast<std::size_t>(num_vertices());
        return mask.subspan(static_cast<std::size_t>(s) * n, n);
    }
};

}  // namespace strata
