// AccuracyGuard: each trigger restores the last good weights and optimizer state, halves the
// chunks and the snapshot period, forgets the history, and says so; the third runs exact. It
// judges by the run's select-by figure (validation accuracy, loss or ROC-AUC), and a rollback
// puts the best tracker back as of the restored epoch, so the best epoch served is never one
// the rollback discarded; its state survives a checkpoint (state() / set_state()).
#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

#include "layers/linear_op.hpp"
#include "src/comm/mpi_communicator.hpp"
#include "training/accuracy_guard.hpp"
#include "training/best_tracker.hpp"

using namespace strata;

namespace {

class FakeStaleness final : public StalenessControl {
public:
    [[nodiscard]] int min_chunks() const override { return 1; }
    [[nodiscard]] int chunks() const override { return chunks_; }
    [[nodiscard]] int snapshot_period() const override { return period_; }
    void set_staleness(int chunks, int period) override {
        chunks_ = chunks;
        period_ = period;
    }
    void reset_history() override { ++resets; }
    int resets = 0;

private:
    int chunks_ = 8;
    int period_ = 23;
};

/// Optimizer state = one float, so a restore is visible.
class CountingOptimizer final : public Optimizer {
public:
    void step(std::span<const Parameter>) override { state_ += 1.0f; }
    [[nodiscard]] std::vector<float> state() const override { return {state_}; }
    void set_state(std::span<const float> s) override { state_ = s[0]; }

private:
    float state_ = 0.0f;
};

struct Setup {
    std::unique_ptr<Backend> backend = make_cpu_backend(1);
    ModelGraph graph;
    std::unique_ptr<ModelParameters> parameters;
    FakeStaleness staleness;
    CountingOptimizer optimizer;
    std::unique_ptr<BestTracker> tracker;  ///< with_tracker: fit's best-weights hook
    FitState fit;                          ///< what fit and its hooks share
    std::vector<std::string> said;
    std::unique_ptr<AccuracyGuard> guard;

    explicit Setup(GuardOptions options = {.window = 0}, bool with_tracker = false) {
        const TensorId x = graph.add_input("x", 3);
        graph.set_output(graph.add("fc", std::make_unique<LinearOp>(3, 2, 0.0f), {x}));
        parameters = std::make_unique<ModelParameters>(*backend, graph, 1);
        if (with_tracker) {
            tracker = std::make_unique<BestTracker>(*backend, *parameters, options.select_by);
        }
        guard = std::make_unique<AccuracyGuard>(
            staleness, *parameters, optimizer, tracker.get(), options,
            [this](const std::string& line) { said.push_back(line); });
    }
    /// An epoch whose training set the weights to `epoch` (so a restore is visible), reviewed
    /// by the guard and then, as fit does, seen by the tracker.
    EpochStats epoch(std::int64_t e, double loss, bool evaluated, double val_acc, double train_loss,
                     double val_loss = 1.0) {
        parameters->upload(std::vector<float>(parameters->size(), static_cast<float>(e)));
        optimizer.step({});
        EpochStats s;
        s.epoch = e;
        s.loss = loss;
        s.evaluated = evaluated;
        s.val_acc = val_acc;
        s.val_loss = val_loss;
        s.eval_train_loss = train_loss;
        guard->review(s, fit);
        fit.epoch = e;
        if (tracker) {
            tracker->end_epoch(s, fit);
        }
        return s;
    }
    float weight() const { return parameters->download()[0]; }
};

}  // namespace

TEST_CASE("guard: no trigger while the exact evaluation holds", "[guard]") {
    Setup g;
    for (int e = 1; e <= 10; ++e) {
        const EpochStats s = g.epoch(e, 1.0, e % 2 == 0, 0.70 + 0.001 * e, 1.0);
        CHECK(s.guard.empty());
    }
    CHECK(g.guard->triggers() == 0);
    CHECK(g.staleness.chunks() == 8);
    CHECK(g.said.empty());
}

TEST_CASE("guard: validation accuracy below best - 2 points twice in a row rolls back", "[guard]") {
    Setup g;
    g.epoch(1, 1.0, true, 0.80, 1.0);  // good: remembered (weights 1, optimizer state 1)
    g.epoch(2, 1.0, true, 0.79, 1.0);  // within 2 points: good, remembered (2)
    const EpochStats a = g.epoch(3, 1.0, true, 0.77, 1.0);  // below once: not yet
    CHECK(a.guard.empty());
    const EpochStats b = g.epoch(4, 1.0, true, 0.70, 1.0);  // below twice: trigger
    CHECK(b.guard ==
          "rollback 1: validation accuracy 0.7000 below the best 0.8000 - 0.02 at 2 evaluations "
          "in a row; restored epoch 2 weights; chunks 8 -> 4, snapshot period 23 -> 11");
    CHECK(g.weight() == 2.0f);
    CHECK(g.optimizer.state()[0] == 2.0f);
    CHECK(g.staleness.resets == 1);
    REQUIRE(g.said.size() == 1);
    CHECK(g.said[0] == "guard after epoch 4: " + b.guard);
}

TEST_CASE("guard: NaN loss and exploding exact loss trigger; the third trigger runs exact",
          "[guard]") {
    Setup g;
    g.epoch(1, 1.0, true, 0.5, 1.0);
    const EpochStats nan = g.epoch(2, std::numeric_limits<double>::quiet_NaN(), false, 0, 0);
    CHECK_THAT(nan.guard, Catch::StartsWith("rollback 1: training loss is nan; restored epoch 1"));
    CHECK(g.weight() == 1.0f);
    CHECK(g.staleness.chunks() == 4);
    g.epoch(3, 1.0, true, 0.5, 0.9);
    const EpochStats high = g.epoch(4, 1.0, true, 0.5, 1.5);  // > 1.5 x 0.9
    CHECK_THAT(high.guard, Catch::StartsWith("rollback 2: exact training loss 1.5000 above 1.50 x "
                                             "its minimum 0.9000; restored epoch 3"));
    CHECK(g.staleness.chunks() == 2);
    CHECK(g.staleness.snapshot_period() == 5);
    const EpochStats third = g.epoch(5, std::numeric_limits<double>::infinity(), false, 0, 0);
    CHECK_THAT(third.guard, Catch::EndsWith("chunks 2 -> 1, snapshot period 5 -> 0 (exact from "
                                            "now on)"));
    CHECK(g.staleness.chunks() == 1);
    CHECK(g.guard->triggers() == 3);
    // Exact now: the guard stands aside, and a non-finite loss ends the run.
    const EpochStats later = g.epoch(6, 1.0, true, 0.1, 1.0);
    CHECK(later.guard.empty());
    CHECK_THROWS_WITH(g.epoch(7, std::numeric_limits<double>::quiet_NaN(), false, 0, 0),
                      Catch::StartsWith("training diverged: loss is nan at epoch 7"));
}

TEST_CASE("guard: an accuracy dip shorter than the window does not trigger", "[guard]") {
    Setup g(GuardOptions{});  // window 10 epochs
    g.epoch(1, 1.0, true, 0.80, 1.0);
    for (int e = 2; e <= 10; ++e) {  // 9 epochs below best - 2 points: within the window
        CHECK(g.epoch(e, 1.0, true, 0.70, 1.0).guard.empty());
    }
    g.epoch(11, 1.0, true, 0.80, 1.0);  // recovered: the streak ends
    for (int e = 12; e <= 21; ++e) {
        CHECK(g.epoch(e, 1.0, true, 0.70, 1.0).guard.empty());
    }
    const EpochStats s = g.epoch(22, 1.0, true, 0.70, 1.0);  // 11 evaluations over 10 epochs
    CHECK_THAT(s.guard, Catch::StartsWith("rollback 1: validation accuracy 0.7000 below the best "
                                          "0.8000 - 0.02 at 11 evaluations in a row; restored "
                                          "epoch 11 weights"));
}

TEST_CASE("guard: it judges by the run's select-by figure (validation loss)", "[guard]") {
    Setup g(GuardOptions{.select_by = Selection::val_loss, .window = 0});
    // Accuracy collapses while the loss improves: no trigger (the run selects by loss).
    g.epoch(1, 1.0, true, 0.80, 1.0, 0.90);
    for (int e = 2; e <= 4; ++e) {
        CHECK(g.epoch(e, 1.0, true, 0.30, 1.0, 0.90 - 0.01 * e).guard.empty());
    }
    // The loss above its best 0.86 + 0.02 twice in a row: a rollback to epoch 4.
    CHECK(g.epoch(5, 1.0, true, 0.80, 1.0, 0.875).guard.empty());  // within the drop
    CHECK(g.epoch(6, 1.0, true, 0.80, 1.0, 0.95).guard.empty());   // above once
    const EpochStats s = g.epoch(7, 1.0, true, 0.80, 1.0, 0.97);
    CHECK(s.guard ==
          "rollback 1: validation loss 0.9700 above the best 0.8600 + 0.02 at 2 evaluations in a "
          "row; restored epoch 5 weights; chunks 8 -> 4, snapshot period 23 -> 11");
    CHECK(g.weight() == 5.0f);
}

TEST_CASE("guard: a rollback puts the best tracker back; the served best is never discarded",
          "[guard]") {
    // The run selects by validation loss. Epoch 4 has the best validation loss so far, but its
    // exact training loss explodes: the guard rolls back to epoch 2. Without the tracker going
    // back too, epoch 4 — whose weights the rollback discarded — would be the best epoch
    // reported and served.
    Setup g(GuardOptions{.select_by = Selection::val_loss, .window = 0}, /*with_tracker=*/true);
    g.epoch(1, 1.0, true, 0.70, 1.0, 1.0);
    g.epoch(2, 1.0, true, 0.72, 0.9, 0.9);  // the last good epoch, and the best
    g.epoch(3, 1.0, false, 0.0, 0.0);       // not evaluated
    const EpochStats bad = g.epoch(4, 1.0, true, 0.75, 2.0, 0.5);
    CHECK_THAT(bad.guard, Catch::StartsWith("rollback 1: exact training loss 2.0000 above 1.50 x "
                                            "its minimum 0.9000; restored epoch 2 weights"));
    CHECK(g.weight() == 2.0f);
    REQUIRE(g.fit.best.has_value());
    CHECK(g.fit.best->epoch == 2);
    CHECK(g.fit.best->val_loss == 0.9);
    CHECK(g.tracker->download() == std::vector<float>(g.parameters->size(), 2.0f));
    // Training goes on from epoch 2's weights: a worse loss is not best, a better one is.
    g.epoch(5, 1.0, true, 0.70, 0.9, 0.95);
    CHECK(g.fit.best->epoch == 2);
    g.epoch(6, 1.0, true, 0.70, 0.9, 0.85);
    CHECK(g.fit.best->epoch == 6);
    CHECK(g.tracker->download() == std::vector<float>(g.parameters->size(), 6.0f));
}

TEST_CASE("guard: the best tracker goes back to the restored epoch's best, not the last best",
          "[guard]") {
    // Select by accuracy. Epoch 3 is the best (tracker: 3), epoch 4 is good but no better (the
    // guard's rollback point), epoch 5 is worse than the best by more than the drop, epoch 6
    // again: the rollback restores epoch 4's weights and the tracker as of epoch 4 — whose best
    // is epoch 3, with epoch 3's weights.
    Setup g(GuardOptions{.window = 0}, /*with_tracker=*/true);
    g.epoch(1, 1.0, true, 0.70, 1.0);
    g.epoch(3, 1.0, true, 0.80, 1.0);
    g.epoch(4, 1.0, true, 0.79, 1.0);
    g.epoch(5, 1.0, true, 0.70, 1.0);
    const EpochStats s = g.epoch(6, 1.0, true, 0.70, 1.0);
    CHECK_THAT(s.guard, Catch::Contains("restored epoch 4 weights"));
    CHECK(g.weight() == 4.0f);
    REQUIRE(g.fit.best.has_value());
    CHECK(g.fit.best->epoch == 3);
    CHECK(g.tracker->download() == std::vector<float>(g.parameters->size(), 3.0f));
}

TEST_CASE("guard: its state (counters, figures, weights, the tracker's) carries on as it was",
          "[guard]") {
    // Two guards fed the same epochs; the second is rebuilt from the first's state halfway (as
    // a resumed run is): they act alike afterwards.
    const auto feed = [](Setup& g, int from, int to) {
        std::vector<std::string> actions;
        for (int e = from; e <= to; ++e) {
            const double acc = e < 6 ? 0.70 + 0.02 * e : 0.60;
            actions.push_back(g.epoch(e, 1.0, true, acc, 1.0 - 0.01 * e, 1.0 - 0.01 * e).guard);
        }
        return actions;
    };
    Setup whole(GuardOptions{.window = 0}, /*with_tracker=*/true);
    const std::vector<std::string> want = feed(whole, 1, 9);
    Setup first(GuardOptions{.window = 0}, /*with_tracker=*/true);
    (void)feed(first, 1, 6);
    const GuardState state = first.guard->state();
    CHECK(state.triggers == 0);
    CHECK(state.below == 1);  // epoch 6 is below the best: the streak has begun
    CHECK(state.good_epoch == 5);
    REQUIRE(state.best_figure.has_value());
    CHECK(*state.best_figure == Approx(0.80));
    CHECK_FALSE(state.tracker_pending);
    REQUIRE(state.tracker_best.has_value());
    CHECK(state.tracker_best->epoch == 5);
    Setup resumed(GuardOptions{.window = 0}, /*with_tracker=*/true);
    resumed.guard->set_state(state);
    resumed.fit = first.fit;
    resumed.tracker->upload(first.tracker->download());
    const std::vector<std::string> got = feed(resumed, 7, 9);
    CHECK(got == std::vector<std::string>(want.begin() + 6, want.end()));
    CHECK_THAT(got[0], Catch::StartsWith("rollback 1: validation accuracy 0.6000 below the best "
                                         "0.8000 - 0.02 at 2 evaluations in a row; restored "
                                         "epoch 5 weights"));
    CHECK(resumed.weight() == whole.weight());
    CHECK(resumed.fit.best->epoch == whole.fit.best->epoch);

    GuardState wrong = state;
    wrong.parameters.pop_back();
    CHECK_THROWS_WITH(
        resumed.guard->set_state(wrong),
        Catch::StartsWith("accuracy guard state: ") && Catch::Contains("do not fit this model"));
}
