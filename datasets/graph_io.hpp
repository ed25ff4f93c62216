// The HDF5 graph dataset format, version 3 (docs/format.md; versions 1 and 2 still read): read,
// validate, write; the content id that identifies a file's data without reading it.
#pragma once

#include <string>

#include "datasets/graph_dataset.hpp"

namespace strata {

/// The version this build writes (root attribute strata_format_version). Version 3 adds the
/// root attribute content_id (graph_content_id, datasets/content_hash.hpp); version 2 stores the
/// masks as [S, N] (S splits); version 1 files, whose masks are [N], read as one split.
inline constexpr std::int64_t graph_format_version = 3;

/// Reads and validates a graph dataset file. Throws strata::Error naming the file, the
/// dataset or attribute path and the first bad value (e.g. "g.h5: /graph/indptr: not monotone
/// at index 5 (12 > 9)") when the file is missing, not HDF5, of another format or version,
/// or breaks any invariant listed in docs/format.md. A version 3 file's content_id must equal
/// graph_content_id() of the data read ("...: /: content_id ... does not match the data").
[[nodiscard]] GraphDataset read_graph(const std::string& path);

/// The root attribute content_id of a graph file ("content64:<16 hex digits>"), read without
/// reading any array; "" for a version 1 or 2 file, which has none. Throws strata::Error naming
/// the file if it is not a strata graph file or a version 3 file lacks the attribute.
[[nodiscard]] std::string read_graph_content_id(const std::string& path);

/// Checks every invariant of the format on a graph in memory (the same checks as read_graph:
/// indptr [N+1] from 0, monotone, ending at E; indices [E] in [0, N); edge_weight empty or [E]
/// and finite; features [N, F] finite; labels [N] in [-1, num_classes);
/// num_splits >= 1 and masks [num_splits * N] of 0/1; num_classes >= 1). Throws strata::Error whose
/// message starts with `what` (a file name).
void validate_graph(const GraphView& graph, const std::string& what);

/// Validates `graph`, then writes it to `path` through a temporary name renamed into place
/// (no partial file is ever left at `path`). Features are chunked and deflate-compressed; the
/// root attribute content_id is graph_content_id(graph).
/// Throws if `path` exists and !overwrite, or on any validation or I/O failure.
void write_graph(const GraphView& graph, const std::string& path, bool overwrite = false);

}  // namespace strata
