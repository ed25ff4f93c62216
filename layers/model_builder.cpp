// GCN model assembly.
#include "layers/model_builder.hpp"

#include <sstream>

#include "layers/activation_layers.hpp"
#include "layers/gcn_layer.hpp"
#include "src/base/error.hpp"

namespace strata {

void build_gcn(Model& model, const GraphBlocks& blocks, Communicator& comm, index_t in_features,
               index_t num_classes, const GcnOptions& options) {
    STRATA_CHECK(options.layers >= 1, "--layers must be at least 1, got ", options.layers);
    STRATA_CHECK(options.hidden >= 1, "--hidden must be at least 1, got ", options.hidden);
    STRATA_CHECK(num_classes >= 2, "the dataset has ", num_classes, " classes, need at least 2");
    index_t in = in_features;
    for (int l = 0; l < options.layers; ++l) {
        const bool last = l + 1 == options.layers;
        const index_t out = last ? num_classes : options.hidden;
        const float decay = (l == 0 || options.decay_all_layers) ? options.weight_decay : 0.0f;
        if (options.dropout > 0.0f) {
            model.add(std::make_unique<DropoutLayer>(blocks, options.dropout, options.seed,
                                                     static_cast<std::uint64_t>(l)));
        }
        model.add(std::make_unique<GcnLayer>(blocks, comm, in, out, decay, options.bias));
        if (!last) {
            model.add(std::make_unique<ReluLayer>(blocks.backend()));
        }
        in = out;
    }
}

std::string describe(const GcnOptions& options) {
    std::ostringstream out;
    out << "gcn, " << options.layers << " layers, hidden " << options.hidden << ", dropout "
        << options.dropout << ", weight decay " << options.weight_decay
        << (options.decay_all_layers ? " (all layers)" : " (first layer)")
        << (options.bias ? ", bias" : ", no bias");
    return out.str();
}

}  // namespace strata
