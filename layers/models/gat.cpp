// GAT (Veličković et al., ICLR 2018; PetarV-/GAT, PyG GATConv): per hidden layer
//   h = dropout(ELU(GAT_heads(h)))  (heads concatenated), output GAT layer with its heads
//   averaged; input dropout on X, attention dropout inside each GAT layer. Attention runs over
//   each vertex's in-edges and itself: the pattern of A + I (layers/gat_op.hpp).
#include <memory>

#include "layers/gat_op.hpp"
#include "layers/models/model_builder.hpp"
#include "layers/models/models.hpp"

namespace strata {

BuiltModel build_gat(index_t in, index_t classes, const ModelSpec& s) {
    validate(s, "gat");
    ModelBuilder b(s.seed);
    TensorId h = b.dropout("input.dropout", b.input(in), s.dropout);
    std::string last;
    std::uint64_t attention_id = 1000;  // apart from the builder's dropout ids
    for (int l = 0; l < s.layers; ++l) {
        const bool out = l + 1 == s.layers;
        const std::string name = "gat" + std::to_string(l);
        const GatOptions options{.concat = !out,
                                 .negative_slope = s.negative_slope,
                                 .attention_dropout = s.attention_dropout,
                                 .bias = true,
                                 .weight_decay = s.weight_decay,
                                 .seed = s.seed,
                                 .dropout_id = attention_id++};
        const TensorId y =
            b.graph().add(name + ".attention",
                          std::make_unique<GatOp>(b.cols(h), out ? s.output_heads : s.heads,
                                                  out ? classes : s.hidden, options),
                          {h});
        if (out) {
            h = y;
        } else {
            h = b.act(name + ".act", y, {.activation = Activation::elu, .dropout = s.dropout});
            b.graph().mark_layer_input(h);
            last = name + ".act";
        }
    }
    b.graph().set_output(h);
    return {std::move(b.graph()), last};
}

}  // namespace strata
