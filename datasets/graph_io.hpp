// The HDF5 graph dataset format, version 2 (docs/format.md; version 1 still reads): read, validate,
// write.
#pragma once

#include <string>

#include "datasets/graph_dataset.hpp"

namespace strata {

/// The version this build writes (root attribute strata_format_version). Version 2 stores the
/// masks as [S, N] (S splits); version 1 files, whose masks are [N], read as one split.
inline constexpr std::int64_t graph_format_version = 2;

/// Reads and validates a graph dataset file. Throws strata::Error naming the file, the
/// dataset or attribute path and the first bad value (e.g. "g.h5: /graph/indptr: not monotone
/// at index 5 (12 > 9)") when the file is missing, not HDF5, of another format or version,
/// or breaks any invariant listed in docs/format.md.
[[nodiscard]] GraphDataset read_graph(const std::string& path);

/// Checks every invariant of the format on a graph in memory (the same checks as read_graph:
/// indptr [N+1] from 0, monotone, ending at E; indices [E] in [0, N); edge_weight empty or [E]
/// and finite; features [N, F] finite; labels [N] in [-1, num_classes);
/// num_splits >= 1 and masks [num_splits * N] of 0/1; num_classes >= 1). Throws strata::Error whose
/// message starts with `what` (a file name).
void validate_graph(const GraphDataset& graph, const std::string& what);

/// Validates `graph`, then writes it to `path` through a temporary name renamed into place
/// (no partial file is ever left at `path`). Features are chunked and deflate-compressed.
/// Throws if `path` exists and !overwrite, or on any validation or I/O failure.
void write_graph(const GraphDataset& graph, const std::string& path, bool overwrite = false);

}  // namespace strata
