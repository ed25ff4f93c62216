// The model rewritten to read its features sparse: every `features -> [input dropout] -> linear`
// path becomes one SparseLinearOp (layers/sparse_linear_op.hpp) with the dropout fused in, so
// that no dense copy of the features, dropped or not, is ever made.
#pragma once

#include <string>

#include "src/nn/model_graph.hpp"

namespace strata {

/// Why `model` cannot read its features sparse, or "" when it can: it has one input, and every
/// reader of it is a LinearOp or a bare dropout (BiasActivationOp without bias or activation)
/// read by LinearOps only.
[[nodiscard]] std::string sparse_input_blocker(const ModelGraph& model);

/// `model` with those paths fused (sparse_input_blocker(model) must be ""). Node and parameter
/// names are kept (the linear's), the dropouts' nodes are dropped; the ops of the other nodes
/// are moved over, so `model` is left without them.
[[nodiscard]] ModelGraph with_sparse_input(ModelGraph& model);

}  // namespace strata
