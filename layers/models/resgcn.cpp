// ResGCN+ (DeeperGCN's "res+" block, Li et al. 2020; PyG DeepGCNLayer(block='res+')) with a GCN
// convolution and LayerNorm, as GNNPipe trains it:
//   h = fc_in(X);  h = conv_0(h);
//   per layer l = 1..L-1:  h = h + conv_l(dropout(ReLU(LayerNorm_l(h))));
//   logits = fc_out(dropout(ReLU(LayerNorm_L(h)))),       conv(x) = Â x W + b.
#include <memory>

#include "layers/layer_norm_op.hpp"
#include "layers/models/model_builder.hpp"
#include "layers/models/models.hpp"

namespace strata {
namespace {

TensorId conv(ModelBuilder& b, const std::string& name, TensorId x, index_t out, float decay) {
    const TensorId z = b.linear(name + ".linear", b.aggregate(name + ".aggregate", x), out, decay);
    return b.act(name + ".bias", z, {.bias = true});
}

TensorId norm_act(ModelBuilder& b, const std::string& name, TensorId h, float dropout) {
    const TensorId n = b.graph().add(name + ".norm", std::make_unique<LayerNormOp>(b.cols(h)), {h});
    return b.act(name + ".act", n, {.activation = Activation::relu, .dropout = dropout});
}

}  // namespace

BuiltModel build_resgcn_plus(index_t in, index_t classes, const ModelSpec& s) {
    validate(s, "resgcn+");
    ModelBuilder b(s.seed);
    TensorId h =
        b.act("fc_in.bias", b.linear("fc_in.linear", b.input(in), s.hidden, s.weight_decay),
              {.bias = true});
    h = conv(b, "conv0", h, s.hidden, s.weight_decay);
    b.graph().mark_layer_input(h);
    for (int l = 1; l < s.layers; ++l) {
        const std::string name = "block" + std::to_string(l);
        const TensorId r =
            conv(b, name + ".conv", norm_act(b, name, h, s.dropout), s.hidden, s.weight_decay);
        h = b.add(name + ".residual", h, r);
        b.graph().mark_layer_input(h);
    }
    const TensorId r = norm_act(b, "out", h, s.dropout);
    const TensorId y =
        b.act("fc_out.bias", b.linear("fc_out.linear", r, classes, s.weight_decay), {.bias = true});
    b.graph().set_output(y);
    return {std::move(b.graph()), "out.act"};
}

}  // namespace strata
