// TrainingInputs: uploads.
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
      data{.features = &features,
           .labels = Buffer<index_t>(backend, std::span<const index_t>(part.labels)),
           .train_mask = upload_mask(backend, part.train_mask),
           .val_mask = upload_mask(backend, part.val_mask),
           .test_mask = upload_mask(backend, part.test_mask),
           .global_train = part.global_train} {}

}  // namespace strata
