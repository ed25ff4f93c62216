// normalized: a model's graph operator (Normalization) built from a rank's raw LocalGraph, on
// the rank alone: the degrees of its owned and halo vertices are all it needs.
#pragma once

#include "partition/local_graph.hpp"
#include "src/nn/graph_operator.hpp"

namespace strata {

/// `raw` (the adjacency A as partitioned, build_local_graph/read_part) with the operator's
/// values; everything else (rows, halo, exchange, boundary rows, degrees) is copied unchanged.
/// With d = raw's degrees (Σ_u A_vu, owned_degree / halo_degree):
///   symmetric: M_vu = (A_vu + δ_vu) / sqrt((1 + d_v)(1 + d_u)); the diagonal is inserted into
///              the inner block where A has none (a stored self loop gets A_vv + 1). In double,
///              rounded to float once: gcn_normalize's formula, so it is bitwise equal to the
///              rank's rows of gcn_normalize whenever the merged duplicates of A are exact in
///              float (always for unweighted graphs).
///   mean:      M_vu = A_vu / d_v; every value of a row with d_v = 0 is 0 (no in-edges).
///   sum:       M = A.
/// Throws strata::Error naming the vertex if a symmetric 1 + d_v <= 0 (negative weights).
[[nodiscard]] LocalGraph normalized(const LocalGraph& raw, Normalization n);

}  // namespace strata
