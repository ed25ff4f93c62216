// TrainingInputs: uploads and views.
#include "layers/training_inputs.hpp"

namespace strata {
namespace {

Buffer<std::uint8_t> upload_mask(Backend& backend, std::span<const std::uint8_t> mask) {
    return Buffer<std::uint8_t>(backend, mask);
}

}  // namespace

TrainingInputs::TrainingInputs(Backend& backend, const LocalPart& part, const Plan& plan)
    : blocks(backend, plan.graph_operator, plan.graph, plan.rounding_ids),
      features(plan.features == FeatureStorage::dense ? DenseMatrix::upload(backend, part.features)
                                                      : DenseMatrix()),
      labels(backend, std::span<const index_t>(part.labels)),
      train_mask(upload_mask(backend, part.split_of(part.train_mask))),
      val_mask(upload_mask(backend, part.split_of(part.val_mask))),
      test_mask(upload_mask(backend, part.split_of(part.test_mask))),
      global_train(part.global_train) {
    if (plan.features == FeatureStorage::sparse) {
        sparse_features = std::make_unique<SparseFeatures>(backend, part.features);
    }
}

TrainingData TrainingInputs::data() const {
    const ConstMatrixView dense =
        sparse_features ? ConstMatrixView{nullptr, static_cast<index_t>(labels.size()),
                                          sparse_features->view().x->cols()}
                        : features.view();
    return {.inputs = {dense},
            .labels = labels.span(),
            .train_mask = train_mask.span(),
            .val_mask = val_mask.span(),
            .test_mask = test_mask.span(),
            .row_ids = blocks.row_ids(),
            .global_train = global_train,
            .sparse_input = sparse_features ? &sparse_features->view() : nullptr};
}

TrainingInputs::Plan TrainingInputs::plan(const LocalPart& part, Normalization normalization,
                                          FeatureStorage features) {
    Plan plan;
    plan.normalization = normalization;
    plan.features = features;
    plan.graph_operator = normalized(part.graph, normalization);
    plan.graph = GraphBlocks::plan(plan.graph_operator);
    const auto rows = static_cast<std::int64_t>(part.labels.size());
    const std::int64_t feature_bytes =
        features == FeatureStorage::sparse
            ? SparseFeatures::bytes(static_cast<index_t>(rows), part.features.cols,
                                    count_nonzeros(part.features))
            : static_cast<std::int64_t>(part.features.values.size() * sizeof(float));
    plan.lines = {{"graph blocks (" + std::string(to_string(normalization)) +
                       " operator and transposes, send rows, row ids)",
                   plan.graph.bytes},
                  {features == FeatureStorage::sparse
                       ? "features (sparse: CSR, its transpose, dropout scratch), labels, masks"
                       : "features, labels, masks",
                   feature_bytes + rows * static_cast<std::int64_t>(sizeof(index_t) +
                                                                    3 * sizeof(std::uint8_t))}};
    return plan;
}

}  // namespace strata
