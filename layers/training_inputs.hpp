// TrainingInputs: a rank's LocalPart uploaded once to a backend — graph blocks, features,
// labels and masks — in the form Model/Trainer consume.
#pragma once

#include "layers/graph_blocks.hpp"
#include "partition/local_part.hpp"
#include "src/nn/trainer.hpp"

namespace strata {

/// Not movable: `data.features` points at `features`.
struct TrainingInputs {
    TrainingInputs(Backend& backend, const LocalPart& part);
    TrainingInputs(const TrainingInputs&) = delete;
    TrainingInputs& operator=(const TrainingInputs&) = delete;

    GraphBlocks blocks;
    DenseMatrix features;  ///< num_owned x F
    TrainData data;
};

}  // namespace strata
