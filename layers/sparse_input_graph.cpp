// The sparse-input rewrite of a model graph.
#include "layers/sparse_input_graph.hpp"

#include <map>
#include <memory>

#include "layers/bias_activation_op.hpp"
#include "layers/linear_op.hpp"
#include "layers/sparse_linear_op.hpp"
#include "src/base/error.hpp"

namespace strata {
namespace {

/// The op as a bare dropout (no bias, no activation), or null.
const BiasActivationOp* bare_dropout(const Op& op) {
    const auto* b = dynamic_cast<const BiasActivationOp*>(&op);
    return b != nullptr && !b->options().bias && b->options().activation == Activation::none
               ? b
               : nullptr;
}

}  // namespace

std::string sparse_input_blocker(const ModelGraph& model) {
    if (model.inputs().size() != 1) {
        return "the model has " + std::to_string(model.inputs().size()) + " inputs";
    }
    const TensorId features = model.inputs()[0];
    for (const auto& [node, input] : model.consumers(features)) {
        (void)input;
        const Node& n = model.node(node);
        if (dynamic_cast<const LinearOp*>(n.op.get()) != nullptr) {
            continue;
        }
        if (bare_dropout(*n.op) == nullptr || n.output == model.output()) {
            return "its node " + n.name + " (" + n.op->describe() +
                   ") reads the input features other than through a linear layer";
        }
        for (const auto& [reader, slot] : model.consumers(n.output)) {
            (void)slot;
            const Node& r = model.node(reader);
            if (dynamic_cast<const LinearOp*>(r.op.get()) == nullptr) {
                return "its node " + r.name + " (" + r.op->describe() +
                       ") reads the input features (after dropout) other than through a linear "
                       "layer";
            }
        }
    }
    return "";
}

ModelGraph with_sparse_input(ModelGraph& model) {
    const std::string blocker = sparse_input_blocker(model);
    STRATA_CHECK(blocker.empty(), "sparse features: ", blocker);
    const TensorId features = model.inputs()[0];
    ModelGraph out;
    out.set_normalization(model.normalization());
    std::map<TensorId, TensorId> renamed;  // old tensor -> new tensor
    renamed[features] = out.add_input(model.tensor(features).name, model.tensor(features).cols);
    std::map<TensorId, SparseLinearOptions> dropped;  // a fused dropout's output -> its key
    dropped[features] = {};
    for (int i = 0; i < model.num_nodes(); ++i) {
        Node& node = model.node(i);
        const TensorId x = node.inputs.empty() ? -1 : node.inputs[0];
        if (x == features) {
            if (const BiasActivationOp* d = bare_dropout(*node.op)) {
                dropped[node.output] = {.dropout = d->options().dropout,
                                        .seed = d->options().seed,
                                        .dropout_id = d->options().dropout_id};
                continue;
            }
        }
        if (const auto fused = dropped.find(x); fused != dropped.end()) {
            const auto& linear = dynamic_cast<const LinearOp&>(*node.op);
            renamed[node.output] =
                out.add(node.name,
                        std::make_unique<SparseLinearOp>(linear.in(), linear.out(),
                                                         linear.weight_decay(), fused->second),
                        {renamed.at(features)});
            continue;
        }
        std::vector<TensorId> inputs;
        for (const TensorId t : node.inputs) {
            inputs.push_back(renamed.at(t));
        }
        renamed[node.output] = out.add(node.name, std::move(node.op), std::move(inputs));
    }
    for (const auto& [from, to] : renamed) {
        if (model.tensor(from).layer_input) {
            out.mark_layer_input(to);
        }
    }
    out.set_output(renamed.at(model.output()));
    return out;
}

}  // namespace strata
