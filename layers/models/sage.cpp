// GraphSAGE, mean aggregator with root weight (Hamilton et al. 2017; PyG SAGEConv):
//   per layer: y = mean_{u ∈ N_in(v)} h_u W_l + h_v W_r + b, then ReLU and dropout between
//   layers; input dropout on X. The mean is D^-1 A (no self loop); it commutes with W_l, so
//   the aggregation runs at the narrower of the two widths.
#include "layers/models/model_builder.hpp"
#include "layers/models/models.hpp"

namespace strata {

BuiltModel build_sage(index_t in, index_t classes, const ModelSpec& s) {
    validate(s, "sage");
    ModelBuilder b(s.seed);
    b.graph().set_normalization(Normalization::mean);
    TensorId h = b.dropout("input.dropout", b.input(in), s.dropout);
    std::string last;
    for (int l = 0; l < s.layers; ++l) {
        const bool out_layer = l + 1 == s.layers;
        const index_t out = out_layer ? classes : s.hidden;
        const std::string name = "sage" + std::to_string(l);
        TensorId neighbours = -1;
        if (out < b.cols(h)) {
            neighbours = b.aggregate(name + ".aggregate",
                                     b.linear(name + ".linear", h, out, s.weight_decay));
        } else {
            neighbours = b.linear(name + ".linear", b.aggregate(name + ".aggregate", h), out,
                                  s.weight_decay);
        }
        const TensorId root = b.linear(name + ".root", h, out, s.weight_decay);
        BiasActivationOptions act{.bias = true};
        if (!out_layer) {
            act.activation = Activation::relu;
            act.dropout = s.dropout;
            last = name + ".act";
        }
        h = b.act(name + ".act", b.add(name + ".sum", neighbours, root), act);
        if (!out_layer) {
            b.graph().mark_layer_input(h);
        }
    }
    b.graph().set_output(h);
    return {std::move(b.graph()), last};
}

}  // namespace strata
