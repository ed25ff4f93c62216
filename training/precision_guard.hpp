// PrecisionGuard: the accuracy guard of compressed halos (halo_precision bf16 or int8, any
// parallel mode that supports them). At each evaluation the same weights are evaluated again with
// fp32 halos; when the fp32 validation accuracy beats the compressed one by more than `margin`
// at `patience` evaluations in a row, the run switches to fp32 halos for the rest of the run,
// says so once and records it in that epoch's metrics (EpochStats::precision_guard). Every
// epoch's record carries the precision in force while it trained (EpochStats::halo_precision).
// The fp32 evaluation's traffic and time are not part of any epoch's figures.
// The layer pipeline evaluates exactly (rank 0 alone, no stage transfer), so there the guard
// compares the next training step instead: its loss with stage transfers (and mirror rows) at
// the run's precision and at fp32 (PipelineExecutor::precision_losses, same weights, history and
// masks), and fp32 is ahead by (loss_packed - loss_fp32) / loss_fp32. It runs after the
// pipeline's accuracy guard (a GuardList), which handles a non-finite loss.
// The switch survives a checkpoint (Checkpoint::halo_precision_switched, restore_switch()).
#pragma once

#include <functional>
#include <string>

#include "src/comm/halo_packing.hpp"
#include "src/nn/executor.hpp"
#include "src/nn/pipeline_executor.hpp"
#include "training/fit.hpp"

namespace strata {

struct PrecisionGuardOptions {
    HaloPrecision precision = HaloPrecision::bf16;  ///< the run's (not fp32)
    double margin = 0.02;  ///< validation-accuracy points as a fraction (run option)
    int patience = 2;      ///< evaluations in a row above the margin
    /// A non-finite loss ends the run here ("training diverged"); false where another guard
    /// handles it (the pipeline's accuracy guard, which reviews the epoch first).
    bool owns_divergence = true;
};

class PrecisionGuard final : public EpochGuard {
public:
    /// `set_precision` sends every later exchange at the given precision (ModelInputs::
    /// set_halo_precision); `say` prints a line. Everything must outlive the guard. Throws
    /// strata::Error for options.precision fp32 (nothing to guard).
    PrecisionGuard(Executor& executor, std::function<void(HaloPrecision)> set_precision,
                   const PrecisionGuardOptions& options,
                   std::function<void(const std::string&)> say);

    /// The layer pipeline: the next step's loss at the run's precision against fp32's; the
    /// precision is the pipeline's (PipelineExecutor::set_precision).
    PrecisionGuard(PipelineExecutor& pipeline, const PrecisionGuardOptions& options,
                   std::function<void(const std::string&)> say);

    void review(EpochStats& stats, FitState& state) override;

    /// A resumed run that had switched (Checkpoint::halo_precision_switched): fp32 from now on,
    /// said once.
    void restore_switch();

    /// The precision exchanges use now: options.precision, or fp32 after the switch.
    [[nodiscard]] HaloPrecision in_force() const { return in_force_; }

private:
    Executor& executor_;
    PipelineExecutor* pipeline_ = nullptr;  ///< the pipeline's measure instead of evaluate()
    std::function<void(HaloPrecision)> set_precision_;
    PrecisionGuardOptions options_;
    std::function<void(const std::string&)> say_;
    HaloPrecision in_force_;
    int above_ = 0;  ///< evaluations in a row with the gap above the margin
};

}  // namespace strata
