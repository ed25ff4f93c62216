// PrecisionGuard: an fp32-halo evaluation beside each compressed one; the switch to fp32.
#include "training/precision_guard.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <utility>

#include "src/base/error.hpp"

namespace strata {

PrecisionGuard::PrecisionGuard(Executor& executor, std::function<void(HaloPrecision)> set_precision,
                               const PrecisionGuardOptions& options,
                               std::function<void(const std::string&)> say)
    : executor_(executor),
      set_precision_(std::move(set_precision)),
      options_(options),
      say_(std::move(say)),
      in_force_(options.precision) {
    STRATA_CHECK(options.precision != HaloPrecision::fp32,
                 "precision guard: the run's halos are fp32, there is nothing to guard");
}

void PrecisionGuard::review(EpochStats& stats, FitState& state) {
    (void)state;
    // With a guard, a non-finite loss is the guard's to handle (fit.hpp): it ends the run here.
    STRATA_CHECK(std::isfinite(stats.loss), "training diverged: loss is ", stats.loss, " at epoch ",
                 stats.epoch, " with ", to_string(in_force_),
                 " halos (try a smaller lr, or halo_precision = fp32)");
    stats.halo_precision = to_string(in_force_);
    if (in_force_ == HaloPrecision::fp32 || !stats.evaluated) {
        return;
    }
    set_precision_(HaloPrecision::fp32);
    const Evaluation exact = executor_.evaluate();
    set_precision_(in_force_);
    stats.fp32_val_acc = exact.val_acc;
    const double gap = exact.val_acc - stats.val_acc;
    above_ = gap > options_.margin ? above_ + 1 : 0;
    if (above_ < options_.patience) {
        return;
    }
    std::array<char, 240> text{};
    std::snprintf(text.data(), text.size(),
                  "halo precision %s -> fp32 from epoch %lld on: validation accuracy with fp32 "
                  "halos %.4f, with %s halos %.4f, a gap above %.4f at %d evaluations in a row",
                  to_string(in_force_), static_cast<long long>(stats.epoch + 1), exact.val_acc,
                  to_string(in_force_), stats.val_acc, options_.margin, above_);
    in_force_ = HaloPrecision::fp32;
    set_precision_(in_force_);
    stats.precision_guard = text.data();
    say_("precision guard after epoch " + std::to_string(stats.epoch) + ": " + text.data());
}

}  // namespace strata
