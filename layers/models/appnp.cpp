// APPNP (Klicpera et al., ICLR 2019; gasteigerjo/ppnp): predict, then propagate.
//   H = Linear2(dropout(ReLU(Linear1(dropout(X)))))    Linear1 without bias
//   Z_0 = H,  Z_k = (1-α) Â Z_{k-1} + α H   for k = 1..K;  logits = Z_K.
// Propagation runs at the class width, so its halo exchange is C columns per hop.
#include "layers/models/model_builder.hpp"
#include "layers/models/models.hpp"

namespace strata {

BuiltModel build_appnp(index_t in, index_t classes, const ModelSpec& s) {
    validate(s, "appnp");
    ModelBuilder b(s.seed);
    TensorId x = b.dropout("mlp0.dropout", b.input(in), s.dropout);
    x = b.act("mlp0.act", b.linear("mlp0.linear", x, s.hidden, s.weight_decay),
              {.activation = Activation::relu, .dropout = s.dropout});
    const TensorId h =
        b.act("mlp1.bias", b.linear("mlp1.linear", x, classes, s.weight_decay), {.bias = true});
    b.graph().mark_layer_input(h);
    TensorId z = h;
    for (int k = 1; k <= s.hops; ++k) {
        const std::string name = "hop" + std::to_string(k);
        z = b.add(name + ".teleport", b.aggregate(name + ".aggregate", z), h, 1.0f - s.alpha,
                  s.alpha);
        b.graph().mark_layer_input(z);
    }
    b.graph().set_output(z);
    return {std::move(b.graph()), "mlp0.act"};
}

}  // namespace strata
