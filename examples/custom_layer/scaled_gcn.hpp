// A two-layer GCN with the custom ColumnScaleOp after the first aggregation, built as a
// ModelGraph from the library's ops and the example's own:
//   features → l0.dropout → l0.linear → l0.aggregate → l0.scale → l0.act (bias + ReLU + the
//   dropout of layer 1's input) → l1.linear → l1.aggregate → l1.act (bias) → logits
#pragma once

#include <cstdint>

#include "src/nn/model_graph.hpp"

namespace example {

struct ScaledGcnOptions {
    strata::index_t hidden = 16;
    float dropout = 0.5f;
    float weight_decay = 5e-4f;  ///< L2 on the first layer's weights and on the scale's shift
    std::uint64_t seed = 0;      ///< dropout masks
};

[[nodiscard]] strata::ModelGraph build_scaled_gcn(strata::index_t in_features,
                                                  strata::index_t num_classes,
                                                  const ScaledGcnOptions& options);

}  // namespace example
