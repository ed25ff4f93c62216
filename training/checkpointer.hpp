// Checkpointer: the hook that writes a checkpoint every N epochs, at the last epoch and when the
// run stops (early stop, signal); and restore(), its inverse for --resume. A layer-pipeline run
// adds every rank's state (gathered to the writer at each save).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "src/nn/model_parameters.hpp"
#include "src/nn/optimizer.hpp"
#include "training/best_tracker.hpp"
#include "training/checkpoint.hpp"
#include "training/fit.hpp"

namespace strata {

/// What a layer-pipeline run adds to a checkpoint, asked of every rank at every save.
struct PipelineCheckpointState {
    PipelineHistory history{};        ///< this rank's PipelineExecutor::history()
    std::optional<GuardState> guard;  ///< identical on every rank: rank 0's is saved
};

class Checkpointer final : public FitHook {
public:
    /// `base` carries the identity and how to rebuild the model; rank `root` writes (the
    /// parameters are replicated), the others only take part in nothing (no collective here).
    Checkpointer(CheckpointDir dir, int every, bool root, Checkpoint base,
                 ModelParameters& parameters, Optimizer& optimizer, const BestTracker& best);

    /// Layer-pipeline runs: at every save every rank calls `source`, and the histories are
    /// gathered to rank 0, which must be the writing rank (a collective: every rank saves at the
    /// same epochs). Without it (graph parallelism) a save involves no communication.
    void add_pipeline_state(Communicator& comm, std::function<PipelineCheckpointState()> source);

    /// Compressed halos with the precision guard: at every save, what `switched` returns ("fp32"
    /// once the guard switched the run, else empty) goes into the checkpoint.
    void add_precision_switch(std::function<std::string()> switched) {
        switched_ = std::move(switched);
    }

    void end_epoch(const EpochStats& stats, FitState& state) override;
    [[nodiscard]] const CheckpointDir& dir() const { return dir_; }

private:
    CheckpointDir dir_;
    int every_;
    bool root_;
    Checkpoint state_;
    ModelParameters& parameters_;
    Optimizer& optimizer_;
    const BestTracker& best_;
    Communicator* comm_ = nullptr;
    std::function<PipelineCheckpointState()> pipeline_;
    std::function<std::string()> switched_;
};

/// Puts a (broadcast) checkpoint's state back: weights, optimizer, best weights, and the loop's
/// state (epoch, best epoch, history, early stop).
void restore(const Checkpoint& checkpoint, ModelParameters& parameters, Optimizer& optimizer,
             BestTracker& best, FitState& state);

}  // namespace strata
