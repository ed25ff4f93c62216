// Builders for the models the `strata` program trains (GCN today).
#pragma once

#include <cstdint>
#include <string>

#include "layers/graph_blocks.hpp"
#include "src/comm/communicator.hpp"
#include "src/nn/model.hpp"

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

/// Appends [dropout → gcn → relu] × (layers-1), dropout → gcn to `model`:
/// in_features → hidden → … → num_classes.
void build_gcn(Model& model, const GraphBlocks& blocks, Communicator& comm, index_t in_features,
               index_t num_classes, const GcnOptions& options);

/// "gcn, 2 layers, hidden 16, dropout 0.5, weight decay 5e-4 (first layer)".
[[nodiscard]] std::string describe(const GcnOptions& options);

}  // namespace strata
