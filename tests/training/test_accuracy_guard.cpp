// AccuracyGuard: each trigger restores the last good weights and optimizer state, halves the
// chunks and the snapshot period, forgets the history, and says so; the third runs exact.
#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

#include "layers/linear_op.hpp"
#include "src/comm/mpi_communicator.hpp"
#include "training/accuracy_guard.hpp"

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
    std::vector<std::string> said;
    std::unique_ptr<AccuracyGuard> guard;

    explicit Setup(GuardOptions options = {.window = 0}) {
        const TensorId x = graph.add_input("x", 3);
        graph.set_output(graph.add("fc", std::make_unique<LinearOp>(3, 2, 0.0f), {x}));
        parameters = std::make_unique<ModelParameters>(*backend, graph, 1);
        guard = std::make_unique<AccuracyGuard>(
            staleness, *parameters, optimizer, options,
            [this](const std::string& line) { said.push_back(line); });
    }
    /// An epoch whose training set the weights to `epoch` (so a restore is visible).
    EpochStats epoch(std::int64_t e, double loss, bool evaluated, double val_acc,
                     double train_loss) {
        parameters->upload(std::vector<float>(parameters->size(), static_cast<float>(e)));
        optimizer.step({});
        EpochStats s;
        s.epoch = e;
        s.loss = loss;
        s.evaluated = evaluated;
        s.val_acc = val_acc;
        s.eval_train_loss = train_loss;
        FitState state;
        guard->review(s, state);
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
