// Executor: drives a model's training step and evaluation, between the model (ops, parameters)
// and the training loop (training/fit.hpp). The full-graph executor
// (full_graph_executor.hpp) is exact; a layer-pipelined executor can sit beside it without
// touching models or the loop.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "src/nn/graph_operator.hpp"
#include "src/nn/sparse_input.hpp"
#include "src/tensor/matrix_view.hpp"

namespace strata {

/// This rank's rows of the data a model trains on, in backend memory. Views only: the owner
/// (e.g. layers/training_inputs.hpp) outlives the executor.
struct TrainingData {
    std::vector<ConstMatrixView> inputs;       ///< one per ModelGraph input, num_rows x cols
    std::span<const index_t> labels;           ///< num_rows, -1 = unlabeled
    std::span<const std::uint8_t> train_mask;  ///< num_rows, 0/1
    std::span<const std::uint8_t> val_mask;
    std::span<const std::uint8_t> test_mask;
    std::span<const global_id> row_ids;  ///< original id of each row (dropout keys)
    std::int64_t global_train = 0;       ///< training vertices over all ranks
    /// Input 0 as CSR when the features are stored sparse (inputs[0] then has no data; only a
    /// SparseLinearOp may read it). Null: every input is dense.
    const SparseInput* sparse_input = nullptr;
};

/// Global metrics of one evaluation (identical on every rank).
struct Evaluation {
    double train_acc = 0.0;
    double val_acc = 0.0;
    double test_acc = 0.0;
    double train_loss = 0.0;
    double val_loss = 0.0;
    double test_loss = 0.0;
    /// Two-class tasks only (binary): ROC-AUC of the class-1 score on val and test (NaN when a
    /// set lacks one of the classes).
    bool binary = false;
    double val_auc = 0.0;
    double test_auc = 0.0;
};

/// One line of a memory plan: what is held and how many bytes (this rank).
struct MemoryLine {
    std::string what;
    std::int64_t bytes = 0;
};

/// One training step of a layer-pipeline executor (pipeline_executor.hpp), global over ranks.
struct PipelineEpochStats {
    std::int64_t stage_bytes = 0;  ///< training stage-to-stage payload (forward + backward), all
                                   ///< ranks; = 2 (S-1 cuts summed) x |V| x cut widths x 4
    std::int64_t way_bytes = 0;    ///< hybrid: mirror rows exchanged between the ways of a
                                   ///< stage before aggregations (forward + backward), all ranks
    /// Of stage_bytes + way_bytes, those sent to ranks on another node (Communicator::node_of).
    std::int64_t inter_node_bytes = 0;
    double bubble_s = 0.0;      ///< max over ranks: waiting for the first chunk of each wave
    double stage_wait_s = 0.0;  ///< max over ranks: all waits on stage-to-stage receives
    int chunks = 1;             ///< chunks in flight this step (the guard may lower it)
    int snapshot_period = 0;    ///< historical-embedding snapshot period (0: off)
};

/// Where one training step's time went on this rank (`strata train --profile`): every schedule
/// step timed with the backend synchronized before and after it; `other` is the rest, so the
/// parts add up to the step (train_s). Seconds.
struct PhaseTimes {
    double gemm = 0.0;          ///< linear ops (x W, dW, dx), incl. a folded backward's linear
    double aggregation = 0.0;   ///< aggregations (SpMM, packing, scatter) less their exposed wait
    double attention = 0.0;     ///< attention ops (GAT) less their exposed wait
    double elementwise = 0.0;   ///< pointwise ops: bias, activation, dropout, norms, sums
    double loss = 0.0;          ///< softmax cross-entropy and its gradient
    double exposed_wait = 0.0;  ///< blocked on halos and on the gradient all-reduces
    double optimizer = 0.0;     ///< the parameter update (timed by fit, not the executor)
    /// The rest of the training step (set by fit): zeroing gradients, starting the all-reduces,
    /// the loss's all-reduce, the host between steps; with the others it adds up to train_s.
    double other = 0.0;
};

class Executor {
public:
    virtual ~Executor() = default;
    /// Forward (dropout keyed by `epoch`), loss over the training mask, backward. On return the
    /// parameter gradients are complete and summed over ranks; the parameters are unchanged.
    /// Returns the mean training loss over all ranks.
    virtual double train_step(std::int64_t epoch) = 0;
    /// Forward without dropout and without keeping anything for backward; global metrics.
    virtual Evaluation evaluate() = 0;
    /// What this executor allocated, planned before allocating (its lines of the run's plan).
    [[nodiscard]] virtual std::vector<MemoryLine> memory_plan() const = 0;
    /// Halo payload sent so far by this rank, by purpose (recomputation counted apart).
    [[nodiscard]] virtual HaloBytes halo_bytes() const = 0;
    /// Layout-switch payload sent so far by this rank (the feature grid's all-to-all), by purpose.
    [[nodiscard]] virtual HaloBytes switch_bytes() const { return {}; }
    /// The last train_step's phases when it was built to profile them; std::nullopt otherwise.
    [[nodiscard]] virtual std::optional<PhaseTimes> phase_times() const { return std::nullopt; }
    /// The last train_step's pipeline figures; std::nullopt for an executor without stages.
    [[nodiscard]] virtual std::optional<PipelineEpochStats> pipeline_epoch() const {
        return std::nullopt;
    }
};

}  // namespace strata
