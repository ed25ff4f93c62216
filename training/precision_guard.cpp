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

PrecisionGuard::PrecisionGuard(PipelineExecutor& pipeline, const PrecisionGuardOptions& options,
                               std::function<void(const std::string&)> say)
    : PrecisionGuard(
          pipeline, [&pipeline](HaloPrecision precision) { pipeline.set_precision(precision); },
          options, std::move(say)) {
    pipeline_ = &pipeline;
}

void PrecisionGuard::restore_switch() {
    if (in_force_ == HaloPrecision::fp32) {
        return;
    }
    say_(std::string("precision guard: halo precision ") + to_string(in_force_) +
         " -> fp32, as switched before the checkpoint");
    in_force_ = HaloPrecision::fp32;
    set_precision_(in_force_);
}

void PrecisionGuard::review(EpochStats& stats, FitState& state) {
    (void)state;
    // With a guard, a non-finite loss is the guard's to handle (fit.hpp): it ends the run here,
    // unless another guard handles it.
    STRATA_CHECK(!options_.owns_divergence || std::isfinite(stats.loss),
                 "training diverged: loss is ", stats.loss, " at epoch ", stats.epoch, " with ",
                 to_string(in_force_), " halos (try a smaller lr, or halo_precision = fp32)");
    stats.halo_precision = to_string(in_force_);
    if (in_force_ == HaloPrecision::fp32 || !stats.evaluated || !std::isfinite(stats.loss)) {
        return;
    }
    std::array<char, 320> text{};
    if (pipeline_ != nullptr) {  // the weights evaluated are those the next epoch trains from
        const PrecisionLosses losses = pipeline_->precision_losses(stats.epoch + 1);
        const double gap = losses.fp32 > 0.0 ? (losses.packed - losses.fp32) / losses.fp32 : 0.0;
        above_ = gap > options_.margin ? above_ + 1 : 0;
        if (above_ < options_.patience) {
            return;
        }
        std::snprintf(text.data(), text.size(),
                      "halo precision %s -> fp32 from epoch %lld on: the next step's training "
                      "loss with fp32 stage transfers %.4f, with %s %.4f (gradients %.4f apart), "
                      "a relative gap above %.4f at %d evaluations in a row",
                      to_string(in_force_), static_cast<long long>(stats.epoch + 1), losses.fp32,
                      to_string(in_force_), losses.packed, losses.gradient_error, options_.margin,
                      above_);
    } else {
        set_precision_(HaloPrecision::fp32);
        const Evaluation exact = executor_.evaluate();
        set_precision_(in_force_);
        stats.fp32_val_acc = exact.val_acc;
        const double gap = exact.val_acc - stats.val_acc;
        above_ = gap > options_.margin ? above_ + 1 : 0;
        if (above_ < options_.patience) {
            return;
        }
        std::snprintf(text.data(), text.size(),
                      "halo precision %s -> fp32 from epoch %lld on: validation accuracy with "
                      "fp32 halos %.4f, with %s halos %.4f, a gap above %.4f at %d evaluations "
                      "in a row",
                      to_string(in_force_), static_cast<long long>(stats.epoch + 1), exact.val_acc,
                      to_string(in_force_), stats.val_acc, options_.margin, above_);
    }
    in_force_ = HaloPrecision::fp32;
    set_precision_(in_force_);
    stats.precision_guard = text.data();
    say_("precision guard after epoch " + std::to_string(stats.epoch) + ": " + text.data());
}

}  // namespace strata
