// GCN model assembly.
#include "layers/gcn_model.hpp"

#include <memory>
#include <sstream>

#include "layers/aggregate_op.hpp"
#include "layers/bias_activation_op.hpp"
#include "layers/linear_op.hpp"
#include "src/base/error.hpp"

namespace strata {

ModelGraph build_gcn(index_t in_features, index_t num_classes, const GcnOptions& options) {
    STRATA_CHECK_OPTION(options.layers >= 1, "layers", options.layers, "must be at least 1");
    STRATA_CHECK_OPTION(options.hidden >= 1, "hidden", options.hidden, "must be at least 1");
    STRATA_CHECK(num_classes >= 2, "the dataset has ", num_classes, " classes, need at least 2");
    STRATA_CHECK(in_features >= 1, "the dataset has ", in_features, " features");
    ModelGraph g;
    g.set_normalization(Normalization::symmetric);  // Â = D^-1/2 (A + I) D^-1/2
    TensorId h = g.add_input("features", in_features);
    if (options.dropout > 0.0f) {
        h = g.add("gcn0.dropout",
                  std::make_unique<BiasActivationOp>(
                      in_features,
                      BiasActivationOptions{
                          .dropout = options.dropout, .seed = options.seed, .dropout_id = 0}),
                  {h});
    }
    index_t in = in_features;
    for (int l = 0; l < options.layers; ++l) {
        const bool last = l + 1 == options.layers;
        const index_t out = last ? num_classes : options.hidden;
        const float decay = (l == 0 || options.decay_all_layers) ? options.weight_decay : 0.0f;
        const std::string name = "gcn" + std::to_string(l);
        TensorId y = -1;
        if (out < in) {  // transform first: exchange the narrower x W
            const TensorId t =
                g.add(name + ".linear", std::make_unique<LinearOp>(in, out, decay), {h});
            y = g.add(name + ".aggregate", std::make_unique<AggregateOp>(), {t});
        } else {
            const TensorId z = g.add(name + ".aggregate", std::make_unique<AggregateOp>(), {h});
            y = g.add(name + ".linear", std::make_unique<LinearOp>(in, out, decay), {z});
        }
        BiasActivationOptions act{.bias = options.bias, .seed = options.seed};
        if (!last) {
            act.activation = Activation::relu;
            act.dropout = options.dropout;
            act.dropout_id = static_cast<std::uint64_t>(l) + 1;
        }
        h = g.add(name + ".act", std::make_unique<BiasActivationOp>(out, act), {y});
        if (!last) {
            g.mark_layer_input(h);
        }
        in = out;
    }
    g.set_output(h);
    return g;
}

std::string gcn_embedding_tensor(const GcnOptions& options) {
    return options.layers < 2 ? "" : "gcn" + std::to_string(options.layers - 2) + ".act";
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
