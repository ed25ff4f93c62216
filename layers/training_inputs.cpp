// TrainingInputs: uploads and views.
#include "layers/training_inputs.hpp"

namespace strata {
namespace {

Buffer<std::uint8_t> upload_mask(Backend& backend, const std::vector<std::uint8_t>& mask) {
    return Buffer<std::uint8_t>(backend, std::span<const std::uint8_t>(mask));
}

}  // namespace

TrainingInputs::TrainingInputs(Backend& backend, const LocalPart& part)
    : blocks(backend, part.graph),
      features(DenseMatrix::upload(backend, part.features)),
      labels(backend, std::span<const index_t>(part.labels)),
      train_mask(upload_mask(backend, part.train_mask)),
      val_mask(upload_mask(backend, part.val_mask)),
      test_mask(upload_mask(backend, part.test_mask)),
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

std::vector<MemoryLine> TrainingInputs::planned_lines(const LocalPart& part) {
    std::vector<MemoryLine> lines = GraphBlocks::planned_lines(part.graph);
    const auto rows = static_cast<std::int64_t>(part.labels.size());
    lines.push_back(
        {"features, labels, masks",
         static_cast<std::int64_t>(part.features.values.size() * sizeof(float)) +
             rows * static_cast<std::int64_t>(sizeof(index_t) + 3 * sizeof(std::uint8_t))});
    return lines;
}

}  // namespace strata
