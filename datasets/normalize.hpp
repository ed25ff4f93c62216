// GCN normalization of the adjacency (Kipf & Welling 2017) and row normalization of features.
#pragma once

#include "datasets/graph_dataset.hpp"
#include "src/tensor/host_matrix.hpp"

namespace strata {

/// Â = D^-1/2 (A + I) D^-1/2, N x N, rows = destinations like the dataset's CSR.
/// A_vu is the stored weight of edge u -> v (1 when the dataset has no edge_weight); duplicate
/// edges are summed, and I is added even where a self loop exists (Kipf's A + I).
/// d_v = Σ_u (A + I)_vu (row sums), Â_vu = (A + I)_vu / sqrt(d_v d_u), computed in double.
/// Columns of each row are sorted ascending and unique. Throws strata::Error if some d_v <= 0
/// (possible only with non-positive edge weights).
[[nodiscard]] GlobalCsr gcn_normalize(const GraphDataset& graph);

/// x_v <- x_v / Σ_j x_vj for each row whose sum is non-zero (Kipf's feature preprocessing);
/// rows summing to zero are left unchanged.
void row_normalize_features(HostMatrix& features);

}  // namespace strata
