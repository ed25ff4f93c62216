// The training loop and its hooks against a scripted executor: evaluation cadence, the best
// weights kept by --select-by, patience and Kipf's window, and the metrics file (one record per
// epoch, flushed as it happens, a resume rewriting it once and dropping a torn last line).
#include <cmath>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "layers/linear_op.hpp"
#include "src/comm/mpi_communicator.hpp"
#include "training/best_tracker.hpp"
#include "training/early_stopping.hpp"
#include "training/metrics_writer.hpp"

#include <unistd.h>

using namespace strata;
namespace fs = std::filesystem;

namespace {

/// An executor whose losses and evaluations follow a script; each training step sets every
/// parameter to the epoch number, so the best weights show which epoch they came from.
class ScriptedExecutor final : public Executor {
public:
    ScriptedExecutor(Backend& backend, ModelParameters& parameters, std::vector<double> val_accs,
                     std::vector<double> val_losses)
        : backend_(backend),
          parameters_(parameters),
          val_accs_(std::move(val_accs)),
          val_losses_(std::move(val_losses)) {}

    double train_step(std::int64_t epoch) override {
        epoch_ = epoch;
        const std::vector<float> values(parameters_.size(), static_cast<float>(epoch));
        parameters_.upload(values);
        ++steps;
        return 1.0 / static_cast<double>(epoch);
    }
    Evaluation evaluate() override {
        ++evaluations;
        evaluated_epochs.push_back(epoch_);
        Evaluation e;
        const auto i = static_cast<std::size_t>(epoch_ - 1);
        e.val_acc = val_accs_.at(i);
        e.val_loss = val_losses_.at(i);
        e.test_acc = 0.5;
        return e;
    }
    [[nodiscard]] std::vector<MemoryLine> memory_plan() const override { return {}; }
    [[nodiscard]] HaloBytes halo_bytes() const override { return {}; }

    int steps = 0;
    int evaluations = 0;
    std::vector<std::int64_t> evaluated_epochs;

private:
    Backend& backend_;
    ModelParameters& parameters_;
    std::vector<double> val_accs_;
    std::vector<double> val_losses_;
    std::int64_t epoch_ = 0;
};

/// An optimizer that leaves the parameters alone (the script sets them).
class NoUpdate final : public Optimizer {
public:
    void step(std::span<const Parameter>) override {}
    [[nodiscard]] std::vector<float> state() const override { return {}; }
    void set_state(std::span<const float>) override {}
};

struct Loop {
    std::unique_ptr<Backend> backend = make_cpu_backend(1);
    MpiCommunicator comm{MPI_COMM_SELF};
    ModelGraph graph;
    std::unique_ptr<ModelParameters> parameters;
    std::unique_ptr<ScriptedExecutor> executor;
    NoUpdate optimizer;

    Loop(std::vector<double> val_accs, std::vector<double> val_losses) {
        const TensorId x = graph.add_input("x", 2);
        graph.set_output(graph.add("lin", std::make_unique<LinearOp>(2, 3, 0.0f), {x}));
        parameters = std::make_unique<ModelParameters>(*backend, graph, 1);
        executor = std::make_unique<ScriptedExecutor>(*backend, *parameters, std::move(val_accs),
                                                      std::move(val_losses));
    }
    FitState run(std::int64_t epochs, int eval_every, std::vector<FitHook*> hooks) {
        FitState state;
        state.epochs = epochs;
        fit(FitContext{*executor, optimizer, *parameters, *backend, comm},
            FitOptions{.eval_every = eval_every}, hooks, state);
        return state;
    }
};

fs::path temp_file(const std::string& tag) {
    return fs::temp_directory_path() /
           ("strata-test-fit-" + tag + "-" + std::to_string(getpid()) + ".jsonl");
}

std::vector<nlohmann::json> records(const fs::path& path) {
    std::vector<nlohmann::json> out;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        out.push_back(nlohmann::json::parse(line));
    }
    return out;
}

}  // namespace

TEST_CASE("fit evaluates every N epochs and at the last one", "[training]") {
    Loop loop(std::vector<double>(10, 0.5), std::vector<double>(10, 1.0));

    const FitState state = loop.run(10, 3, {});

    CHECK(loop.executor->steps == 10);
    CHECK(loop.executor->evaluated_epochs == std::vector<std::int64_t>{3, 6, 9, 10});
    CHECK(state.epoch == 10);
    CHECK(state.history.size() == 4);
}

TEST_CASE("the best tracker keeps the weights of the best epoch by the chosen metric",
          "[training]") {
    // val_acc is best at epoch 4, val_loss at epoch 6.
    const std::vector<double> accs{0.1, 0.3, 0.3, 0.9, 0.2, 0.8, 0.7};
    const std::vector<double> losses{2.0, 1.5, 1.4, 1.3, 1.2, 0.5, 0.9};
    for (const Selection selection : {Selection::val_acc, Selection::val_loss}) {
        Loop loop(accs, losses);
        BestTracker best(*loop.backend, *loop.parameters, selection);

        const FitState state = loop.run(7, 1, {&best});

        const float want = selection == Selection::val_acc ? 4.0f : 6.0f;
        INFO(to_string(selection));
        REQUIRE(state.best.has_value());
        CHECK(state.best->epoch == static_cast<std::int64_t>(want));
        CHECK(best.download() == std::vector<float>(loop.parameters->size(), want));
        CHECK(loop.parameters->download() == std::vector<float>(loop.parameters->size(), 7.0f));
    }
}

TEST_CASE("patience stops after N evaluations without a better result", "[training]") {
    const std::vector<double> accs{0.1, 0.5, 0.4, 0.5, 0.3, 0.6, 0.9, 0.9};
    Loop loop(accs, std::vector<double>(8, 1.0));
    BestTracker best(*loop.backend, *loop.parameters, Selection::val_acc);
    PatienceStop patience(3);

    const FitState state = loop.run(8, 1, {&best, &patience});

    // Best at epoch 2 (0.5; epoch 4's 0.5 is not better); epochs 3, 4, 5 do not improve.
    CHECK(state.epoch == 5);
    CHECK(state.early_stopped);
    CHECK(state.best->epoch == 2);
    CHECK_THAT(state.stop_reason, Catch::Contains("no better validation result for 3"));
}

TEST_CASE("Kipf's window stops when the val loss exceeds the mean of the previous N",
          "[training]") {
    const std::vector<double> losses{1.0, 0.9, 0.8, 0.7, 0.72, 0.78, 0.6};
    Loop loop(std::vector<double>(7, 0.5), losses);
    WindowEarlyStop window(2);

    const FitState state = loop.run(7, 1, {&window});

    // Epoch 5: 0.72 > mean(0.8, 0.7) = 0.75? no. Epoch 6: 0.78 > mean(0.7, 0.72) = 0.71: stop.
    CHECK(state.epoch == 6);
    CHECK(state.early_stopped);
}

TEST_CASE("the metrics file has a versioned record per epoch, written as the epoch ends",
          "[training][metrics]") {
    const fs::path path = temp_file("append");
    Loop loop(std::vector<double>(6, 0.5), std::vector<double>(6, 1.0));
    MetricsWriter metrics(path.string(), true, 0,
                          MetricsContext{.planned_bytes = 1234, .planned_bytes_per_vertex = 5.5});
    struct LinesSoFar final : FitHook {
        fs::path path;
        std::vector<std::size_t> seen;
        void end_epoch(const EpochStats&, FitState&) override {
            seen.push_back(records(path).size());
        }
    } tail;
    tail.path = path;

    (void)loop.run(6, 2, {&metrics, &tail});

    CHECK(tail.seen == std::vector<std::size_t>{1, 2, 3, 4, 5, 6});  // flushed at each epoch
    const auto lines = records(path);
    REQUIRE(lines.size() == 6);
    for (const auto& r : lines) {
        CHECK(r["schema_version"] == metrics_schema_version);
        CHECK(r["planned_bytes"] == 1234);
        CHECK(r["planned_bytes_per_vertex"] == 5.5);
        CHECK(r.contains("recompute_halo_bytes"));
    }
    CHECK(lines[0]["evaluated"] == false);
    CHECK_FALSE(lines[0].contains("val_acc"));
    CHECK(lines[1]["evaluated"] == true);
    CHECK(lines[1]["val_acc"] == 0.5);
    fs::remove(path);
}

TEST_CASE("a resume keeps the records up to its epoch and drops a torn line",
          "[training][metrics]") {
    const fs::path path = temp_file("resume");
    {
        std::ofstream out(path);
        for (int e = 1; e <= 5; ++e) {
            out << "{\"schema_version\":2,\"epoch\":" << e << ",\"loss\":1.0}\n";
        }
        out << "{\"schema_version\":2,\"epo";  // a crash in the middle of a write
    }

    {
        MetricsWriter metrics(path.string(), true, 3, MetricsContext{});
        CHECK(metrics.kept() == 3);
        EpochStats stats;
        stats.epoch = 4;
        FitState state;
        metrics.end_epoch(stats, state);
    }

    const auto lines = records(path);
    REQUIRE(lines.size() == 4);
    CHECK(lines[2]["epoch"] == 3);
    CHECK(lines[3]["epoch"] == 4);
    CHECK(read_metrics_records(path.string()).size() == 4);
    fs::remove(path);
}
