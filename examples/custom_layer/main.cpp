// custom_layer: trains the example model (scaled_gcn.hpp, with the custom ColumnScaleOp) on a
// Strata graph file with the library's Session (the run `strata train` makes, with this model in
// place of one of the zoo's), printing one line per epoch and the test accuracy of the epoch with
// the best validation accuracy. Runs under mpirun too
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

#include "gradient_check.hpp"
#include "scaled_gcn.hpp"
#include "src/base/error.hpp"
#include "src/comm/mpi_session.hpp"
#include "training/session.hpp"

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

/// One line per epoch on rank 0 (the session reports to it; it never prints itself).
class PrintEpochs final : public strata::RunObserver {
public:
    explicit PrintEpochs(bool root) : root_(root) {}
    void epoch(const strata::EpochStats& s) override {
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
    strata::Runtime runtime = strata::open_runtime({.threads = o.threads});
    const bool root = runtime.comm->rank() == 0;

    // The run: the library's own assembly (load, order, upload, executor, optimizer, the fit
    // loop and its hooks), with the custom model in place of one of the zoo's.
    strata::RunConfig config;
    config.data = o.data;
    config.epochs = o.epochs;
    config.lr = o.lr;
    config.patience = o.patience;
    config.seed = o.seed;
    config.select_by = "val_acc";
    config.row_normalize_features = true;
    config.partition_method = "metis";
    example::ScaledGcnOptions model = o.model;
    model.seed = o.seed;
    PrintEpochs print(root);
    strata::Session session(
        config, runtime,
        {.observer = &print,
         .build_model = [&](strata::index_t in_features, strata::index_t classes) {
             return strata::BuiltModel{build_scaled_gcn(in_features, classes, model), ""};
         }});
    if (root) {
        std::printf("custom_layer: %s, %d rank(s), %s\nparameters: %s\n", o.data.c_str(),
                    runtime.comm->size(), runtime.device.c_str(),
                    session.parameters().summary().c_str());
    }
    const strata::RunResult result = session.run();

    if (root) {
        for (const strata::Parameter& p : session.parameters().all()) {
            if (p.name == "l0.scale.shift") {  // the CPU backend's memory is host memory
                const auto [lo, hi] =
                    std::minmax_element(p.value.data, p.value.data + p.value.cols);
                std::printf("learned scale s = 1 + t: min %.3f, max %.3f\n", 1.0f + *lo,
                            1.0f + *hi);
            }
        }
        if (!result.stop_reason.empty()) {
            std::printf("%s\n", result.stop_reason.c_str());
        }
        std::printf("best epoch %lld (val_acc %.4f)\ntest_accuracy=%.4f\n",
                    static_cast<long long>(result.best->epoch), result.best->val_acc,
                    result.best->test_acc);
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
