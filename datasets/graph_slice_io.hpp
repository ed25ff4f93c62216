// Per-rank reading of a graph dataset: the slice boundaries of a P-way split and the reader of
// one rank's rows of every array with HDF5 hyperslabs (never the whole file).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "datasets/graph_dataset.hpp"
#include "datasets/graph_slice.hpp"

namespace strata {

/// Balanced by rows: slice r is [r*N/P, (r+1)*N/P). P + 1 offsets from 0 to N (a slice may be
/// empty when P > N). Throws strata::Error unless P >= 1 and N >= 0.
[[nodiscard]] std::vector<global_id> slice_offsets(global_id num_vertices, int num_slices);

/// Balanced by rows + stored edges (the work and memory of a slice grow with both): boundary r is
/// the first vertex v with v + indptr[v] >= r * (N + E) / P, found by binary search over
/// /graph/indptr with single-element reads (O(P log N) reads of 8 bytes, never the whole array).
/// Every rank computes the same offsets from the same file. Throws as read_graph_slice does for a
/// file that is not a graph dataset, or unless P >= 1.
[[nodiscard]] std::vector<global_id> slice_offsets(const std::string& path, int num_slices);
/// The same offsets from an indptr in memory (a graph in memory is sliced as its file would be).
[[nodiscard]] std::vector<global_id> slice_offsets(std::span<const std::int64_t> indptr,
                                                   int num_slices);

/// Which of F contiguous column blocks of the features a reader keeps (the G x F grid's layout C,
/// docs/layouts.md): block `index` of `count`, the first width mod count one column wider.
/// {0, 1}: every column.
struct FeatureSlice {
    FeatureSlice() = default;
    FeatureSlice(int slice_index, int slice_count) : index(slice_index), count(slice_count) {}
    int index = 0;
    int count = 1;
};

/// The columns [first, first + count) of block `slice.index` of `width` columns; throws
/// strata::Error unless 0 <= index < count.
struct ColumnBlock {
    std::int64_t first = 0;
    std::int64_t count = 0;
};
[[nodiscard]] ColumnBlock column_block(std::int64_t width, FeatureSlice slice);

struct SliceReadOptions {
    /// false: only the adjacency (indptr, indices, edge_weight) and the sizes; features stay
    /// 0 x F, labels and masks empty (for a partitioner, which needs no vertex data).
    bool vertex_data = true;
    /// If set, receives the bytes of array data read from the file (H5File::bytes_read).
    std::int64_t* bytes_read = nullptr;
    /// The feature columns read (the slice's features are rows x column_block(F, ...).count).
    FeatureSlice features{};
};

/// Reads rows [vertex_offsets[rank], vertex_offsets[rank+1]) of every array of the graph file
/// `path` (format versions 1..3, docs/format.md) with hyperslabs: the indptr slice, the matching
/// range of indices and edge_weight, the feature rows, labels, and each split's mask entries.
/// Checks, with read_graph's messages ("g.h5: /graph/indices: vertex id 9 at index 12 out of
/// range [0, 5)"; indices, vertices and mask positions are those of the whole file): the format
/// and version, every dataset's shape against N, E, F and S, and every invariant that holds row
/// by row (indptr monotone, from 0 on slice 0 and ending at E on the last slice, ids in [0, N),
/// finite weights and features, labels in [-1, C), masks 0/1). Not checked: the content id (a hash
/// of the whole file; read_graph verifies it). Throws strata::Error unless vertex_offsets holds
/// P + 1 non-decreasing values from 0 to N and 0 <= rank < P.
[[nodiscard]] GraphSlice read_graph_slice(const std::string& path,
                                          const std::vector<global_id>& vertex_offsets, int rank,
                                          const SliceReadOptions& options = {});

/// The same slice cut from a graph already in memory (the in-memory path and tests): equal to
/// read_graph_slice of the file `graph` was read from. Throws as read_graph_slice does for bad
/// offsets or rank.
[[nodiscard]] GraphSlice slice_of(const GraphView& graph,
                                  const std::vector<global_id>& vertex_offsets, int rank);

}  // namespace strata
