// TrainingInputs: uploads and views.
#include "layers/training_inputs.hpp"

namespace strata {
namespace {

Buffer<std::uint8_t> upload_mask(Backend& backend, std::span<const std::uint8_t> mask) {
    return Buffer<std::uint8_t>(backend, mask);
}

}  // namespace

TrainingInputs::TrainingInputs(Backend& backend, const LocalPart& part, const Plan& plan)
    : blocks(backend, plan.graph_operator, plan.graph),
      features(DenseMatrix::upload(backend, part.features)),
      labels(backend, std::span<const index_t>(part.labels)),
      train_mask(upload_mask(backend, part.split_of(part.train_mask))),
      val_mask(upload_mask(backend, part.split_of(part.val_mask))),
      test_mask(upload_mask(backend, part.split_of(part.test_mask))),
      global_train(part.global_train) {}

TrainingData TrainingInputs::data() const {
    return {.inputs = {features.view()},
            .labels = labels.span(),
            .train_mask = train_mask.span(),
            .val_mask = val_mask.span(),
            .test_mask = test_mask.span(),
            .row_ids = blocks.row_ids(),
            .global_train = global_train};
}

TrainingInputs::Plan TrainingInputs::plan(const LocalPart& part, Normalization normalization) {
    Plan plan;
    plan.normalization = normalization;
    plan.graph_operator = normalized(part.graph, normalization);
    plan.graph = GraphBlocks::plan(plan.graph_operator);
    const auto rows = static_cast<std::int64_t>(part.labels.size());
    plan.lines = {
        {"graph blocks (" + std::string(to_string(normalization)) +
             " operator and transposes, send rows, row ids)",
         plan.graph.bytes},
        {"features, labels, masks",
         static_cast<std::int64_t>(part.features.values.size() * sizeof(float)) +
             rows * static_cast<std::int64_t>(sizeof(index_t) + 3 * sizeof(std::uint8_t))}};
    return plan;
}

}  // namespace strata
