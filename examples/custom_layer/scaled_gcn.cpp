// The example model's assembly: nodes in topological order, each naming its input tensors.
#include "scaled_gcn.hpp"

#include <memory>

#include "column_scale_op.hpp"
#include "layers/aggregate_op.hpp"
#include "layers/bias_activation_op.hpp"
#include "layers/linear_op.hpp"

namespace example {

using strata::Activation;
using strata::AggregateOp;
using strata::BiasActivationOp;
using strata::BiasActivationOptions;
using strata::LinearOp;
using strata::TensorId;

strata::ModelGraph build_scaled_gcn(strata::index_t in_features, strata::index_t num_classes,
                                    const ScaledGcnOptions& options) {
    strata::ModelGraph g;
    TensorId h = g.add_input("features", in_features);
    // A bare dropout (no bias, no activation): skipped in evaluation. Dropout masks are keyed by
    // (seed, epoch, dropout_id, vertex, column): each dropout of the model gets its own id.
    h = g.add("l0.dropout",
              std::make_unique<BiasActivationOp>(
                  in_features,
                  BiasActivationOptions{
                      .dropout = options.dropout, .seed = options.seed, .dropout_id = 0}),
              {h});
    h = g.add("l0.linear",
              std::make_unique<LinearOp>(in_features, options.hidden, options.weight_decay), {h});
    h = g.add("l0.aggregate", std::make_unique<AggregateOp>(), {h});
    h = g.add("l0.scale", std::make_unique<ColumnScaleOp>(options.hidden, options.weight_decay),
              {h});
    h = g.add("l0.act",
              std::make_unique<BiasActivationOp>(
                  options.hidden, BiasActivationOptions{.bias = true,
                                                        .activation = Activation::relu,
                                                        .dropout = options.dropout,
                                                        .seed = options.seed,
                                                        .dropout_id = 1}),
              {h});
    g.mark_layer_input(h);  // what `Recompute::all` keeps
    h = g.add("l1.linear", std::make_unique<LinearOp>(options.hidden, num_classes, 0.0f), {h});
    h = g.add("l1.aggregate", std::make_unique<AggregateOp>(), {h});
    h = g.add("l1.act",
              std::make_unique<BiasActivationOp>(num_classes, BiasActivationOptions{.bias = true}),
              {h});
    g.set_output(h);
    return g;
}

}  // namespace example
