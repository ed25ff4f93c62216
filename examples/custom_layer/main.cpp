// custom_layer: trains the example model (scaled_gcn.hpp, with the custom ColumnScaleOp) on a
// Strata graph file with the library's executor and training loop, printing one line per epoch
// and the test accuracy of the epoch with the best validation accuracy. Runs under mpirun too
// (each rank trains its METIS part; the result equals one rank's to float rounding).
//   custom_layer --data data/cora.h5 [--epochs 200] [--seed 1] [--threads 2]
//   custom_layer --check            finite-difference check of ColumnScaleOp
#include <algorithm>
#include <array>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "datasets/normalize.hpp"
#include "gradient_check.hpp"
#include "layers/model_inputs.hpp"
#include "partition/distributed_load.hpp"
#include "scaled_gcn.hpp"
#include "src/base/error.hpp"
#include "src/comm/make_communicator.hpp"
#include "src/comm/mpi_session.hpp"
#include "src/nn/full_graph_executor.hpp"
#include "src/nn/optimizer.hpp"
#include "training/best_tracker.hpp"
#include "training/early_stopping.hpp"
#include "training/fit.hpp"

namespace {

struct Options {
    std::string data;
    int epochs = 200;
    float lr = 0.01f;
    int patience = 0;
    int threads = 0;
    std::uint64_t seed = 1;
    example::ScaledGcnOptions model;
    bool check = false;
};

/// One line per epoch on rank 0.
class PrintEpochs final : public strata::FitHook {
public:
    explicit PrintEpochs(bool root) : root_(root) {}
    void end_epoch(const strata::EpochStats& s, strata::FitState& state) override {
        (void)state;
        if (!root_) {
            return;
        }
        std::printf("epoch %4lld  loss %.4f", static_cast<long long>(s.epoch), s.loss);
        if (s.evaluated) {
            std::printf("  train %.4f  val %.4f  test %.4f  val_loss %.4f", s.train_acc, s.val_acc,
                        s.test_acc, s.val_loss);
        }
        std::printf("  %.1f ms\n", 1e3 * s.epoch_s);
    }

private:
    bool root_;
};

int train(const Options& o) {
    const std::unique_ptr<strata::Backend> backend = strata::make_cpu_backend(o.threads);
    const std::unique_ptr<strata::Communicator> comm =
        strata::make_communicator(*backend, strata::CommKind::mpi);
    const bool root = comm->rank() == 0;

    strata::LocalPart part = strata::load_local_part(
        o.data, *comm, strata::InMemoryPartitionOptions{.method = "metis", .seed = o.seed});
    strata::row_normalize_features(part.features);

    example::ScaledGcnOptions model = o.model;
    model.seed = o.seed;
    strata::ModelGraph graph =
        build_scaled_gcn(part.features.cols, static_cast<strata::index_t>(part.num_classes), model);
    // The upload for this model: its graph operator (Â, the normalization build_scaled_gcn
    // sets), features, labels, masks, and the aggregation over them.
    const strata::ModelInputs inputs(*backend, *comm, part, graph);
    strata::ModelParameters parameters(*backend, graph, o.seed);
    strata::FullGraphExecutor executor(*backend, *comm, graph, parameters, *inputs.aggregation,
                                       inputs.inputs->data(), inputs.executor_options({}));
    strata::Adam adam(*backend, parameters.size(), strata::AdamOptions{.lr = o.lr});
    if (root) {
        std::printf("custom_layer: %s, %d rank(s), %s\nparameters: %s\n", o.data.c_str(),
                    comm->size(), backend->describe().c_str(), parameters.summary().c_str());
    }

    // Hooks run in this order after each epoch: print, keep the best weights, then stop.
    PrintEpochs print(root);
    strata::BestTracker best(*backend, parameters, strata::Selection::val_acc);
    strata::PatienceStop patience(o.patience);
    const std::array<strata::FitHook*, 3> hooks{&print, &best, &patience};
    strata::FitState state;
    state.epochs = o.epochs;
    fit(strata::FitContext{executor, adam, parameters, *backend, *comm}, strata::FitOptions{},
        hooks, state);

    if (root) {
        for (const strata::Parameter& p : parameters.all()) {
            if (p.name == "l0.scale.shift") {  // the CPU backend's memory is host memory
                const auto [lo, hi] =
                    std::minmax_element(p.value.data, p.value.data + p.value.cols);
                std::printf("learned scale s = 1 + t: min %.3f, max %.3f\n", 1.0f + *lo,
                            1.0f + *hi);
            }
        }
        if (!state.stop_reason.empty()) {
            std::printf("%s\n", state.stop_reason.c_str());
        }
        std::printf("best epoch %lld (val_acc %.4f)\ntest_accuracy=%.4f\n",
                    static_cast<long long>(state.best->epoch), state.best->val_acc,
                    state.best->test_acc);
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    strata::MpiSession mpi(argc, argv);
    CLI::App app{"Train a GCN with a custom layer (a learnable per-column scale) with Strata"};
    Options o;
    app.add_option("--data", o.data, "Strata graph file (.h5) or partition directory");
    app.add_option("--epochs", o.epochs, "Epochs")->check(CLI::PositiveNumber);
    app.add_option("--lr", o.lr, "Adam learning rate")->check(CLI::PositiveNumber);
    app.add_option("--hidden", o.model.hidden, "Hidden width")->check(CLI::PositiveNumber);
    app.add_option("--dropout", o.model.dropout, "Dropout rate")->check(CLI::Range(0.0, 0.99));
    app.add_option("--weight-decay", o.model.weight_decay, "L2 on layer 0's weights and scale");
    app.add_option("--patience", o.patience,
                   "Stop after N epochs without a better val_acc (0: off)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--seed", o.seed, "Seed of initialization, dropout and partitioning");
    app.add_option("--threads", o.threads, "CPU threads per rank (0: OpenMP default)");
    app.add_flag("--check", o.check, "Finite-difference check of the custom op, then exit");
    CLI11_PARSE(app, argc, argv);
    try {
        if (o.check) {
            return example::check_column_scale() ? 0 : 1;
        }
        STRATA_CHECK(!o.data.empty(), "--data is required (e.g. data/cora.h5)");
        return train(o);
    } catch (const std::exception& e) {
        if (mpi.world_size() > 1) {
            mpi.abort(e.what());
        }
        std::fprintf(stderr, "custom_layer: error: %s\n", e.what());
        return 1;
    }
}
