// GCN normalization of the adjacency (Kipf & Welling 2017) and row normalization of features.
#pragma once

#include "datasets/graph_dataset.hpp"
#include "src/tensor/host_matrix.hpp"

namespace strata {

/// Â = D^-1/2 (A + I) D^-1/2, N x N, rows = destinations like the dataset's CSR, over the whole
/// graph: the global reference of the symmetric operator that training builds per rank
/// (normalized(raw, Normalization::symmetric), partition/local_normalize.hpp), bit for bit.
/// A = adjacency_matrix(graph): A_vu is the stored weight of edge u -> v (1 when the dataset
/// has no edge_weight), duplicate edges summed (in double, rounded to float once); I is added
/// even where a self loop exists (Kipf's A + I). d_v = 1 + Σ_u A_vu (summed in double, columns
/// ascending), Â_vu = (A + I)_vu / sqrt(d_v d_u) computed in double and rounded to float. On
/// unweighted graphs (and whenever these sums are exact) this is bit for bit what strata
/// computed before partition format 2. Columns of each row are sorted ascending and unique.
/// Throws strata::Error if some d_v <= 0 (possible only with non-positive edge weights).
[[nodiscard]] GlobalCsr gcn_normalize(const GraphDataset& graph);

/// x_v <- x_v / Σ_j |x_vj| for each non-zero row (unit L1 norm): on non-negative features
/// (bag-of-words, TF-IDF) Kipf's preprocessing x_v / Σ_j x_vj, bit for bit; on features with
/// negative values (embeddings, strata generate's) well-defined where the signed sum is not (a
/// row summing to nearly zero would blow up). Zero rows are left unchanged.
void row_normalize_features(HostMatrix& features);

}  // namespace strata
