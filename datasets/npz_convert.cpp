// convert_npz: layout detection by keys, then an edge list (source, target[, weight]) built into
// a CSR by destination with a stable counting sort (first of duplicates kept).
#include "datasets/npz_convert.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <numeric>

#include "datasets/edge_list.hpp"
#include "datasets/npz_file.hpp"
#include "src/base/error.hpp"

namespace strata {
namespace {

void check_vertex(std::int64_t id, std::int64_t n, const std::string& what, std::size_t index) {
    STRATA_CHECK(id >= 0 && id < n, what, ": vertex id ", id, " at index ", index,
                 " out of range [0, ", n, ")");
}

/// Labels [N]: -1 = unlabeled; num_classes = max + 1.
void set_labels(const NpyArray& labels, std::int64_t n, GraphDataset& g) {
    labels.check_rank(1);
    STRATA_CHECK(labels.shape[0] == n, labels.what, ": has ", labels.shape[0],
                 " labels, expected N = ", n);
    g.labels = labels.to_int64();
    std::int64_t max_label = -1;
    for (std::size_t v = 0; v < g.labels.size(); ++v) {
        STRATA_CHECK(g.labels[v] >= -1, labels.what, ": label ", g.labels[v], " at index ", v,
                     " is negative (only -1 = unlabeled is allowed)");
        max_label = std::max(max_label, g.labels[v]);
    }
    STRATA_CHECK(max_label >= 0, labels.what, ": no vertex is labeled");
    g.num_classes = max_label + 1;
}

/// A [S, N] (or [N]: S = 1) mask.
std::vector<std::uint8_t> read_masks(const NpzFile& file, const std::string& key, std::int64_t n,
                                     int& splits) {
    const NpyArray a = file.read(key);
    STRATA_CHECK(a.shape.size() == 1 || a.shape.size() == 2, a.what,
                 ": expected shape [S, N] or [N], found ", a.shape_string());
    const std::int64_t s = a.shape.size() == 1 ? 1 : a.shape[0];
    STRATA_CHECK(a.shape.back() == n && s >= 1 && s <= std::numeric_limits<int>::max(), a.what,
                 ": shape ", a.shape_string(), " does not match N = ", n);
    STRATA_CHECK(splits == 0 || splits == s, a.what, ": has ", s, " splits, but train_masks has ",
                 splits);
    splits = static_cast<int>(s);
    return a.to_mask();
}

void convert_heterophilous(const NpzFile& file, bool undirected, NpzConversion& c) {
    GraphDataset& g = c.graph;
    const NpyArray features = file.read("node_features");
    features.check_rank(2);
    const std::int64_t n = features.shape[0];
    STRATA_CHECK(features.shape[1] <= std::numeric_limits<index_t>::max(), features.what,
                 ": shape ", features.shape_string(), " exceeds the supported maximum (",
                 std::numeric_limits<index_t>::max(), " features)");
    g.features.rows = n;
    g.features.cols = static_cast<index_t>(features.shape[1]);
    g.features.values = features.to_float();
    set_labels(file.read("node_labels"), n, g);

    const NpyArray edges = file.read("edges");
    edges.check_rank(2);
    STRATA_CHECK(edges.shape[1] == 2, edges.what,
                 ": expected shape [E, 2] (source, target), found ", edges.shape_string());
    const std::vector<std::int64_t> pairs = edges.to_int64();
    EdgeList list;
    const auto e = static_cast<std::size_t>(edges.shape[0]);
    for (std::size_t k = 0; k < e; ++k) {
        check_vertex(pairs[2 * k], n, edges.what, 2 * k);
        check_vertex(pairs[2 * k + 1], n, edges.what, 2 * k + 1);
        list.src.push_back(pairs[2 * k]);
        list.dst.push_back(pairs[2 * k + 1]);
        c.self_loops += pairs[2 * k] == pairs[2 * k + 1] ? 1 : 0;
    }
    c.edges_read = static_cast<std::int64_t>(e);
    if (undirected) {
        for (std::size_t k = 0; k < e; ++k) {
            if (list.src[k] != list.dst[k]) {
                list.src.push_back(list.dst[k]);
                list.dst.push_back(list.src[k]);
                ++c.reverse_edges_added;
            }
        }
    }
    c.duplicates_dropped += edges_to_csr(list, n, c.graph);

    int splits = 0;
    g.train_mask = read_masks(file, "train_masks", n, splits);
    g.val_mask = read_masks(file, "val_masks", n, splits);
    g.test_mask = read_masks(file, "test_masks", n, splits);
    g.num_splits = splits;
}

/// A CSR matrix of the gnn-benchmark layout (prefix_data, _indices, _indptr, _shape).
struct SparseMatrix {
    std::int64_t rows = 0;
    std::int64_t cols = 0;
    std::vector<std::int64_t> indptr;
    std::vector<std::int64_t> indices;
    std::vector<float> data;
};

SparseMatrix read_sparse(const NpzFile& file, const std::string& prefix) {
    SparseMatrix m;
    const NpyArray shape = file.read(prefix + "_shape");
    shape.check_rank(1);
    STRATA_CHECK(shape.shape[0] == 2, shape.what, ": expected 2 values, found ", shape.shape[0]);
    const std::vector<std::int64_t> dims = shape.to_int64();
    m.rows = dims[0];
    m.cols = dims[1];
    // Rows (and the adjacency's columns) are vertices: 64-bit. An attribute matrix's columns
    // are features (32-bit), checked where it is read.
    STRATA_CHECK(m.rows >= 0 && m.cols >= 0, shape.what, ": shape (", m.rows, ", ", m.cols,
                 ") is out of range");
    const NpyArray indptr = file.read(prefix + "_indptr");
    indptr.check_rank(1);
    STRATA_CHECK(indptr.shape[0] == m.rows + 1, indptr.what, ": has ", indptr.shape[0],
                 " entries, expected rows + 1 = ", m.rows + 1);
    m.indptr = indptr.to_int64();
    const NpyArray indices = file.read(prefix + "_indices");
    indices.check_rank(1);
    m.indices = indices.to_int64();
    const NpyArray data = file.read(prefix + "_data");
    data.check_rank(1);
    STRATA_CHECK(data.shape[0] == indices.shape[0], data.what, ": has ", data.shape[0],
                 " values but ", prefix, "_indices has ", indices.shape[0]);
    if (data.type == NpyType::f4 || data.type == NpyType::f8) {
        m.data = data.to_float();
    } else {
        const std::vector<std::int64_t> values = data.to_int64();
        m.data.assign(values.begin(), values.end());
    }
    STRATA_CHECK(m.indptr[0] == 0, indptr.what, ": must start at 0, found ", m.indptr[0]);
    for (std::size_t r = 0; r < static_cast<std::size_t>(m.rows); ++r) {
        STRATA_CHECK(m.indptr[r] <= m.indptr[r + 1], indptr.what, ": not monotone at index ", r + 1,
                     " (", m.indptr[r], " > ", m.indptr[r + 1], ")");
    }
    STRATA_CHECK(m.indptr.back() == indices.shape[0], indptr.what, ": ends at ", m.indptr.back(),
                 ", expected ", indices.shape[0], " (the length of ", prefix, "_indices)");
    for (std::size_t k = 0; k < m.indices.size(); ++k) {
        STRATA_CHECK(m.indices[k] >= 0 && m.indices[k] < m.cols, indices.what, ": column ",
                     m.indices[k], " at index ", k, " out of range [0, ", m.cols, ")");
    }
    return m;
}

void convert_gnn_benchmark(const NpzFile& file, bool undirected, NpzConversion& c) {
    GraphDataset& g = c.graph;
    const SparseMatrix adj = read_sparse(file, "adj");
    STRATA_CHECK(adj.rows == adj.cols, file.path(), ": adj_shape: (", adj.rows, ", ", adj.cols,
                 ") is not square");
    const std::int64_t n = adj.rows;

    // Row u of adj lists the targets v of the edges u -> v.
    EdgeList list;
    const bool weighted =
        std::any_of(adj.data.begin(), adj.data.end(), [](float w) { return w != 1.0f; });
    for (std::int64_t u = 0; u < n; ++u) {
        for (auto k = static_cast<std::size_t>(adj.indptr[static_cast<std::size_t>(u)]);
             k < static_cast<std::size_t>(adj.indptr[static_cast<std::size_t>(u) + 1]); ++k) {
            list.src.push_back(u);
            list.dst.push_back(adj.indices[k]);
            if (weighted) {
                list.weight.push_back(adj.data[k]);
            }
            c.self_loops += adj.indices[k] == u ? 1 : 0;
        }
    }
    c.edges_read = static_cast<std::int64_t>(list.src.size());
    if (undirected) {
        const std::size_t e = list.src.size();
        for (std::size_t k = 0; k < e; ++k) {
            if (list.src[k] != list.dst[k]) {
                list.src.push_back(list.dst[k]);
                list.dst.push_back(list.src[k]);
                if (weighted) {
                    list.weight.push_back(list.weight[k]);
                }
                ++c.reverse_edges_added;
            }
        }
    }
    c.duplicates_dropped += edges_to_csr(list, n, c.graph);

    g.features.rows = n;
    if (file.has("attr_matrix")) {
        const NpyArray x = file.read("attr_matrix");
        x.check_rank(2);
        STRATA_CHECK(x.shape[0] == n && x.shape[1] <= std::numeric_limits<index_t>::max(), x.what,
                     ": shape ", x.shape_string(), " does not match N = ", n);
        g.features.cols = static_cast<index_t>(x.shape[1]);
        g.features.values = x.to_float();
    } else {
        STRATA_CHECK(file.has("attr_data"), file.path(),
                     ": missing key 'attr_matrix' or 'attr_data' (the features)");
        const SparseMatrix x = read_sparse(file, "attr");
        STRATA_CHECK(x.rows == n, file.path(), ": attr_shape: ", x.rows, " rows, expected N = ", n,
                     " (adj_shape)");
        STRATA_CHECK(x.cols <= std::numeric_limits<index_t>::max(), file.path(),
                     ": attr_shape: ", x.cols, " features exceed the supported maximum (",
                     std::numeric_limits<index_t>::max(), ")");
        g.features = HostMatrix(n, static_cast<index_t>(x.cols));
        for (std::int64_t r = 0; r < n; ++r) {
            for (auto k = static_cast<std::size_t>(x.indptr[static_cast<std::size_t>(r)]);
                 k < static_cast<std::size_t>(x.indptr[static_cast<std::size_t>(r) + 1]); ++k) {
                g.features.at(r, static_cast<index_t>(x.indices[k])) += x.data[k];
            }
        }
    }
    set_labels(file.read("labels"), n, g);
    // No split in this layout: one split with empty sets.
    g.num_splits = 1;
    g.train_mask.assign(static_cast<std::size_t>(n), 0);
    g.val_mask.assign(static_cast<std::size_t>(n), 0);
    g.test_mask.assign(static_cast<std::size_t>(n), 0);
}

}  // namespace

NpzConversion convert_npz(const std::string& path, const NpzConvertOptions& options) {
    std::error_code ec;
    STRATA_CHECK(std::filesystem::is_regular_file(path, ec), path, ": no such file");
    const NpzFile file(path);
    NpzConversion c;
    c.graph.name =
        options.name.empty() ? std::filesystem::path(path).stem().string() : options.name;
    if (file.has("node_features") || file.has("edges")) {
        c.layout = "heterophilous-graphs";
        convert_heterophilous(file, options.undirected, c);
    } else if (file.has("adj_indptr") || file.has("adj_data")) {
        c.layout = "gnn-benchmark";
        convert_gnn_benchmark(file, options.undirected, c);
    } else {
        std::string listed;
        for (const std::string& k : file.keys()) {
            listed += (listed.empty() ? "" : ", ") + k;
        }
        STRATA_FAIL(path,
                    ": unknown .npz layout (expected node_features/node_labels/edges/"
                    "train_masks/... of heterophilous-graphs, or adj_data/adj_indices/adj_indptr/"
                    "adj_shape/attr_*/labels of gnn-benchmark; keys: ",
                    listed, ")");
    }
    return c;
}

}  // namespace strata
