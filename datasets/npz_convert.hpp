// convert_npz: a NumPy .npz graph in one of two published layouts -> GraphDataset
// (docs/datasets.md, "--from npz"):
//  * heterophilous-graphs (Platonov et al., ICLR 2023): node_features [N,F], node_labels [N],
//    edges [E,2] (source, target), train_masks/val_masks/test_masks [S,N] (S fixed splits);
//  * gnn-benchmark (Shchur et al., 2018): adj_data/adj_indices/adj_indptr/adj_shape (CSR whose
//    rows are SOURCES: entry (u, v) is the edge u -> v), attr_data/attr_indices/attr_indptr/
//    attr_shape (sparse) or attr_matrix (dense) features, labels [N]; no split in the file.
#pragma once

#include <cstdint>
#include <string>

#include "datasets/graph_dataset.hpp"

namespace strata {

struct NpzConvertOptions {
    std::string name;         ///< dataset name; empty = the file's stem
    bool undirected = false;  ///< add v -> u for every edge u -> v (u != v)
};

struct NpzConversion {
    GraphDataset graph;
    std::string layout;  ///< "heterophilous-graphs" or "gnn-benchmark"
    std::int64_t edges_read = 0;
    std::int64_t self_loops = 0;  ///< among the edges read (kept)
    std::int64_t reverse_edges_added = 0;
    std::int64_t duplicates_dropped = 0;
};

/// Reads `path`, detects its layout by its keys, and builds the graph: the edge u -> v is
/// stored in row v (CSR by destination), rows sorted, duplicate (u, v) dropped keeping the
/// first (with --undirected, listed edges come before added reverses), self loops kept.
/// Weights (gnn-benchmark adj_data) are kept only when some value differs from 1. Labels:
/// -1 = unlabeled, num_classes = max + 1. gnn-benchmark files carry no split: the result has
/// one split whose masks are all 0 (apply one with apply_geom_gcn_splits or write masks).
/// Throws strata::Error naming the file, the key and the bad value.
[[nodiscard]] NpzConversion convert_npz(const std::string& path,
                                        const NpzConvertOptions& options = {});

}  // namespace strata
