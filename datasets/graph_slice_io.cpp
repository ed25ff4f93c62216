// read_graph_slice: one rank's rows of a graph file through H5File::read_block (hyperslabs), with
// read_graph's checks applied row by row; slice_offsets by rows or by rows + edges.
#include "datasets/graph_slice_io.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "datasets/graph_layout.hpp"
#include "datasets/h5_file.hpp"
#include "src/base/error.hpp"

namespace strata {
namespace {

using graph_layout::features_path;
using graph_layout::indices_path;
using graph_layout::indptr_path;
using graph_layout::labels_path;
using graph_layout::mask_paths;
using graph_layout::weight_path;

/// The first dimension of a dataset, checking its rank.
std::int64_t length_of(const H5File& file, const char* dataset, std::size_t rank) {
    const H5Shape shape = file.shape(dataset);
    STRATA_CHECK(shape.size() == rank, file.path(), ": ", dataset, ": expected rank ", rank,
                 ", found rank ", shape.size());
    return shape[0];
}

void check_length(const H5File& file, const char* dataset, std::int64_t size, std::int64_t expected,
                  const char* meaning) {
    STRATA_CHECK(size == expected, file.path(), ": ", dataset, ": has ", size,
                 " elements, expected ", expected, " (", meaning, ")");
}

std::int64_t indptr_at(const H5File& file, global_id v) {
    return file.read_block<std::int64_t>(indptr_path, {v}, {1})[0];
}

std::vector<std::uint8_t>* mask_of(GraphSlice& s, int i) {
    return i == 0 ? &s.train_mask : (i == 1 ? &s.val_mask : &s.test_mask);
}

/// The adjacency of the slice: indptr rebased to 0, indices and weights of its edge range.
void read_adjacency(const H5File& file, GraphSlice& s, std::int64_t num_edges) {
    const std::string& path = file.path();
    const global_id first = s.first();
    const global_id n_local = s.vertex_offsets[static_cast<std::size_t>(s.rank) + 1] - first;
    std::vector<std::int64_t> ptr =
        file.read_block<std::int64_t>(indptr_path, {first}, {n_local + 1});
    if (first == 0) {
        STRATA_CHECK(ptr[0] == 0, path, ": ", indptr_path, ": must start at 0, found ", ptr[0]);
    }
    for (std::size_t i = 1; i < ptr.size(); ++i) {
        STRATA_CHECK(ptr[i] >= ptr[i - 1], path, ": ", indptr_path, ": not monotone at index ",
                     first + static_cast<global_id>(i), " (", ptr[i - 1], " > ", ptr[i], ")");
    }
    if (first + n_local == s.num_vertices) {
        STRATA_CHECK(ptr.back() == num_edges, path, ": ", indptr_path, ": ends at ", ptr.back(),
                     ", expected E = ", num_edges, " (the length of ", indices_path, ")");
    }
    const std::int64_t e0 = ptr.front();
    const std::int64_t e1 = ptr.back();
    STRATA_CHECK(e0 >= 0 && e1 <= num_edges, path, ": ", indptr_path, ": entries [", e0, ", ", e1,
                 "] at rows ", first, "..", first + n_local, " out of range [0, ", num_edges,
                 "] (E = the length of ", indices_path, ")");
    s.indices = file.read_block<std::int64_t>(indices_path, {e0}, {e1 - e0});
    for (std::size_t k = 0; k < s.indices.size(); ++k) {
        STRATA_CHECK(s.indices[k] >= 0 && s.indices[k] < s.num_vertices, path, ": ", indices_path,
                     ": vertex id ", s.indices[k], " at index ", e0 + static_cast<std::int64_t>(k),
                     " out of range [0, ", s.num_vertices, ")");
    }
    if (file.exists(weight_path)) {
        check_length(file, weight_path, length_of(file, weight_path, 1), num_edges, "E");
        s.edge_weight = file.read_block<float>(weight_path, {e0}, {e1 - e0});
        for (std::size_t k = 0; k < s.edge_weight.size(); ++k) {
            STRATA_CHECK(std::isfinite(s.edge_weight[k]), path, ": ", weight_path,
                         ": non-finite value ", s.edge_weight[k], " at index ",
                         e0 + static_cast<std::int64_t>(k));
        }
    }
    for (std::int64_t& p : ptr) {
        p -= e0;
    }
    s.indptr = std::move(ptr);
}

/// Features (column block `columns`), labels and masks of the slice's rows.
void read_vertex_data(const H5File& file, GraphSlice& s, std::int64_t version,
                      FeatureSlice columns) {
    const std::string& path = file.path();
    const global_id n = s.num_vertices;
    const global_id first = s.first();
    const global_id n_local = s.num_local();
    const H5Shape shape = file.shape(features_path);
    STRATA_CHECK(shape.size() == 2, path, ": ", features_path, ": expected rank 2, found rank ",
                 shape.size());
    STRATA_CHECK(shape[0] == n, path, ": ", features_path, ": has ", shape[0],
                 " rows, expected N = ", n);
    STRATA_CHECK(shape[1] <= std::numeric_limits<index_t>::max(), path, ": ", features_path,
                 ": shape [", shape[0], ", ", shape[1], "] exceeds the supported maximum (",
                 std::numeric_limits<index_t>::max(), " features)");
    const ColumnBlock block = column_block(shape[1], columns);
    const auto f = static_cast<index_t>(block.count);
    s.features.rows = n_local;
    s.features.cols = f;
    s.features.values =
        file.read_block<float>(features_path, {first, block.first}, {n_local, block.count});
    for (std::size_t i = 0; i < s.features.values.size(); ++i) {
        STRATA_CHECK(std::isfinite(s.features.values[i]), path, ": ", features_path,
                     ": non-finite value ", s.features.values[i], " at [",
                     first + static_cast<global_id>(i / static_cast<std::size_t>(f)), ", ",
                     i % static_cast<std::size_t>(f), "]");
    }

    check_length(file, labels_path, length_of(file, labels_path, 1), n, "N");
    s.labels = file.read_block<std::int64_t>(labels_path, {first}, {n_local});
    for (std::size_t v = 0; v < s.labels.size(); ++v) {
        STRATA_CHECK(s.labels[v] >= -1 && s.labels[v] < s.num_classes, path, ": ", labels_path,
                     ": label ", s.labels[v], " at index ", first + static_cast<global_id>(v),
                     " out of range [-1, ", s.num_classes, ")");
    }

    s.num_splits = 0;
    for (int i = 0; i < 3; ++i) {
        const char* dataset = mask_paths[i];
        const H5Shape mask_shape = file.shape(dataset);
        const std::size_t rank = version == 1 ? 1 : 2;
        STRATA_CHECK(mask_shape.size() == rank, path, ": ", dataset, ": expected rank ", rank,
                     ", found rank ", mask_shape.size());
        const std::int64_t splits = version == 1 ? 1 : mask_shape[0];
        STRATA_CHECK(splits >= 1 && splits <= std::numeric_limits<int>::max(), path, ": ", dataset,
                     ": ", splits, " splits (expected S >= 1)");
        STRATA_CHECK(s.num_splits == 0 || s.num_splits == splits, path, ": ", dataset, ": has ",
                     splits, " splits but ", mask_paths[0], " has ", s.num_splits);
        s.num_splits = static_cast<int>(splits);
        check_length(file, dataset, mask_shape.back() * splits, n * splits,
                     splits == 1 ? "N" : "S x N");
        std::vector<std::uint8_t>& mask = *mask_of(s, i);
        mask = version == 1 ? file.read_block<std::uint8_t>(dataset, {first}, {n_local})
                            : file.read_block<std::uint8_t>(dataset, {0, first}, {splits, n_local});
        const auto row = static_cast<std::size_t>(std::max<global_id>(n_local, 1));
        for (std::size_t k = 0; k < mask.size(); ++k) {
            // The index in the whole [S, N] array, as read_graph names it.
            const global_id at =
                static_cast<global_id>(k / row) * n + first + static_cast<global_id>(k % row);
            STRATA_CHECK(mask[k] <= 1, path, ": ", dataset, ": value ", static_cast<int>(mask[k]),
                         " at index ", at, " is not 0 or 1");
        }
    }
}

}  // namespace

std::vector<global_id> slice_offsets(global_id num_vertices, int num_slices) {
    STRATA_CHECK(num_slices >= 1, "slice_offsets: need at least one slice, got ", num_slices);
    STRATA_CHECK(num_vertices >= 0, "slice_offsets: negative vertex count ", num_vertices);
    std::vector<global_id> offsets(static_cast<std::size_t>(num_slices) + 1);
    for (int r = 0; r <= num_slices; ++r) {
        // r * N / P without overflow for N < 2^63 / P.
        offsets[static_cast<std::size_t>(r)] =
            num_vertices / num_slices * r + num_vertices % num_slices * r / num_slices;
    }
    return offsets;
}

namespace {

/// Boundary r: the first v with v + indptr(v) >= r * (N + E) / P (binary search).
template <class IndptrAt>
std::vector<global_id> balanced_offsets(global_id n, std::int64_t e, int num_slices,
                                        const IndptrAt& indptr_of) {
    const double total = static_cast<double>(n) + static_cast<double>(e);
    std::vector<global_id> offsets(static_cast<std::size_t>(num_slices) + 1, 0);
    offsets.back() = n;
    for (int r = 1; r < num_slices; ++r) {
        const double target = total * r / num_slices;
        global_id lo = offsets[static_cast<std::size_t>(r) - 1];  // monotone even if indptr is not
        global_id hi = n;
        while (lo < hi) {  // first v in [lo, hi] with v + indptr[v] >= target
            const global_id mid = lo + (hi - lo) / 2;
            if (static_cast<double>(mid) + static_cast<double>(indptr_of(mid)) >= target) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        offsets[static_cast<std::size_t>(r)] = lo;
    }
    return offsets;
}

}  // namespace

std::vector<global_id> slice_offsets(const std::string& path, int num_slices) {
    STRATA_CHECK(num_slices >= 1, "slice_offsets: need at least one slice, got ", num_slices);
    const H5File file = H5File::open(path);
    (void)graph_layout::format_version(file);
    const global_id n = length_of(file, indptr_path, 1) - 1;
    STRATA_CHECK(n >= 0, path, ": ", indptr_path, ": is empty, expected N+1 >= 1");
    const std::int64_t e = length_of(file, indices_path, 1);
    return balanced_offsets(n, e, num_slices, [&file](global_id v) { return indptr_at(file, v); });
}

std::vector<global_id> slice_offsets(std::span<const std::int64_t> indptr, int num_slices) {
    STRATA_CHECK(num_slices >= 1, "slice_offsets: need at least one slice, got ", num_slices);
    STRATA_CHECK(!indptr.empty(), "slice_offsets: indptr is empty, expected N+1 >= 1");
    const auto n = static_cast<global_id>(indptr.size()) - 1;
    return balanced_offsets(n, indptr.back(), num_slices,
                            [indptr](global_id v) { return indptr[static_cast<std::size_t>(v)]; });
}

namespace {

void check_offsets(const std::string& what, global_id num_vertices,
                   const std::vector<global_id>& vertex_offsets, int rank) {
    const std::size_t p = vertex_offsets.size() - std::min<std::size_t>(vertex_offsets.size(), 1);
    STRATA_CHECK(p >= 1 && rank >= 0 && static_cast<std::size_t>(rank) < p, what, ": slice ", rank,
                 " of ", p, " slices does not exist");
    STRATA_CHECK(vertex_offsets.front() == 0 && vertex_offsets.back() == num_vertices &&
                     std::is_sorted(vertex_offsets.begin(), vertex_offsets.end()),
                 what, ": slice offsets must rise from 0 to N = ", num_vertices);
}

}  // namespace

GraphSlice slice_of(const GraphView& graph, const std::vector<global_id>& vertex_offsets,
                    int rank) {
    check_offsets(graph.name, graph.num_vertices(), vertex_offsets, rank);
    GraphSlice s;
    s.name = graph.name;
    s.num_vertices = graph.num_vertices();
    s.num_edges = graph.num_edges();
    s.num_classes = graph.num_classes;
    s.vertex_offsets = vertex_offsets;
    s.rank = rank;
    const auto first = static_cast<std::size_t>(vertex_offsets[static_cast<std::size_t>(rank)]);
    const auto last = static_cast<std::size_t>(vertex_offsets[static_cast<std::size_t>(rank) + 1]);
    const std::int64_t e0 = graph.indptr[first];
    const std::int64_t e1 = graph.indptr[last];
    s.indptr.assign(graph.indptr.begin() + static_cast<std::ptrdiff_t>(first),
                    graph.indptr.begin() + static_cast<std::ptrdiff_t>(last) + 1);
    for (std::int64_t& p : s.indptr) {
        p -= e0;
    }
    s.indices.assign(graph.indices.begin() + e0, graph.indices.begin() + e1);
    if (!graph.edge_weight.empty()) {
        s.edge_weight.assign(graph.edge_weight.begin() + e0, graph.edge_weight.begin() + e1);
    }
    const auto f = static_cast<std::size_t>(graph.features.cols);
    s.features.rows = static_cast<std::int64_t>(last - first);
    s.features.cols = graph.features.cols;
    s.features.values.assign(graph.features.values.begin() + static_cast<std::ptrdiff_t>(first * f),
                             graph.features.values.begin() + static_cast<std::ptrdiff_t>(last * f));
    s.labels.assign(graph.labels.begin() + static_cast<std::ptrdiff_t>(first),
                    graph.labels.begin() + static_cast<std::ptrdiff_t>(last));
    s.num_splits = graph.num_splits;
    const auto n = static_cast<std::size_t>(graph.num_vertices());
    for (int i = 0; i < 3; ++i) {
        const std::span<const std::uint8_t> whole =
            i == 0 ? graph.train_mask : (i == 1 ? graph.val_mask : graph.test_mask);
        std::vector<std::uint8_t>& part = *mask_of(s, i);
        for (std::size_t split = 0; split < static_cast<std::size_t>(graph.num_splits); ++split) {
            part.insert(part.end(), whole.begin() + static_cast<std::ptrdiff_t>(split * n + first),
                        whole.begin() + static_cast<std::ptrdiff_t>(split * n + last));
        }
    }
    return s;
}

ColumnBlock column_block(std::int64_t width, FeatureSlice slice) {
    STRATA_CHECK(slice.count >= 1 && slice.index >= 0 && slice.index < slice.count,
                 "feature slice ", slice.index, " of ", slice.count,
                 ": expected 0 <= index < count");
    const std::int64_t base = width / slice.count;
    const std::int64_t extra = width % slice.count;
    return {.first = slice.index * base + std::min<std::int64_t>(slice.index, extra),
            .count = base + (slice.index < extra ? 1 : 0)};
}

GraphSlice read_graph_slice(const std::string& path, const std::vector<global_id>& vertex_offsets,
                            int rank, const SliceReadOptions& options) {
    const H5File file = H5File::open(path);
    const std::int64_t version = graph_layout::format_version(file);
    GraphSlice s;
    s.name = file.read_string_attribute("/", "name");
    s.num_classes = file.read_int_attribute("/", "num_classes");
    STRATA_CHECK(s.num_classes >= 1, path, ": /: num_classes must be >= 1, found ", s.num_classes);
    const std::int64_t n_plus_1 = length_of(file, indptr_path, 1);
    STRATA_CHECK(n_plus_1 >= 1, path, ": ", indptr_path, ": is empty, expected N+1 >= 1");
    s.num_vertices = n_plus_1 - 1;
    s.num_edges = length_of(file, indices_path, 1);
    check_offsets(path, s.num_vertices, vertex_offsets, rank);
    s.vertex_offsets = vertex_offsets;
    s.rank = rank;
    read_adjacency(file, s, s.num_edges);
    if (options.vertex_data) {
        read_vertex_data(file, s, version, options.features);
    } else {
        s.features.cols = static_cast<index_t>(
            column_block(file.shape(features_path).back(), options.features).count);
    }
    if (options.bytes_read != nullptr) {
        *options.bytes_read = file.bytes_read();
    }
    return s;
}

}  // namespace strata
