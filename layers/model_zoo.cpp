// The zoo's table: names, options, recipes (sources in docs/models.md).
#include "layers/model_zoo.hpp"

#include <array>
#include <sstream>

#include "layers/models/models.hpp"
#include "src/base/error.hpp"

namespace strata {
namespace {

ModelSpec spec(const char* model, int layers, index_t hidden, float dropout, float weight_decay) {
    ModelSpec s;
    s.model = model;
    s.layers = layers;
    s.hidden = hidden;
    s.dropout = dropout;
    s.weight_decay = weight_decay;
    return s;
}

std::vector<ModelInfo> make_zoo() {
    std::vector<ModelInfo> zoo;
    {  // Kipf & Welling 2017: 2 layers, 16 hidden, dropout 0.5, L2 5e-4 on the first layer
        ModelInfo m{
            .name = "gcn",
            .summary = "GCN (Kipf & Welling 2017)",
            .options = {"layers", "hidden", "dropout", "weight_decay", "decay_all_layers", "bias"},
            .recipe = {.spec = spec("gcn", 2, 16, 0.5f, 5e-4f)},
            .build = build_gcn_model};
        zoo.push_back(std::move(m));
    }
    const std::vector<std::string> gcnii_options{
        "layers", "hidden", "dropout", "alpha", "lambda", "weight_decay", "conv_weight_decay"};
    // chennnM/GCNII semi.sh (Cora): 64 layers, 64 hidden, λ 0.5, α 0.1, dropout 0.6, lr 0.01,
    // wd 0.01 (convolutions) / 5e-4 (fc), 1500 epochs, patience 100 on val loss.
    Recipe gcnii{.spec = spec("gcnii", 64, 64, 0.6f, 5e-4f),
                 .lr = 0.01f,
                 .epochs = 1500,
                 .patience = 100,
                 .select_by = "val_loss",
                 .row_normalize = true};
    gcnii.spec.alpha = 0.1f;
    gcnii.spec.lambda = 0.5f;
    gcnii.spec.conv_weight_decay = 0.01f;
    zoo.push_back({.name = "gcnii",
                   .summary = "GCNII (Chen et al. 2020): initial residual and identity mapping",
                   .options = gcnii_options,
                   .recipe = gcnii,
                   .build = build_gcnii});
    Recipe star = gcnii;
    star.spec.model = "gcnii*";
    zoo.push_back({.name = "gcnii*",
                   .summary = "GCNII* (Chen et al. 2020, eq. 6): separate weights for t and h0",
                   .options = gcnii_options,
                   .recipe = star,
                   .build = build_gcnii_star});
    // No public-split ResGCN+ recipe exists (docs/models.md): GCN convolutions, LayerNorm,
    // 32 layers as GNNPipe; best by validation accuracy (its validation loss bottoms out within
    // ~40 epochs, before the accuracy: selecting by loss stopped 2 of 10 seeds below 63 %).
    zoo.push_back({.name = "resgcn+",
                   .summary = "ResGCN+ (DeeperGCN res+ block, GCN convolution, LayerNorm)",
                   .options = {"layers", "hidden", "dropout", "weight_decay"},
                   .recipe = {.spec = spec("resgcn+", 32, 64, 0.5f, 5e-4f),
                              .lr = 0.005f,
                              .epochs = 1000,
                              .patience = 100,
                              .select_by = "val_acc",
                              .row_normalize = true},
                   .build = build_resgcn_plus});
    // PGL citation_benchmark / PyG benchmark: K 10, α 0.1, hidden 64, dropout 0.5, lr 0.01,
    // wd 5e-4.
    Recipe appnp{.spec = spec("appnp", 2, 64, 0.5f, 5e-4f),
                 .lr = 0.01f,
                 .epochs = 1000,
                 .patience = 100,
                 .select_by = "val_loss",
                 .row_normalize = true};
    appnp.spec.alpha = 0.1f;
    appnp.spec.hops = 10;
    zoo.push_back({.name = "appnp",
                   .summary = "APPNP (Klicpera et al. 2019): MLP, then K steps of personalized "
                              "PageRank",
                   .options = {"hidden", "dropout", "alpha", "hops", "weight_decay"},
                   .recipe = appnp,
                   .build = build_appnp});
    zoo.push_back({.name = "sage",
                   .summary = "GraphSAGE, mean aggregator with root weight (Hamilton et al. 2017)",
                   .options = {"layers", "hidden", "dropout", "weight_decay"},
                   .recipe = {.spec = spec("sage", 2, 64, 0.5f, 5e-4f),
                              .lr = 0.01f,
                              .epochs = 200,
                              .select_by = "val_acc",
                              .row_normalize = true},
                   .build = build_sage});
    zoo.push_back({.name = "gin",
                   .summary = "GIN (Xu et al. 2019): sum aggregation, learnable epsilon, 2-layer "
                              "MLP",
                   .options = {"layers", "hidden", "dropout", "weight_decay"},
                   .recipe = {.spec = spec("gin", 2, 64, 0.5f, 5e-4f),
                              .lr = 0.01f,
                              .epochs = 200,
                              .select_by = "val_acc",
                              .row_normalize = true},
                   .build = build_gin});
    // PetarV-/GAT execute_cora.py: 8 heads x 8 hidden, output 1 head, dropout 0.6 on inputs
    // and attention, lr 0.005, L2 5e-4, patience 100.
    Recipe gat{.spec = spec("gat", 2, 8, 0.6f, 5e-4f),
               .lr = 0.005f,
               .epochs = 1000,
               .patience = 100,
               .select_by = "val_loss",
               .row_normalize = true};
    gat.spec.heads = 8;
    gat.spec.output_heads = 1;
    gat.spec.attention_dropout = 0.6f;
    gat.spec.negative_slope = 0.2f;
    zoo.push_back({.name = "gat",
                   .summary = "GAT (Velickovic et al. 2018): multi-head attention over in-edges",
                   .options = {"layers", "hidden", "heads", "output_heads", "dropout",
                               "attention_dropout", "negative_slope", "weight_decay"},
                   .recipe = gat,
                   .build = build_gat});
    zoo.push_back({.name = "mlp",
                   .summary = "MLP: no graph (the control)",
                   .options = {"layers", "hidden", "dropout", "weight_decay"},
                   .recipe = {.spec = spec("mlp", 2, 64, 0.5f, 5e-4f),
                              .lr = 0.01f,
                              .epochs = 200,
                              .select_by = "val_acc",
                              .row_normalize = true},
                   .build = build_mlp});
    return zoo;
}

}  // namespace

std::span<const ModelInfo> model_zoo() {
    static const std::vector<ModelInfo> zoo = make_zoo();
    return zoo;
}

const ModelInfo& find_model(const std::string& name) {
    for (const ModelInfo& m : model_zoo()) {
        if (m.name == name) {
            return m;
        }
    }
    std::ostringstream known;
    for (const ModelInfo& m : model_zoo()) {
        known << (known.tellp() > 0 ? ", " : "") << m.name;
    }
    STRATA_FAIL("unknown model '", name, "' (known: ", known.str(), ")");
}

BuiltModel build_model(const ModelSpec& spec, index_t in_features, index_t num_classes) {
    STRATA_CHECK(num_classes >= 2, "the dataset has ", num_classes, " classes, need at least 2");
    STRATA_CHECK(in_features >= 1, "the dataset has ", in_features, " features");
    return find_model(spec.model).build(in_features, num_classes, spec);
}

}  // namespace strata
