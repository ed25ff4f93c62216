// GraphSlice: one rank's contiguous range of a whole graph's vertices (original ids), as read
// from a graph .h5 with HDF5 hyperslabs, so that no rank holds the whole graph. The slice is the
// input of the distributed partitioner (partition/ptscotch_partitioner.hpp) and of the
// redistribution that builds each rank's LocalPart (partition/distribute_parts.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/base/types.hpp"
#include "src/tensor/host_matrix.hpp"

namespace strata {

/// Rows [first, first + num_local()) of the whole graph, by destination as in GraphDataset:
/// the in-neighbours of vertex first + i are indices[indptr[i] : indptr[i+1]] (original global
/// ids, as stored: duplicates and self loops kept). Vertex data for the same rows. Slice r of a
/// P-way split is [vertex_offsets[r], vertex_offsets[r+1]) (slice_offsets: balanced by rows).
struct GraphSlice {
    std::string name;
    global_id num_vertices = 0;  ///< N of the whole graph
    std::int64_t num_edges = 0;  ///< E of the whole graph
    std::int64_t num_classes = 0;
    std::vector<global_id> vertex_offsets;  ///< P + 1: every rank's slice
    int rank = 0;                           ///< this slice is vertex_offsets[rank..rank+1]
    std::vector<std::int64_t> indptr{0};    ///< num_local + 1, indptr[0] = 0
    std::vector<std::int64_t> indices;      ///< source (original) id of each edge
    std::vector<float> edge_weight;         ///< empty (all 1) or one per edge
    HostMatrix features;                    ///< num_local x F
    std::vector<std::int64_t> labels;       ///< num_local, class id or -1
    int num_splits = 1;                     ///< S >= 1
    std::vector<std::uint8_t> train_mask;   ///< S x num_local, split-major, 0/1
    std::vector<std::uint8_t> val_mask;
    std::vector<std::uint8_t> test_mask;

    [[nodiscard]] global_id first() const { return vertex_offsets[static_cast<std::size_t>(rank)]; }
    [[nodiscard]] global_id num_local() const { return static_cast<global_id>(indptr.size()) - 1; }
};

}  // namespace strata
