// The model zoo: every model `strata train --model NAME` builds, each with the options it
// reads, its published recipe (the defaults) and its source (docs/models.md).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "layers/model_spec.hpp"
#include "src/nn/model_graph.hpp"

namespace strata {

/// A model ready for ModelParameters and an executor.
struct BuiltModel {
    ModelGraph graph;
    /// The tensor holding the last hidden layer (`strata predict --embeddings`); empty when
    /// the model has none.
    std::string embedding_tensor;
};

/// Training options of a recipe (the model options are in `spec`).
struct Recipe {
    ModelSpec spec;
    float lr = 0.01f;
    int epochs = 200;
    int patience = 0;                   ///< evaluations without improvement; 0 = off
    std::string select_by = "val_acc";  ///< val_acc or val_loss
    bool row_normalize = false;         ///< row-normalized features
};

struct ModelInfo {
    std::string name;
    std::string summary;               ///< one line for --help
    std::vector<std::string> options;  ///< ModelSpec fields it reads ("layers", "hidden", ...)
    Recipe recipe;                     ///< the published recipe on Cora (docs/models.md)
    BuiltModel (*build)(index_t in_features, index_t num_classes, const ModelSpec& spec) = nullptr;
};

/// Every model, in --help order.
[[nodiscard]] std::span<const ModelInfo> model_zoo();
/// The model called `name`; throws strata::Error "unknown model 'x' (known: gcn, ...)".
[[nodiscard]] const ModelInfo& find_model(const std::string& name);
/// Builds spec.model. Throws strata::Error on sizes the model rejects.
[[nodiscard]] BuiltModel build_model(const ModelSpec& spec, index_t in_features,
                                     index_t num_classes);

}  // namespace strata
