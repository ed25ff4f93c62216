// The dataset paths and root attributes of the graph format (docs/format.md), shared by the
// whole-file reader/writer (graph_io.cpp) and the per-rank slice reader (graph_slice_io.cpp).
#pragma once

#include <cstdint>

namespace strata {

class H5File;

namespace graph_layout {

inline constexpr const char* indptr_path = "/graph/indptr";
inline constexpr const char* indices_path = "/graph/indices";
inline constexpr const char* weight_path = "/graph/edge_weight";
inline constexpr const char* features_path = "/node/features";
inline constexpr const char* labels_path = "/node/labels";
inline constexpr const char* mask_paths[3] = {"/node/train_mask", "/node/val_mask",
                                              "/node/test_mask"};
inline constexpr const char* content_id_attribute = "content_id";

/// Checks the root attribute strata_format ("graph") and returns strata_format_version
/// (1 .. graph_format_version); throws strata::Error naming the file otherwise.
[[nodiscard]] std::int64_t format_version(const H5File& file);

}  // namespace graph_layout
}  // namespace strata
