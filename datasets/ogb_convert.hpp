// Open Graph Benchmark node-property-prediction directory -> GraphDataset
// (`strata convert --from ogb`; layout in docs/datasets.md).
#pragma once

#include <cstdint>
#include <string>

#include "datasets/graph_dataset.hpp"

namespace strata {

struct OgbConvertOptions {
    std::string name = {};    ///< the name attribute; empty: the directory's own name
    std::string split = {};   ///< reads split/<split>/; empty: the only directory under split/
    bool undirected = false;  ///< add v -> u for every listed u -> v with u != v
    bool progress = false;    ///< print Progress lines on stdout during the edge passes
};

/// What convert_ogb did, for the command's report. num_edges = edges_read +
/// reverse_edges_added - duplicates_dropped.
struct OgbConvertSummary {
    std::int64_t num_vertices = 0;         ///< from raw/num-node-list.csv.gz
    std::int64_t edges_read = 0;           ///< lines of raw/edge.csv.gz
    std::int64_t self_loops_read = 0;      ///< among edges_read; kept, never reversed
    std::int64_t reverse_edges_added = 0;  ///< --undirected: edges_read - self_loops_read
    std::int64_t duplicates_dropped = 0;   ///< repeated (u, v) pairs after adding reverses
    std::int64_t num_edges = 0;            ///< stored in the CSR
    index_t num_features = 0;
    std::int64_t num_classes = 0;       ///< max label + 1
    std::int64_t labeled_vertices = 0;  ///< label != -1
    std::string split = {};             ///< the split directory used
    std::int64_t train = 0;
    std::int64_t valid = 0;
    std::int64_t test = 0;
};

struct OgbConversion {
    GraphDataset graph;
    OgbConvertSummary summary;
};

/// Reads the OGB raw layout under `dir`:
///   raw/num-node-list.csv.gz   one line: N
///   raw/num-edge-list.csv.gz   one line: M (the number of lines of edge.csv.gz)
///   raw/edge.csv.gz            M lines "u,v": an edge u -> v, ids in [0, N)
///   raw/node-feat.csv.gz       N lines of F comma-separated floats
///   raw/node-label.csv.gz      N lines, one class id (may be written "3.0"); "nan" or empty
///                              = unlabeled (-1); num_classes = max label + 1
///   split/<name>/{train,valid,test}.csv.gz   vertex ids, one per line, no duplicates
/// Every file is streamed through zlib. The CSR by destination is built in two passes over
/// edge.csv.gz (count, then fill), so memory is the output plus O(N); rows are sorted and
/// duplicates dropped; self loops are kept as given. The result is validated.
/// Throws strata::Error naming "file:line" and the offending field on bad input: corrupt or
/// truncated gzip, non-numeric fields, ragged feature rows, wrong row counts, ids out of range,
/// a missing file, or several splits and none chosen.
[[nodiscard]] OgbConversion convert_ogb(const std::string& dir, const OgbConvertOptions& options);

}  // namespace strata
