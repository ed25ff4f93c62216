// RunObserver: what a Session tells its caller as the run goes — the prepared run's summary, the
// lines worth showing (the recipe, the chosen layout, resume, the accuracy guard), warnings, each
// epoch's record and the result. The session itself never prints: `strata train` prints these
// (apps/commands/train_report.hpp), a front end may log them. Called on every rank with the same
// arguments; `root` tells the observer whether it is rank 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "training/epoch_stats.hpp"
#include "training/run_memory.hpp"

namespace strata {

/// The prepared run, identical on every rank but `memory.lines` (each rank's own).
struct RunSummary {
    std::string data;  ///< config.data, or "the graph in memory"
    int ranks = 1;
    std::string device;  ///< rank 0's backend
    std::string comm;    ///< the communicator's name
    std::string model;   ///< describe(config.model)
    std::uint64_t seed = 0;
    int epochs = 0;
    std::int64_t vertices = 0;
    std::string recompute;
    MemoryPlanSummary memory;
    /// What was chosen, one line each, in order: the split, the recipe, the threads, overlap,
    /// the local order, the features' storage, and for the layer pipeline its layout.
    std::vector<std::string> notes;
};

/// How a run ended.
struct RunResult {
    std::optional<EpochStats> best;  ///< the best evaluated epoch by the run's criterion
    Selection selection = Selection::val_acc;
    std::int64_t epoch = 0;         ///< the last completed epoch
    bool already_complete = false;  ///< resumed a run that had nothing left to do
    bool early_stopped = false;
    std::string stop_reason;  ///< non-empty when a hook, early stopping or a signal stopped it
    int stop_signal = 0;      ///< the signal that stopped the run, else 0
    std::string checkpoint;   ///< the newest checkpoint written ("" without checkpoint_dir)
};

class RunObserver {
public:
    virtual ~RunObserver() = default;
    /// Once, after the run is prepared (before any epoch).
    virtual void started(const RunSummary& summary) { (void)summary; }
    /// A line worth showing; `important` lines (resume, the guard's actions, how the run ended)
    /// matter even to a caller that wants only the result.
    virtual void note(const std::string& text, bool important) {
        (void)text;
        (void)important;
    }
    virtual void warning(const std::string& text) { (void)text; }
    /// After every epoch, with its record (global over ranks).
    virtual void epoch(const EpochStats& stats) { (void)stats; }
    /// Once, at the end of run().
    virtual void finished(const RunResult& result) { (void)result; }
};

}  // namespace strata
