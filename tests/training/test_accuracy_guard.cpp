// AccuracyGuard: it judges the staleness gap (how far the next step's gradient from stale rows
// is from the one from fresh rows, as the optimizer scales each coordinate; a fake executor gives
// the gradients), not the validation curve: a gap
// beyond the bound at two evaluations in a row rolls back, a validation swing with a small gap
// does not.
// Each trigger restores the last good weights and optimizer state, halves the chunks and the
// snapshot period, forgets the history, and says so; the third runs exact. A rollback puts the
// best tracker back as of the restored epoch, so the best epoch served is never one the rollback
// discarded; its state survives a checkpoint (state() / set_state()).
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

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
    /// The training losses from stale and fresh rows the next measurement gives, and gradients
    /// that follow them (one value: stale / fresh against 1, so the gap is |stale / fresh - 1|),
    /// unless `gradients` sets them; records what was asked.
    StalenessLosses staleness_losses(std::int64_t epoch) override {
        asked.push_back(epoch);
        if (gradients) {
            return {.stale = stale,
                    .fresh = fresh,
                    .gradient_error = raw_gap,
                    .stale_gradient = gradients->first,
                    .fresh_gradient = gradients->second};
        }
        return {.stale = stale,
                .fresh = fresh,
                .gradient_error = std::abs(stale / fresh - 1.0),
                .stale_gradient = {static_cast<float>(stale / fresh)},
                .fresh_gradient = {1.0f}};
    }
    int resets = 0;
    double stale = 1.0;
    double fresh = 1.0;
    std::optional<std::pair<std::vector<float>, std::vector<float>>> gradients;  ///< stale, fresh
    double raw_gap = 0.0;  ///< the unscaled gap reported beside `gradients`
    std::vector<std::int64_t> asked;

private:
    int chunks_ = 8;
    int period_ = 23;
};

/// Optimizer state = one float, so a restore is visible. Its step scale is `scale` when set
/// (else the default, 1 everywhere).
class CountingOptimizer final : public Optimizer {
public:
    void step(std::span<const Parameter>) override { state_ += 1.0f; }
    [[nodiscard]] std::vector<float> state() const override { return {state_}; }
    void set_state(std::span<const float> s) override { state_ = s[0]; }
    [[nodiscard]] std::vector<float> step_scale(std::span<const float> grads) const override {
        return scale.empty() ? Optimizer::step_scale(grads) : scale;
    }
    std::vector<float> scale;

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

    explicit Setup(GuardOptions options = {.bound = 0.5, .window = 0}, bool with_tracker = false) {
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
    /// by the guard and then, as fit does, seen by the tracker. `fresh`, `stale`: the training
    /// losses the measurement gives from fresh and from stale rows.
    EpochStats epoch(std::int64_t e, double loss, bool evaluated, double val_acc, double fresh,
                     double stale, double val_loss = 1.0) {
        staleness.stale = stale;
        staleness.fresh = fresh;
        parameters->upload(std::vector<float>(parameters->size(), static_cast<float>(e)));
        optimizer.step({});
        EpochStats s;
        s.epoch = e;
        s.loss = loss;
        s.evaluated = evaluated;
        s.val_acc = val_acc;
        s.val_loss = val_loss;
        s.eval_train_loss = 1.0;
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

TEST_CASE("guard: a validation swing with a small staleness gap does not roll back", "[guard]") {
    // The exact run: validation accuracy 0.656 falls to 0.221 and stays there; the
    // stale rows change the loss by 10 % at most. The rule before issue 31 rolled this back.
    Setup g;
    for (int e = 1; e <= 20; ++e) {
        const double acc = e <= 4 ? 0.656 : 0.221;
        const EpochStats s = g.epoch(e, 1.0, e % 2 == 0, acc, 1.0 - 0.01 * e, 1.1 - 0.011 * e);
        CHECK(s.guard.empty());
        CHECK(s.staleness_gap.has_value() == s.evaluated);
        if (s.evaluated) {
            CHECK(*s.stale_train_loss == Approx(1.1 - 0.011 * e));
            CHECK(*s.staleness_gap == Approx(0.1));
        }
    }
    CHECK(g.guard->triggers() == 0);
    CHECK(g.staleness.chunks() == 8);
    CHECK(g.said.empty());
    // Measured at evaluations only, as the next epoch will read its rows.
    CHECK(g.staleness.asked == std::vector<std::int64_t>{3, 5, 7, 9, 11, 13, 15, 17, 19, 21});
}

TEST_CASE("guard: the staleness gap beyond the bound twice in a row rolls back", "[guard]") {
    Setup g;
    g.epoch(1, 1.0, true, 0.80, 1.0, 1.2);  // gap 0.2: good, remembered (weights 1, state 1)
    g.epoch(2, 1.0, true, 0.81, 1.0, 1.5);  // gap 0.5, not above: good, remembered (2)
    const EpochStats a = g.epoch(3, 1.0, true, 0.82, 0.8, 1.3);  // above once: not yet
    CHECK(a.guard.empty());
    CHECK(*a.staleness_gap == Approx(0.625));
    const EpochStats b = g.epoch(4, 1.0, true, 0.83, 0.5, 1.0);  // above twice: trigger
    CHECK(
        b.guard ==
        "rollback 1: staleness gap 1.0000 beyond the bound 0.5000 at 2 evaluations in a row "
        "(training loss 1.0000 from stale rows, 0.5000 from fresh rows); restored epoch 2 weights; "
        "chunks 8 -> 4, snapshot period 23 -> 11");
    CHECK(g.weight() == 2.0f);
    CHECK(g.optimizer.state()[0] == 2.0f);
    CHECK(g.staleness.resets == 1);
    REQUIRE(g.said.size() == 1);
    CHECK(g.said[0] == "guard after epoch 4: " + b.guard);
    // A gap beyond the bound once, then within it: the streak ends, no rollback.
    CHECK(g.epoch(5, 1.0, true, 0.5, 1.0, 2.0).guard.empty());
    CHECK(g.epoch(6, 1.0, true, 0.5, 1.0, 1.0).guard.empty());
    CHECK(g.epoch(7, 1.0, true, 0.5, 1.0, 2.0).guard.empty());
    CHECK(g.guard->triggers() == 1);
}

TEST_CASE("guard: the gap is the update's error, each coordinate scaled as the optimizer will",
          "[guard]") {
    // A gradient of one large and one small coordinate; staleness doubles the small one. Raw,
    // the error is 1e-4 of the gradient; as an optimizer that scales the small coordinate
    // 10^4 x (as Adam does a coordinate whose gradients have been small) applies them, the
    // update's error is 10 / sqrt(200) = 0.707 of the update, beyond the bound 0.5.
    Setup g;
    g.optimizer.scale = {1.0f, 1e4f};
    g.staleness.gradients = {{{10.0f, 0.002f}, {10.0f, 0.001f}}};
    g.staleness.raw_gap = 1e-4;
    const EpochStats a = g.epoch(1, 1.0, true, 0.8, 1.0, 1.0);
    CHECK(a.guard.empty());
    REQUIRE(a.staleness_gap.has_value());
    CHECK(*a.staleness_gap == Approx(10.0 / std::sqrt(200.0)).epsilon(1e-4));
    CHECK(*a.raw_staleness_gap == 1e-4);
    const EpochStats b = g.epoch(2, 1.0, true, 0.8, 1.0, 1.0);
    CHECK(b.guard.rfind("rollback 1: staleness gap 0.7071 beyond the bound 0.5000", 0) == 0);

    // Unscaled (plain gradient descent), the same gradients stay within the bound.
    Setup plain;
    plain.staleness.gradients = g.staleness.gradients;
    for (int e = 1; e <= 4; ++e) {
        const EpochStats s = plain.epoch(e, 1.0, true, 0.8, 1.0, 1.0);
        CHECK(s.guard.empty());
        CHECK(*s.staleness_gap == Approx(1e-4).epsilon(1e-3));
    }
}

TEST_CASE("guard: Adam's step scale is what its next step divides the gradient by", "[guard]") {
    // From zero moments, Adam's first step is lr m̂ / (sqrt(v̂) + eps) with m̂ = g: the
    // parameter moves by lr g x step_scale(g). Then from the moments the step left.
    auto backend = make_cpu_backend(1);
    ModelGraph graph;
    const TensorId x = graph.add_input("x", 2);
    graph.set_output(graph.add("fc", std::make_unique<LinearOp>(2, 1, 0.0f), {x}));
    ModelParameters parameters(*backend, graph, 1);
    const std::size_t n = parameters.size();
    Adam adam(*backend, n, {.lr = 0.1f});
    std::vector<float> grads(n);
    for (std::size_t i = 0; i < n; ++i) {
        grads[i] = 0.5f - 0.3f * static_cast<float>(i);
    }
    for (int t = 1; t <= 2; ++t) {
        const std::vector<float> scale = adam.step_scale(grads);
        REQUIRE(scale.size() == n);
        const std::vector<float> before = parameters.download();
        backend->upload(parameters.grads().data(), grads.data(), n * sizeof(float));
        adam.step(parameters.all());
        const std::vector<float> after = parameters.download();
        for (std::size_t i = 0; i < n; ++i) {
            // m̂ = g on every step here (the same g each time)
            CHECK(before[i] - after[i] == Approx(0.1 * grads[i] * scale[i]).margin(1e-6));
        }
    }
    CountingOptimizer plain;  // the default: ones
    CHECK(plain.step_scale(grads) == std::vector<float>(n, 1.0f));
}

TEST_CASE("guard: a non-finite loss triggers at once; the third trigger runs exact", "[guard]") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    Setup g;
    g.epoch(1, 1.0, true, 0.5, 1.0, 1.0);
    const EpochStats first = g.epoch(2, nan, false, 0, 0, 1.0);
    CHECK_THAT(first.guard,
               Catch::StartsWith("rollback 1: training loss is nan; restored epoch 1"));
    CHECK(g.weight() == 1.0f);
    CHECK(g.staleness.chunks() == 4);
    g.epoch(3, 1.0, true, 0.5, 0.9, 0.9);
    const EpochStats second = g.epoch(4, 1.0, true, 0.5, 0.9, nan);  // the stale rows diverged
    CHECK_THAT(second.guard, Catch::StartsWith("rollback 2: training loss is nan from stale rows, "
                                               "0.9 from fresh rows, 1 exact (evaluation); "
                                               "staleness gap nan; restored epoch 3"));
    CHECK(g.staleness.chunks() == 2);
    CHECK(g.staleness.snapshot_period() == 5);
    const EpochStats third = g.epoch(5, std::numeric_limits<double>::infinity(), false, 0, 0, 1);
    CHECK_THAT(third.guard, Catch::EndsWith("chunks 2 -> 1, snapshot period 5 -> 0 (exact from "
                                            "now on)"));
    CHECK(g.staleness.chunks() == 1);
    CHECK(g.guard->triggers() == 3);
    // Exact now: the guard stands aside (nothing measured), and a non-finite loss ends the run.
    const std::size_t measured = g.staleness.asked.size();
    const EpochStats later = g.epoch(6, 1.0, true, 0.1, 1.0, 9.0);
    CHECK(later.guard.empty());
    CHECK_FALSE(later.staleness_gap.has_value());
    CHECK(g.staleness.asked.size() == measured);
    CHECK_THROWS_WITH(g.epoch(7, nan, false, 0, 0, 1.0),
                      Catch::StartsWith("training diverged: loss is nan at epoch 7"));
}

TEST_CASE("guard: a gap streak shorter than the window does not trigger", "[guard]") {
    Setup g(GuardOptions{.bound = 0.5});  // window 10 epochs
    g.epoch(1, 1.0, true, 0.80, 1.0, 1.0);
    for (int e = 2; e <= 10; ++e) {  // 9 epochs beyond the bound: within the window
        CHECK(g.epoch(e, 1.0, true, 0.80, 1.0, 2.0).guard.empty());
    }
    g.epoch(11, 1.0, true, 0.80, 1.0, 1.0);  // within the bound: the streak ends
    for (int e = 12; e <= 21; ++e) {
        CHECK(g.epoch(e, 1.0, true, 0.80, 1.0, 2.0).guard.empty());
    }
    const EpochStats s = g.epoch(22, 1.0, true, 0.80, 1.0, 2.0);  // 11 evaluations, 10 epochs
    CHECK_THAT(s.guard,
               Catch::StartsWith("rollback 1: staleness gap 1.0000 beyond the bound "
                                 "0.5000 at 11 evaluations in a row (training loss "
                                 "2.0000 from stale rows, 1.0000 from fresh rows); restored "
                                 "epoch 11 weights"));
}

TEST_CASE("guard: a rollback puts the best tracker back; the served best is never discarded",
          "[guard]") {
    // The run selects by validation loss. Epoch 4 has the best validation loss so far, but its
    // stale rows have drifted: the guard rolls back to epoch 2. Without the tracker going
    // back too, epoch 4 — whose weights the rollback discarded — would be the best epoch
    // reported and served.
    Setup g(
        GuardOptions{.select_by = Selection::val_loss, .bound = 0.5, .patience = 1, .window = 0},
        /*with_tracker=*/true);
    g.epoch(1, 1.0, true, 0.70, 1.0, 1.0, 1.0);
    g.epoch(2, 1.0, true, 0.72, 0.9, 0.9, 0.9);  // the last good epoch, and the best
    g.epoch(3, 1.0, false, 0.0, 0.0, 0.0);       // not evaluated
    const EpochStats bad = g.epoch(4, 1.0, true, 0.75, 0.8, 2.0, 0.5);
    CHECK_THAT(bad.guard, Catch::StartsWith("rollback 1: staleness gap 1.5000 beyond the bound "
                                            "0.5000 at 1 evaluations in a row"));
    CHECK_THAT(bad.guard, Catch::Contains("restored epoch 2 weights"));
    CHECK(g.weight() == 2.0f);
    REQUIRE(g.fit.best.has_value());
    CHECK(g.fit.best->epoch == 2);
    CHECK(g.fit.best->val_loss == 0.9);
    CHECK(g.tracker->download() == std::vector<float>(g.parameters->size(), 2.0f));
    // Training goes on from epoch 2's weights: a worse loss is not best, a better one is.
    g.epoch(5, 1.0, true, 0.70, 0.9, 0.9, 0.95);
    CHECK(g.fit.best->epoch == 2);
    g.epoch(6, 1.0, true, 0.70, 0.9, 0.9, 0.85);
    CHECK(g.fit.best->epoch == 6);
    CHECK(g.tracker->download() == std::vector<float>(g.parameters->size(), 6.0f));
}

TEST_CASE("guard: the best tracker goes back to the restored epoch's best, not the last best",
          "[guard]") {
    // Select by accuracy. Epoch 3 is the best (tracker: 3), epoch 4 is good but no better (the
    // guard's rollback point), epochs 5 and 6 have a gap beyond the bound: the rollback restores
    // epoch 4's weights and the tracker as of epoch 4 — whose best is epoch 3, with epoch 3's
    // weights.
    Setup g(GuardOptions{.bound = 0.5, .window = 0}, /*with_tracker=*/true);
    g.epoch(1, 1.0, true, 0.70, 1.0, 1.0);
    g.epoch(3, 1.0, true, 0.80, 1.0, 1.0);
    g.epoch(4, 1.0, true, 0.79, 1.0, 1.0);
    g.epoch(5, 1.0, true, 0.90, 1.0, 2.0);
    const EpochStats s = g.epoch(6, 1.0, true, 0.90, 1.0, 2.0);
    CHECK_THAT(s.guard, Catch::Contains("restored epoch 4 weights"));
    CHECK(g.weight() == 4.0f);
    REQUIRE(g.fit.best.has_value());
    CHECK(g.fit.best->epoch == 3);
    CHECK(g.tracker->download() == std::vector<float>(g.parameters->size(), 3.0f));
}

TEST_CASE("guard: its state (counters, streak, weights, the tracker's) carries on as it was",
          "[guard]") {
    // Two guards fed the same epochs; the second is rebuilt from the first's state halfway (as
    // a resumed run is): they act alike afterwards.
    const auto feed = [](Setup& g, int from, int to) {
        std::vector<std::string> actions;
        for (int e = from; e <= to; ++e) {
            const double stale = e < 6 ? 1.0 : 2.0;  // the gap beyond the bound from epoch 6
            actions.push_back(
                g.epoch(e, 1.0, true, 0.70 + 0.02 * e, 1.0, stale, 1.0 - 0.01 * e).guard);
        }
        return actions;
    };
    Setup whole(GuardOptions{.bound = 0.5, .window = 0}, /*with_tracker=*/true);
    const std::vector<std::string> want = feed(whole, 1, 9);
    Setup first(GuardOptions{.bound = 0.5, .window = 0}, /*with_tracker=*/true);
    (void)feed(first, 1, 6);
    const GuardState state = first.guard->state();
    CHECK(state.triggers == 0);
    CHECK(state.above == 1);  // epoch 6 is beyond the bound: the streak has begun
    CHECK(state.above_since == 6);
    CHECK(state.good_epoch == 5);
    CHECK_FALSE(state.tracker_pending);
    REQUIRE(state.tracker_best.has_value());
    CHECK(state.tracker_best->epoch == 5);
    Setup resumed(GuardOptions{.bound = 0.5, .window = 0}, /*with_tracker=*/true);
    resumed.guard->set_state(state);
    resumed.fit = first.fit;
    resumed.tracker->upload(first.tracker->download());
    const std::vector<std::string> got = feed(resumed, 7, 9);
    CHECK(got == std::vector<std::string>(want.begin() + 6, want.end()));
    CHECK_THAT(got[0], Catch::StartsWith("rollback 1: staleness gap 1.0000 beyond the bound 0.5000 "
                                         "at 2 evaluations in a row"));
    CHECK_THAT(got[0], Catch::Contains("restored epoch 5 weights"));
    CHECK(resumed.weight() == whole.weight());
    CHECK(resumed.fit.best->epoch == whole.fit.best->epoch);

    GuardState wrong = state;
    wrong.parameters.pop_back();
    CHECK_THROWS_WITH(
        resumed.guard->set_state(wrong),
        Catch::StartsWith("accuracy guard state: ") && Catch::Contains("do not fit this model"));
}
