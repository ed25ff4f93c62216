// Session: one training run, assembled once for every front end (`strata train`, the Python
// module, the benches, the example). It takes a run configuration whose plan is resolved
// (planner::resolve_plan), resolves the model's recipe and the layout's defaults, checks the
// outputs before any data is read, prepares the rank (training/prepare.hpp), builds the executor,
// the optimizer and the best-weights tracker, and run() drives the training loop with its hooks in
// one tested order — the caller's hooks, the observer, the metrics file, the best weights, early
// stopping, the agreed signal stop, checkpoints — resuming from a checkpoint when asked. It never
// prints or exits: errors are exceptions, reporting goes to a RunObserver.
#pragma once

#include <memory>
#include <vector>

#include "training/fit.hpp"
#include "training/metrics_writer.hpp"
#include "training/prepare.hpp"
#include "training/run_config.hpp"
#include "training/run_observer.hpp"
#include "training/runtime.hpp"

namespace strata {

struct SessionOptions {
    DataInput input{};                ///< the graph in memory, when config.data is empty
    RunObserver* observer = nullptr;  ///< where the run reports (null: nowhere)
    /// The caller's hooks: begin_epoch before each epoch, end_epoch after it before any of the
    /// session's own. A stop one of them requests on any rank (FitState::stop_reason) stops every
    /// rank after that epoch, with the requesting rank's reason. They must outlive run().
    std::vector<FitHook*> hooks{};
    ModelBuilder build_model{};  ///< a model of one's own instead of config.model
};

class Session {
public:
    /// Collective over runtime.comm. Throws strata::OptionError for an option that cannot work
    /// (before any data is read, where the data is not needed to tell), strata::Error for bad
    /// input. `runtime` must outlive the session.
    Session(const RunConfig& config, Runtime& runtime, SessionOptions options = {});
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    /// The configuration run: recipe and layout resolved.
    [[nodiscard]] const RunConfig& config() const;
    [[nodiscard]] const RunSummary& summary() const;
    /// The constant fields of this run's metrics records (metrics_record(stats, context)): what
    /// the metrics file holds, for a front end that reports epochs in its own way.
    [[nodiscard]] MetricsContext metrics_context() const;

    /// Collective: trains epochs (after resuming when config.resume) until the last epoch or a
    /// stop. Throws strata::Error when training diverges or an output cannot be written.
    RunResult run();

    /// The model's parameters (after run(): the last epoch's weights).
    [[nodiscard]] ModelParameters& parameters();
    /// The best evaluated epoch's weights (host copy).
    [[nodiscard]] std::vector<float> best_parameters() const;

private:
    struct Parts;
    std::unique_ptr<Parts> p_;
};

}  // namespace strata
