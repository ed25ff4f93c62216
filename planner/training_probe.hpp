// A training run for calibrate's fits: a GCN 3 x hidden on a generated graph, built once and
// trained a few epochs per round (the epoch count continues across rounds), with the partition
// statistics to predict it with. One round's figures: the median epoch and the median aggregation
// phase of the training step (as --profile measures it) over the round's timed epochs.
#pragma once

#include <cstdint>
#include <memory>

#include "layers/model_zoo.hpp"
#include "planner/partition_stats.hpp"
#include "planner/timed_rounds.hpp"
#include "src/device/cpu/cpu_backend.hpp"

namespace strata::planner {

class TrainingProbe {
public:
    /// Generates the graph (`vertices`, `degree` edges per vertex, `features`, 16 classes,
    /// seed 3) and builds the model, executor and optimizer on `backend`.
    TrainingProbe(CpuBackend& backend, std::int64_t vertices, double degree, index_t features,
                  index_t hidden);
    ~TrainingProbe();
    TrainingProbe(const TrainingProbe&) = delete;
    TrainingProbe& operator=(const TrainingProbe&) = delete;

    struct Round {
        double epoch_s = 0.0;
        double aggregation_s = 0.0;
    };
    /// One untimed epoch (caches, after the other probes), then `epochs` timed: their medians.
    [[nodiscard]] Round round(int epochs, const Clock& clock);

    [[nodiscard]] const ModelGraph& model() const;
    [[nodiscard]] const PartitionStats& stats() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace strata::planner
