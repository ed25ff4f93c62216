// Trainer: one full-batch epoch = zero grads → forward → loss → backward (+ gradient
// all-reduce per layer, overlapping the next layer's backward) → optimizer step → evaluation.
#pragma once

#include <cstdint>

#include "src/comm/communicator.hpp"
#include "src/nn/model.hpp"
#include "src/nn/optimizer.hpp"

namespace strata {

/// This rank's rows of the inputs, in backend memory, plus global counts for normalization.
struct TrainData {
    const DenseMatrix* features = nullptr;  ///< rows x F
    Buffer<index_t> labels;                 ///< rows, -1 = unlabeled
    Buffer<std::uint8_t> train_mask;
    Buffer<std::uint8_t> val_mask;
    Buffer<std::uint8_t> test_mask;
    std::int64_t global_train = 0;  ///< number of training vertices over all ranks
};

/// Metrics of one epoch, global over ranks (identical on every rank).
struct EpochStats {
    std::int64_t epoch = 0;
    double loss = 0.0;  ///< mean cross-entropy over training vertices (training forward)
    double train_acc = 0.0;
    double val_acc = 0.0;
    double test_acc = 0.0;
    double val_loss = 0.0;
    double epoch_s = 0.0;    ///< training step + evaluation, max over ranks
    double train_s = 0.0;    ///< training step only (forward, backward, update), max over ranks
    double eval_s = 0.0;     ///< evaluation forward pass and metrics, max over ranks
    double wait_s = 0.0;     ///< time blocked on communication, max over ranks
    double compute_s = 0.0;  ///< epoch_s - wait_s of the slowest rank
    std::int64_t halo_bytes = 0;       ///< halo-exchange payload sent, summed over ranks
    std::int64_t allreduce_bytes = 0;  ///< all-reduce payload, summed over ranks
    std::int64_t peak_rss_bytes = 0;   ///< max over ranks
};

class Trainer {
public:
    Trainer(Model& model, Optimizer& optimizer, Backend& backend, Communicator& comm,
            TrainData& data);
    /// Trains one epoch (dropout keyed by `epoch`) and evaluates the updated model.
    EpochStats train_epoch(std::int64_t epoch);
    /// Evaluation only: accuracies and val loss of the current parameters.
    EpochStats evaluate();

private:
    void evaluate_into(EpochStats& stats);

    Model& model_;
    Optimizer& optimizer_;
    Backend& backend_;
    Communicator& comm_;
    TrainData& data_;
    DenseMatrix dlogits_;
};

}  // namespace strata
