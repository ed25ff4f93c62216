// GCNII (Chen et al., ICML 2020, chennnM/GCNII model.py), and GCNII* as the paper's eq. (6)
// (not the authors' --variant code, which multiplies [t, h0] by one weight without the (1-α)
// and α inside; docs/models.md):
//   h0 = ReLU(fc_in(dropout(X)));  per layer l = 1..L:
//     t = Â dropout(h),  s = (1-α) t + α h0,  θ_l = ln(λ/l + 1),
//     GCNII:  h = ReLU(θ_l (s W_l) + (1-θ_l) s)
//     GCNII*: h = ReLU(θ_l ((1-α) t W1_l + α h0 W2_l) + (1-θ_l) s)
//   logits = fc_out(dropout(h)).
// W_l: hidden x hidden, no bias, L2 conv_weight_decay; fc_in/fc_out L2 weight_decay.
#include <cmath>

#include "layers/models/model_builder.hpp"
#include "layers/models/models.hpp"

namespace strata {
namespace {

BuiltModel build(index_t in, index_t classes, const ModelSpec& s, bool star) {
    validate(s, "gcnii");
    ModelBuilder b(s.seed);
    TensorId x = b.input(in);
    x = b.dropout("fc_in.dropout", x, s.dropout);
    const TensorId h0 = b.act("fc_in.act", b.linear("fc_in.linear", x, s.hidden, s.weight_decay),
                              {.bias = true, .activation = Activation::relu});
    b.graph().mark_layer_input(h0);
    TensorId h = h0;
    std::string last;
    for (int l = 1; l <= s.layers; ++l) {
        const std::string name = "conv" + std::to_string(l);
        const float theta = std::log(s.lambda / static_cast<float>(l) + 1.0f);
        const TensorId t =
            b.aggregate(name + ".aggregate", b.dropout(name + ".dropout", h, s.dropout));
        const TensorId sum = b.add(name + ".residual", t, h0, 1.0f - s.alpha, s.alpha);
        TensorId v = -1;
        if (!star) {
            const TensorId u = b.linear(name + ".linear", sum, s.hidden, s.conv_weight_decay);
            v = b.add(name + ".identity", u, sum, theta, 1.0f - theta);
        } else {
            const TensorId u1 = b.linear(name + ".linear1", t, s.hidden, s.conv_weight_decay);
            const TensorId u2 = b.linear(name + ".linear2", h0, s.hidden, s.conv_weight_decay);
            const TensorId w =
                b.add(name + ".mix", u1, u2, theta * (1.0f - s.alpha), theta * s.alpha);
            v = b.add(name + ".identity", w, sum, 1.0f, 1.0f - theta);
        }
        h = b.act(name + ".act", v, {.activation = Activation::relu});
        b.graph().mark_layer_input(h);
        last = name + ".act";
    }
    const TensorId d = b.dropout("fc_out.dropout", h, s.dropout);
    const TensorId y =
        b.act("fc_out.bias", b.linear("fc_out.linear", d, classes, s.weight_decay), {.bias = true});
    b.graph().set_output(y);
    return {std::move(b.graph()), last};
}

}  // namespace

BuiltModel build_gcnii(index_t in, index_t classes, const ModelSpec& spec) {
    return build(in, classes, spec, false);
}

BuiltModel build_gcnii_star(index_t in, index_t classes, const ModelSpec& spec) {
    return build(in, classes, spec, true);
}

}  // namespace strata
