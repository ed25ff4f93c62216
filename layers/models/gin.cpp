// GIN (Xu et al., ICLR 2019; PyG GINConv with train_eps) for node classification:
//   per layer: h = dropout(ReLU(MLP((1+ε_l) h + Σ_{u ∈ N_in(v)} h_u))),
//   MLP = Linear → ReLU → Linear (hidden wide); logits = Linear(h) + b. Input dropout on X.
// The first MLP linear commutes with the sum, ((1+ε) h + A h) W = (1+ε)(h W) + A (h W), so the
// aggregation runs at the hidden width, not the input's.
#include <memory>

#include "layers/epsilon_add_op.hpp"
#include "layers/models/model_builder.hpp"
#include "layers/models/models.hpp"

namespace strata {

BuiltModel build_gin(index_t in, index_t classes, const ModelSpec& s) {
    validate(s, "gin");
    ModelBuilder b(s.seed);
    b.graph().set_normalization(Normalization::sum);
    TensorId h = b.dropout("input.dropout", b.input(in), s.dropout);
    std::string last;
    for (int l = 0; l < s.layers; ++l) {
        const std::string name = "gin" + std::to_string(l);
        const TensorId z = b.linear(name + ".mlp0.linear", h, s.hidden, s.weight_decay);
        const TensorId a = b.aggregate(name + ".aggregate", z);
        const TensorId sum =
            b.graph().add(name + ".epsilon", std::make_unique<EpsilonAddOp>(), {z, a});
        const TensorId u =
            b.act(name + ".mlp0.act", sum, {.bias = true, .activation = Activation::relu});
        h = b.act(name + ".act", b.linear(name + ".mlp1.linear", u, s.hidden, s.weight_decay),
                  {.bias = true, .activation = Activation::relu, .dropout = s.dropout});
        b.graph().mark_layer_input(h);
        last = name + ".act";
    }
    const TensorId y =
        b.act("out.bias", b.linear("out.linear", h, classes, s.weight_decay), {.bias = true});
    b.graph().set_output(y);
    return {std::move(b.graph()), last};
}

}  // namespace strata
