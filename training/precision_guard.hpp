// PrecisionGuard: the accuracy guard of compressed halos (halo_precision bf16 or int8, any
// parallel mode that supports them). At each evaluation the same weights are evaluated again with
// fp32 halos; when the fp32 validation accuracy beats the compressed one by more than `margin`
// at `patience` evaluations in a row, the run switches to fp32 halos for the rest of the run,
// says so once and records it in that epoch's metrics (EpochStats::precision_guard). Every
// epoch's record carries the precision in force while it trained (EpochStats::halo_precision).
// The fp32 evaluation's traffic and time are not part of any epoch's figures.
#pragma once

#include <functional>
#include <string>

#include "src/comm/halo_packing.hpp"
#include "src/nn/executor.hpp"
#include "training/fit.hpp"

namespace strata {

struct PrecisionGuardOptions {
    HaloPrecision precision = HaloPrecision::bf16;  ///< the run's (not fp32)
    double margin = 0.02;  ///< validation-accuracy points as a fraction (run option)
    int patience = 2;      ///< evaluations in a row above the margin
};

class PrecisionGuard final : public EpochGuard {
public:
    /// `set_precision` sends every later exchange at the given precision (ModelInputs::
    /// set_halo_precision); `say` prints a line. Everything must outlive the guard. Throws
    /// strata::Error for options.precision fp32 (nothing to guard).
    PrecisionGuard(Executor& executor, std::function<void(HaloPrecision)> set_precision,
                   const PrecisionGuardOptions& options,
                   std::function<void(const std::string&)> say);

    void review(EpochStats& stats, FitState& state) override;

    /// The precision exchanges use now: options.precision, or fp32 after the switch.
    [[nodiscard]] HaloPrecision in_force() const { return in_force_; }

private:
    Executor& executor_;
    std::function<void(HaloPrecision)> set_precision_;
    PrecisionGuardOptions options_;
    std::function<void(const std::string&)> say_;
    HaloPrecision in_force_;
    int above_ = 0;  ///< evaluations in a row with the gap above the margin
};

}  // namespace strata
