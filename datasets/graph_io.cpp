// Graph dataset format v3 (v2 read without a content id, v1 as one split): every invariant is
// checked on read and before write; messages name the file, the dataset path and the first bad
// value.
#include "datasets/graph_io.hpp"

#include <cmath>
#include <cstddef>
#include <limits>
#include <span>

#include "datasets/content_hash.hpp"
#include "datasets/graph_layout.hpp"
#include "datasets/h5_file.hpp"
#include "src/base/atomic_output.hpp"
#include "src/base/error.hpp"

namespace strata {

/// Checks strata_format and returns strata_format_version (1 .. graph_format_version).
std::int64_t graph_layout::format_version(const H5File& file) {
    const std::string& path = file.path();
    STRATA_CHECK(file.has_attribute("/", "strata_format"), path,
                 ": /: missing attribute 'strata_format' (not a strata graph dataset)");
    const std::string format = file.read_string_attribute("/", "strata_format");
    STRATA_CHECK(format == "graph", path, ": /: strata_format is '", format, "', expected 'graph'");
    const std::int64_t version = file.read_int_attribute("/", "strata_format_version");
    STRATA_CHECK(version >= 1 && version <= graph_format_version, path,
                 ": /: strata_format_version ", version, " is not supported (this build reads ",
                 "versions 1 to ", graph_format_version, ")");
    return version;
}

namespace {

using graph_layout::content_id_attribute;
using graph_layout::features_path;
using graph_layout::indices_path;
using graph_layout::indptr_path;
using graph_layout::labels_path;
using graph_layout::mask_paths;
using graph_layout::weight_path;

void check_size(const std::string& what, const char* dataset, std::size_t size,
                std::int64_t expected, const char* meaning) {
    STRATA_CHECK(static_cast<std::int64_t>(size) == expected, what, ": ", dataset, ": has ", size,
                 " elements, expected ", expected, " (", meaning, ")");
}

void check_mask(const std::string& what, const char* dataset, std::span<const std::uint8_t> mask,
                std::int64_t n, int splits) {
    check_size(what, dataset, mask.size(), n * splits, splits == 1 ? "N" : "S x N");
    for (std::size_t i = 0; i < mask.size(); ++i) {
        STRATA_CHECK(mask[i] <= 1, what, ": ", dataset, ": value ", static_cast<int>(mask[i]),
                     " at index ", i, " is not 0 or 1");
    }
}

/// Version 1: [N] (one split); version 2: [S, N] with the same S for all three masks.
std::vector<std::uint8_t> read_mask(const H5File& file, const char* dataset, std::int64_t version,
                                    int& splits) {
    H5Shape shape;
    std::vector<std::uint8_t> mask = file.read<std::uint8_t>(dataset, &shape, version == 1 ? 1 : 2);
    if (version == 1) {
        return mask;
    }
    STRATA_CHECK(shape[0] >= 1 && shape[0] <= std::numeric_limits<int>::max(), file.path(), ": ",
                 dataset, ": ", shape[0], " splits (expected S >= 1)");
    STRATA_CHECK(splits == 0 || splits == shape[0], file.path(), ": ", dataset, ": has ", shape[0],
                 " splits but ", mask_paths[0], " has ", splits);
    splits = static_cast<int>(shape[0]);
    return mask;
}

/// The masks of a dataset in file order (train, val, test).
std::vector<std::uint8_t>* mask_of(GraphDataset& g, int i) {
    return i == 0 ? &g.train_mask : (i == 1 ? &g.val_mask : &g.test_mask);
}

std::span<const std::uint8_t> mask_of(const GraphView& g, int i) {
    return i == 0 ? g.train_mask : (i == 1 ? g.val_mask : g.test_mask);
}

}  // namespace

void validate_graph(const GraphView& g, const std::string& what) {
    STRATA_CHECK(g.num_classes >= 1, what, ": /: num_classes must be >= 1, found ", g.num_classes);
    STRATA_CHECK(!g.indptr.empty(), what, ": ", indptr_path, ": is empty, expected N+1 >= 1");
    const std::int64_t n = static_cast<std::int64_t>(g.indptr.size()) - 1;
    const std::int64_t e = static_cast<std::int64_t>(g.indices.size());
    STRATA_CHECK(n <= std::numeric_limits<index_t>::max(), what, ": ", indptr_path, ": ", n,
                 " vertices exceed the supported maximum ", std::numeric_limits<index_t>::max());

    STRATA_CHECK(g.indptr[0] == 0, what, ": ", indptr_path, ": must start at 0, found ",
                 g.indptr[0]);
    for (std::size_t v = 1; v < g.indptr.size(); ++v) {
        STRATA_CHECK(g.indptr[v] >= g.indptr[v - 1], what, ": ", indptr_path,
                     ": not monotone at index ", v, " (", g.indptr[v - 1], " > ", g.indptr[v], ")");
    }
    STRATA_CHECK(g.indptr.back() == e, what, ": ", indptr_path, ": ends at ", g.indptr.back(),
                 ", expected E = ", e, " (the length of ", indices_path, ")");
    for (std::size_t k = 0; k < g.indices.size(); ++k) {
        STRATA_CHECK(g.indices[k] >= 0 && g.indices[k] < n, what, ": ", indices_path,
                     ": vertex id ", g.indices[k], " at index ", k, " out of range [0, ", n, ")");
    }
    if (!g.edge_weight.empty()) {
        check_size(what, weight_path, g.edge_weight.size(), e, "E");
        for (std::size_t k = 0; k < g.edge_weight.size(); ++k) {
            STRATA_CHECK(std::isfinite(g.edge_weight[k]), what, ": ", weight_path,
                         ": non-finite value ", g.edge_weight[k], " at index ", k);
        }
    }

    STRATA_CHECK(g.features.rows == n, what, ": ", features_path, ": has ", g.features.rows,
                 " rows, expected N = ", n);
    STRATA_CHECK(g.features.cols >= 0, what, ": ", features_path, ": negative column count");
    check_size(what, features_path, g.features.values.size(),
               n * static_cast<std::int64_t>(g.features.cols), "N x F");
    const std::size_t f = static_cast<std::size_t>(g.features.cols);
    for (std::size_t i = 0; i < g.features.values.size(); ++i) {
        STRATA_CHECK(std::isfinite(g.features.values[i]), what, ": ", features_path,
                     ": non-finite value ", g.features.values[i], " at [", i / f, ", ", i % f, "]");
    }

    check_size(what, labels_path, g.labels.size(), n, "N");
    for (std::size_t v = 0; v < g.labels.size(); ++v) {
        STRATA_CHECK(g.labels[v] >= -1 && g.labels[v] < g.num_classes, what, ": ", labels_path,
                     ": label ", g.labels[v], " at index ", v, " out of range [-1, ", g.num_classes,
                     ")");
    }
    STRATA_CHECK(g.num_splits >= 1, what, ": ", mask_paths[0], ": num_splits must be >= 1, found ",
                 g.num_splits);
    for (int i = 0; i < 3; ++i) {
        check_mask(what, mask_paths[i], mask_of(g, i), n, g.num_splits);
    }
}

namespace {

/// The stored content id of a version 3 file ("" before version 3).
std::string stored_content_id(const H5File& file, std::int64_t version) {
    if (version < 3) {
        return {};
    }
    STRATA_CHECK(file.has_attribute("/", content_id_attribute), file.path(),
                 ": /: missing attribute 'content_id' (required from format version 3)");
    return file.read_string_attribute("/", content_id_attribute);
}

}  // namespace

std::string read_graph_content_id(const std::string& path) {
    const H5File file = H5File::open(path);
    return stored_content_id(file, graph_layout::format_version(file));
}

GraphDataset read_graph(const std::string& path) {
    const H5File file = H5File::open(path);
    const std::int64_t version = graph_layout::format_version(file);
    const std::string content_id = stored_content_id(file, version);

    GraphDataset g;
    g.name = file.read_string_attribute("/", "name");
    g.num_classes = file.read_int_attribute("/", "num_classes");
    g.indptr = file.read<std::int64_t>(indptr_path, nullptr, 1);
    g.indices = file.read<std::int64_t>(indices_path, nullptr, 1);
    if (file.exists(weight_path)) {
        g.edge_weight = file.read<float>(weight_path, nullptr, 1);
        // An empty weight vector means "all 1" in memory; on disk it must have E entries.
        check_size(path, weight_path, g.edge_weight.size(),
                   static_cast<std::int64_t>(g.indices.size()), "E");
    }
    H5Shape shape;
    g.features.values = file.read<float>(features_path, &shape, 2);
    // Rows are global (64-bit); the feature width is a local size (32-bit index_t).
    STRATA_CHECK(shape[0] <= std::numeric_limits<std::int64_t>::max() &&
                     shape[1] <= std::numeric_limits<index_t>::max(),
                 path, ": ", features_path, ": shape [", shape[0], ", ", shape[1],
                 "] exceeds the supported maximum (", std::numeric_limits<index_t>::max(),
                 " features)");
    g.features.rows = static_cast<std::int64_t>(shape[0]);
    g.features.cols = static_cast<index_t>(shape[1]);
    g.labels = file.read<std::int64_t>(labels_path, nullptr, 1);
    int splits = version == 1 ? 1 : 0;
    for (int i = 0; i < 3; ++i) {
        *mask_of(g, i) = read_mask(file, mask_paths[i], version, splits);
    }
    g.num_splits = splits;
    validate_graph(g, path);
    if (!content_id.empty()) {
        const std::string actual = graph_content_id(g);
        STRATA_CHECK(actual == content_id, path, ": /: content_id ", content_id,
                     " does not match the data (", actual,
                     "): the file was changed after strata wrote it; convert it again");
    }
    return g;
}

void write_graph(const GraphView& g, const std::string& path, bool overwrite) {
    validate_graph(g, path);
    AtomicOutput output(path, overwrite);
    {
        H5File file = H5File::create(output.temp_path().string());
        file.write_attribute("/", "strata_format", std::string("graph"));
        file.write_attribute("/", "strata_format_version", graph_format_version);
        file.write_attribute("/", "name", g.name);
        file.write_attribute("/", "num_classes", g.num_classes);
        file.write_attribute("/", content_id_attribute, graph_content_id(g));
        const std::int64_t n = g.num_vertices();
        const std::int64_t e = g.num_edges();
        file.write<std::int64_t>(indptr_path, g.indptr, {n + 1});
        file.write<std::int64_t>(indices_path, g.indices, {e});
        if (!g.edge_weight.empty()) {
            file.write<float>(weight_path, g.edge_weight, {e});
        }
        file.write<float>(features_path, g.features.values, {n, g.features.cols}, true);
        file.write<std::int64_t>(labels_path, g.labels, {n});
        for (int i = 0; i < 3; ++i) {
            file.write<std::uint8_t>(mask_paths[i], mask_of(g, i), {g.num_splits, n});
        }
        file.close();  // checked: a full disk fails here, naming the file
    }
    output.commit();
}

}  // namespace strata
