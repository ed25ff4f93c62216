// PhaseClock: times an executor's schedule steps into a PhaseTimes (`strata train --profile`), or
// only runs them without one: the backend is synchronized before and after each step, and the
// communicator's wait during it is split out as exposed wait.
#pragma once

#include "src/base/timer.hpp"
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

    template <class Run>
    void time(double PhaseTimes::*slot, Run&& run) {
        if (times_ == nullptr) {
            run();
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

private:
    Backend& backend_;
    const Communicator& comm_;
    PhaseTimes* times_;
};

}  // namespace strata
