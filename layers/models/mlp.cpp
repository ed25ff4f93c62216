// MLP: no graph at all, the control every benchmark needs.
//   h = dropout(X); per hidden layer: h = dropout(ReLU(h W + b)); logits = h W + b.
#include "layers/models/model_builder.hpp"
#include "layers/models/models.hpp"

namespace strata {

BuiltModel build_mlp(index_t in, index_t classes, const ModelSpec& s) {
    validate(s, "mlp");
    ModelBuilder b(s.seed);
    TensorId h = b.dropout("input.dropout", b.input(in), s.dropout);
    std::string last;
    for (int l = 0; l < s.layers; ++l) {
        const bool out = l + 1 == s.layers;
        const std::string name = "mlp" + std::to_string(l);
        const TensorId y = b.linear(name + ".linear", h, out ? classes : s.hidden, s.weight_decay);
        BiasActivationOptions act{.bias = true};
        if (!out) {
            act.activation = Activation::relu;
            act.dropout = s.dropout;
            last = name + ".act";
        }
        h = b.act(name + ".act", y, act);
        if (!out) {
            b.graph().mark_layer_input(h);
        }
    }
    b.graph().set_output(h);
    return {std::move(b.graph()), last};
}

}  // namespace strata
