// predict: a trained model's outputs for every vertex, on any number of ranks — the checkpoint's
// best weights over the same prepared rank a training run builds (training/prepare.hpp), in
// evaluation mode (no dropout): this rank's logits (the model's output layer, before softmax),
// their argmax, optionally the last hidden layer, and the accuracy on the split's masks.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/tensor/host_matrix.hpp"
#include "training/checkpoint.hpp"
#include "training/prepare.hpp"
#include "training/runtime.hpp"

namespace strata {

/// The configuration to rebuild a checkpoint's model and input on `data`: the checkpoint's own
/// (its model, feature normalisation, partitioning of a .h5, seed), graph parallelism (the
/// evaluation is exact and full-graph whatever layout trained it), split `split_index`.
[[nodiscard]] RunConfig prediction_config(const Checkpoint& checkpoint, const std::string& data,
                                          int split_index, const RuntimeOptions& runtime);

struct Predictions {
    std::vector<global_id> ids;            ///< the original id of each of this rank's rows
    HostMatrix logits;                     ///< rows x classes
    std::vector<std::int64_t> predicted;   ///< argmax of each row (the first maximum)
    std::optional<HostMatrix> embeddings;  ///< the last hidden layer, when asked for
    /// Correct and counted predictions on the train, val and test masks, summed over ranks.
    std::array<std::int64_t, 6> counts{};
    int split = 0;
    global_id vertices = 0;  ///< of the whole graph
    index_t classes = 0;
};

/// Collective. Checks that `checkpoint` (read from `checkpoint_path`, broadcast to every rank)
/// belongs to this model and dataset (rank 0: check_identity, model_and_dataset), then evaluates
/// its best weights. `embeddings`: also the model's last hidden layer (an OptionError when it has
/// none). Throws strata::Error as prepare() and check_identity do.
[[nodiscard]] Predictions predict(const Checkpoint& checkpoint, const std::string& checkpoint_path,
                                  const RunConfig& config, Runtime& runtime, bool embeddings,
                                  const DataInput& input = {});

/// Index of the first maximum of each row (the rule the trainer's accuracy uses).
[[nodiscard]] std::vector<std::int64_t> argmax_rows(const HostMatrix& m);

}  // namespace strata
