// The GCN model (Kipf & Welling 2017) as a ModelGraph: per layer, dropout on its input, then
// Â x W computed in the cheaper order (aggregate at the narrower width), then the fused
// bias + ReLU (+ the next layer's dropout) in place.
#pragma once

#include <cstdint>
#include <string>

#include "src/nn/model_graph.hpp"

namespace strata {

struct GcnOptions {
    int layers = 2;
    index_t hidden = 16;
    float dropout = 0.5f;
    float weight_decay = 5e-4f;     ///< L2 on W
    bool decay_all_layers = false;  ///< false: first layer only (Kipf & Welling)
    bool bias = true;
    std::uint64_t seed = 0;  ///< dropout masks
};

/// in_features → hidden → … → num_classes:
///   gcn0.dropout (features) → per layer l: [gcn{l}.linear → gcn{l}.aggregate] when it shrinks
///   the width, else [gcn{l}.aggregate → gcn{l}.linear] → gcn{l}.act (bias, then for hidden
///   layers ReLU and the dropout of layer l+1's input, key layer l+1).
/// The output of gcn{l}.act of a hidden layer is marked as layer l+1's input. Throws
/// strata::Error on non-positive sizes or fewer than 2 classes.
[[nodiscard]] ModelGraph build_gcn(index_t in_features, index_t num_classes,
                                   const GcnOptions& options);

/// The tensor holding the last hidden layer (`strata predict --embeddings`): "gcn{L-2}.act";
/// empty for a 1-layer model.
[[nodiscard]] std::string gcn_embedding_tensor(const GcnOptions& options);

/// "gcn, 2 layers, hidden 16, dropout 0.5, weight decay 5e-4 (first layer)".
[[nodiscard]] std::string describe(const GcnOptions& options);

}  // namespace strata
