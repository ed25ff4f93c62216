// Test helpers for datasets/: a raw writer that lays out a graph file dataset by dataset so tests
// can corrupt any one part, and element-by-element comparison of two datasets. Brings along the
// shared fixtures the datasets tests use with them: tiny_graph (tests/support/hand_graphs.hpp)
// and TempDir (tests/support/temp_dir.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "datasets/graph_dataset.hpp"
#include "datasets/h5_file.hpp"
#include "tests/support/hand_graphs.hpp"
#include "tests/support/temp_dir.hpp"

namespace strata::test {

/// Which part of a graph file write_raw_graph leaves out or replaces.
struct RawGraphEdit {
    std::string skip = {};  ///< a dataset or attribute name ("/node/labels", "num_classes") to omit
    /// Called after the regular parts are written (with `skip` omitted): add a replacement.
    std::function<void(H5File&)> extra = nullptr;
};

/// Writes `g` dataset by dataset with H5File (no validation), so tests can build corrupt files.
inline void write_raw_graph(const GraphDataset& g, const std::string& path,
                            const RawGraphEdit& edit = {}) {
    H5File f = H5File::create(path);
    const auto keep = [&](const std::string& part) { return edit.skip != part; };
    if (keep("strata_format")) {
        f.write_attribute("/", "strata_format", std::string("graph"));
    }
    if (keep("strata_format_version")) {
        f.write_attribute("/", "strata_format_version", std::int64_t{1});
    }
    if (keep("name")) {
        f.write_attribute("/", "name", g.name);
    }
    if (keep("num_classes")) {
        f.write_attribute("/", "num_classes", g.num_classes);
    }
    const auto n = static_cast<std::int64_t>(g.labels.size());
    if (keep("/graph/indptr")) {
        f.write<std::int64_t>("/graph/indptr", g.indptr,
                              {static_cast<std::int64_t>(g.indptr.size())});
    }
    if (keep("/graph/indices")) {
        f.write<std::int64_t>("/graph/indices", g.indices,
                              {static_cast<std::int64_t>(g.indices.size())});
    }
    if (!g.edge_weight.empty() && keep("/graph/edge_weight")) {
        f.write<float>("/graph/edge_weight", g.edge_weight,
                       {static_cast<std::int64_t>(g.edge_weight.size())});
    }
    if (keep("/node/features")) {
        f.write<float>("/node/features", g.features.values, {g.features.rows, g.features.cols},
                       true);
    }
    if (keep("/node/labels")) {
        f.write<std::int64_t>("/node/labels", g.labels, {n});
    }
    if (keep("/node/train_mask")) {
        f.write<std::uint8_t>("/node/train_mask", g.train_mask,
                              {static_cast<std::int64_t>(g.train_mask.size())});
    }
    if (keep("/node/val_mask")) {
        f.write<std::uint8_t>("/node/val_mask", g.val_mask,
                              {static_cast<std::int64_t>(g.val_mask.size())});
    }
    if (keep("/node/test_mask")) {
        f.write<std::uint8_t>("/node/test_mask", g.test_mask,
                              {static_cast<std::int64_t>(g.test_mask.size())});
    }
    if (edit.extra) {
        edit.extra(f);
    }
}

/// Element-by-element equality of two datasets; `why` receives the first differing part.
inline bool same_graph(const GraphDataset& a, const GraphDataset& b, std::string* why = nullptr) {
    const std::pair<bool, const char*> parts[] = {
        {a.name == b.name, "name"},
        {a.num_classes == b.num_classes, "num_classes"},
        {a.indptr == b.indptr, "indptr"},
        {a.indices == b.indices, "indices"},
        {a.edge_weight == b.edge_weight, "edge_weight"},
        {a.features.rows == b.features.rows && a.features.cols == b.features.cols,
         "features shape"},
        {a.features.values == b.features.values, "features"},
        {a.labels == b.labels, "labels"},
        {a.train_mask == b.train_mask, "train_mask"},
        {a.val_mask == b.val_mask, "val_mask"},
        {a.test_mask == b.test_mask, "test_mask"},
    };
    for (const auto& [same, part] : parts) {
        if (!same) {
            if (why != nullptr) {
                *why = part;
            }
            return false;
        }
    }
    return true;
}

}  // namespace strata::test
