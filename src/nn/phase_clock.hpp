// PhaseClock: times an executor's schedule steps into a PhaseTimes (`strata train --profile`), or
// only runs them without one: the backend is synchronized before and after each step, and the
// communicator's wait during it is split out as exposed wait. While a trace records
// (src/base/trace.hpp), each step is also a span named by the caller, its category the phase.
#pragma once

#include <string_view>

#include "src/base/timer.hpp"
#include "src/base/trace.hpp"
#include "src/comm/communicator.hpp"
#include "src/device/backend.hpp"
#include "src/nn/executor.hpp"
#include "src/nn/op.hpp"

namespace strata {

class PhaseClock {
public:
    /// `times` null: run() only runs.
    PhaseClock(Backend& backend, const Communicator& comm, PhaseTimes* times)
        : backend_(backend), comm_(comm), times_(times) {}

    /// Runs `run` as a step of phase `slot`; `name` (read only while a trace records) names
    /// its span.
    template <class Run>
    void time(double PhaseTimes::*slot, std::string_view name, Run&& run) {
        const trace::Span span(name, category(slot));
        if (times_ == nullptr) {
            run();
            if (trace::on()) {
                backend_.synchronize();  // the span ends with the device's work
            }
            return;
        }
        backend_.synchronize();
        const double wait_before = comm_.stats().wait_seconds;
        const Stopwatch watch;
        run();
        backend_.synchronize();
        const double wait = comm_.stats().wait_seconds - wait_before;
        times_->*slot += watch.seconds() - wait;
        times_->exposed_wait += wait;
    }

    /// The phase of an op of `kind`.
    static double PhaseTimes::*slot(OpKind kind) {
        switch (kind) {
            case OpKind::linear:
                return &PhaseTimes::gemm;
            case OpKind::aggregate:
                return &PhaseTimes::aggregation;
            case OpKind::attention:
                return &PhaseTimes::attention;
            default:
                return &PhaseTimes::elementwise;
        }
    }

    /// The trace category of a phase: "gemm", "aggregation", "attention", "elementwise",
    /// "loss", "wait".
    static const char* category(double PhaseTimes::*slot) {
        if (slot == &PhaseTimes::gemm) {
            return "gemm";
        }
        if (slot == &PhaseTimes::aggregation) {
            return "aggregation";
        }
        if (slot == &PhaseTimes::attention) {
            return "attention";
        }
        if (slot == &PhaseTimes::loss) {
            return "loss";
        }
        if (slot == &PhaseTimes::exposed_wait) {
            return "wait";
        }
        return "elementwise";
    }

private:
    Backend& backend_;
    const Communicator& comm_;
    PhaseTimes* times_;
};

}  // namespace strata
