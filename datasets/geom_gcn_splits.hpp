// apply_geom_gcn_splits: the Geom-GCN fixed splits (Pei et al., ICLR 2020; one .npz per split
// with train_mask/val_mask/test_mask [N]) put into a graph as its S splits.
#pragma once

#include <string>

#include "datasets/graph_dataset.hpp"

namespace strata {

/// Replaces graph's splits by the files `<anything>_<i>.npz` of `dir`, ordered by their split
/// number i, which must be exactly 0 .. S-1. Each file holds train_mask, val_mask and
/// test_mask of N entries (bool or uint8, 0/1), N = graph.num_vertices(). Other files are
/// ignored. Throws strata::Error naming the file, the key and the bad value (e.g.
/// "s/cora_split_0.6_0.2_3.npz: train_mask: has 2000 entries, but the graph has N = 2708").
void apply_geom_gcn_splits(GraphDataset& graph, const std::string& dir);

}  // namespace strata
