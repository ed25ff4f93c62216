// RunReport: what `strata train` prints on rank 0 from its Session's observer calls — a header
// (data, ranks, device, model, the memory plan), the run's choices, one line per epoch and the
// final lines (`best epoch N (by val_loss): ...`, `test_accuracy=...`).
#pragma once

#include "training/run_observer.hpp"

namespace strata::app {

class RunReport final : public RunObserver {
public:
    /// Only the root rank prints. `quiet`: only important notes, warnings and the final lines.
    RunReport(bool root, bool quiet);
    void started(const RunSummary& summary) override;
    void note(const std::string& text, bool important) override;
    void warning(const std::string& text) override;
    void epoch(const EpochStats& stats) override;
    /// The final lines; a run stopped by a signal prints where it can be resumed from instead.
    void finished(const RunResult& result) override;

private:
    bool print_;
    bool root_;
};

}  // namespace strata::app
