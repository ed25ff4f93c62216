// TrainingInputs: a rank's LocalPart uploaded once to a backend — the model's graph operator
// (built here from the part's raw adjacency), features, labels and the selected split's masks
// (LocalPart::split) — and the views an executor reads (TrainingData).
#pragma once

#include <memory>
#include <vector>

#include "layers/graph_blocks.hpp"
#include "layers/sparse_features.hpp"
#include "partition/local_normalize.hpp"
#include "partition/local_part.hpp"
#include "src/nn/executor.hpp"
#include "src/tensor/dense_matrix.hpp"

namespace strata {

struct TrainingInputs {
    /// What the upload takes, made before anything is allocated: the model's operator built
    /// from the part's raw graph (normalized(part.graph, normalization)), its blocks' layout
    /// and the memory-plan lines (backend bytes).
    struct Plan {
        Normalization normalization = Normalization::symmetric;
        FeatureStorage features = FeatureStorage::dense;
        LocalGraph graph_operator;  ///< what GraphBlocks uploads
        GraphBlocks::Layout graph;
        bool rounding_ids = false;  ///< GraphBlocks keeps the send and halo rows' global ids
        std::vector<MemoryLine> lines;
    };
    /// The features are uploaded as `features` says (sparse: CSR, layers/sparse_features.hpp).
    [[nodiscard]] static Plan plan(const LocalPart& part, Normalization normalization,
                                   FeatureStorage features = FeatureStorage::dense);

    /// Uploads everything as `plan` (= plan(part, n)) says; `part` may be released afterwards
    /// (nothing points into it or into the plan).
    TrainingInputs(Backend& backend, const LocalPart& part, const Plan& plan);
    TrainingInputs(Backend& backend, const LocalPart& part, Normalization normalization)
        : TrainingInputs(backend, part, plan(part, normalization)) {}

    /// Views for an executor (valid while this object lives).
    [[nodiscard]] TrainingData data() const;

    GraphBlocks blocks;
    DenseMatrix features;                             ///< num_owned x F; empty when stored sparse
    std::unique_ptr<SparseFeatures> sparse_features;  ///< null when stored dense
    Buffer<index_t> labels;
    Buffer<std::uint8_t> train_mask;
    Buffer<std::uint8_t> val_mask;
    Buffer<std::uint8_t> test_mask;
    std::int64_t global_train = 0;
};

}  // namespace strata
