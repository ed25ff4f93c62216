// `strata train`: wiring only — args → backend → communicator → local part → model → trainer,
// plus checkpoints (--checkpoint-dir, --resume) and the graceful stop on SIGTERM/SIGINT.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "apps/commands/command.hpp"
#include "apps/commands/device_options.hpp"
#include "apps/commands/train_report.hpp"
#include "datasets/normalize.hpp"
#include "layers/checkpoint.hpp"
#include "layers/model_builder.hpp"
#include "layers/training_inputs.hpp"
#include "partition/distributed_load.hpp"
#include "src/base/atomic_output.hpp"
#include "src/base/error.hpp"
#include "src/base/signals.hpp"
#include "src/nn/trainer.hpp"

namespace strata::app {
namespace {

struct TrainOptions {
    std::string data;
    std::string model = "gcn";
    GcnOptions gcn;
    int epochs = 200;
    float lr = 0.01f;
    std::uint64_t seed = 0;
    bool row_normalize = false;
    int early_stop = 0;
    std::string metrics;
    DeviceOptions device;
    std::string partition_method = "metis";
    bool quiet = false;
    std::string checkpoint_dir;
    int checkpoint_every = 10;
    bool resume = false;
    std::string inject_failure;  // "rank:epoch", hidden: for testing the abort path
    std::string inject_signal;   // "rank:epoch", hidden: raise SIGTERM after that epoch
    int epoch_sleep_ms = 0;      // hidden: slows epochs down (tests that signal a running job)
};

/// Parses a hidden "RANK:EPOCH" test option.
std::pair<int, int> rank_epoch(const std::string& spec, const char* option) {
    const auto colon = spec.find(':');
    STRATA_CHECK(colon != std::string::npos, option, ": expected RANK:EPOCH, got '", spec, "'");
    return {std::atoi(spec.substr(0, colon).c_str()), std::atoi(spec.substr(colon + 1).c_str())};
}

/// Throws on rank `r` at epoch `e` when --inject-failure r:e (or STRATA_INJECT_FAILURE) says so.
void maybe_inject_failure(const std::string& spec, int rank, int epoch) {
    if (spec.empty()) {
        return;
    }
    const auto [r, e] = rank_epoch(spec, "--inject-failure");
    STRATA_CHECK(!(r == rank && e == epoch), "injected failure on rank ", rank, " at epoch ", epoch,
                 " (--inject-failure ", spec, ")");
}

/// Sends SIGTERM to this process on rank `r` after epoch `e` (--inject-signal r:e): a
/// deterministic stand-in for `scancel --signal=TERM` in tests.
void maybe_inject_signal(const std::string& spec, int rank, int epoch) {
    if (spec.empty()) {
        return;
    }
    const auto [r, e] = rank_epoch(spec, "--inject-signal");
    if (r == rank && e == epoch) {
        std::raise(SIGTERM);
    }
}

/// Options that change the training trajectory (beyond the model itself), for the checkpoint
/// identity: a resumed run must use the same ones to continue the same run.
std::string training_identity(const TrainOptions& o) {
    std::array<char, 200> text{};
    std::snprintf(text.data(), text.size(),
                  "adam lr %.9g, seed %llu, early-stop %d, row-normalize-features %d", o.lr,
                  static_cast<unsigned long long>(o.seed), o.early_stop, o.row_normalize ? 1 : 0);
    return text.data();
}

int run_train(const TrainOptions& o) {
    Runtime runtime = open_runtime(o.device);
    Backend& backend = *runtime.backend;
    Communicator& comm = *runtime.comm;
    const bool root = comm.rank() == 0;

    LocalPart part = load_local_part(
        o.data, comm, InMemoryPartitionOptions{.method = o.partition_method, .seed = o.seed});
    if (o.row_normalize) {
        row_normalize_features(part.features);
    }
    TrainingInputs inputs(backend, part);

    GcnOptions gcn = o.gcn;
    gcn.seed = o.seed;
    Model model(backend);
    build_gcn(model, inputs.blocks, comm, part.features.cols,
              static_cast<index_t>(part.num_classes), gcn);
    model.allocate(part.graph.num_owned, part.features.cols, o.seed);
    Adam adam(backend, model.params().size(), AdamOptions{.lr = o.lr});
    Trainer trainer(model, adam, backend, comm, inputs.data);

    RunReport report(root, o.quiet, o.metrics);
    report.start(o.data, comm.size(), runtime.device, runtime.comm_name, describe(gcn), o.seed,
                 o.epochs, part.graph.num_global_vertices);
    std::optional<EpochStats> best;
    std::vector<double> val_losses;
    std::int64_t first_epoch = 1;
    bool early_stopped = false;

    // Checkpoints: rank 0 reads and writes them (parameters are replicated); resuming
    // broadcasts rank 0's checkpoint to every rank.
    std::optional<CheckpointDir> checkpoints;
    Checkpoint state;  // identity, config and progress; params filled at each save
    if (!o.checkpoint_dir.empty()) {
        checkpoints.emplace(o.checkpoint_dir);
        state.gcn = gcn;
        state.row_normalize = o.row_normalize;
        state.partition_method = o.partition_method;
        state.dataset_path = o.data;
        if (root) {
            state.identity = {
                .model = model_identity(gcn, o.row_normalize),
                .parameters = parameter_summary(model),
                .dataset = data_identity(o.data),
                .partition = partition_identity(o.data, comm.size(), o.partition_method, o.seed),
                .training = training_identity(o)};
        }
    }
    if (o.resume) {
        std::array<std::int64_t, 1> found{0};
        Checkpoint loaded;
        if (root) {
            if (auto newest = checkpoints->load_newest()) {
                for (const auto& skipped : newest->skipped) {
                    report.warn("skipping unreadable checkpoint " + skipped);
                }
                check_identity(newest->checkpoint, state.identity, IdentityCheck::all,
                               newest->path.string());
                loaded = std::move(newest->checkpoint);
                found[0] = 1;
                for (const auto& moved : checkpoints->set_aside_newer_than(loaded.epoch)) {
                    report.warn("renamed to " + moved.filename().string());
                }
                report.note("resuming from " + newest->path.string() + " (epoch " +
                                std::to_string(loaded.epoch) + ")",
                            /*even_if_quiet=*/true);
            } else {
                report.note("no checkpoint in " + o.checkpoint_dir + ": starting at epoch 1",
                            /*even_if_quiet=*/true);
            }
        }
        comm.broadcast(std::as_writable_bytes(std::span<std::int64_t>(found)), 0);
        if (found[0] != 0) {
            broadcast_checkpoint(loaded, comm, 0);
            model.upload_params(loaded.params);
            adam.set_state(loaded.optimizer_state);
            best = loaded.best;
            val_losses = loaded.val_losses;
            early_stopped = loaded.early_stopped;
            first_epoch = loaded.epoch + 1;
            const std::int64_t kept = report.resume_metrics(loaded.epoch);
            if (!o.metrics.empty() && kept != loaded.epoch) {
                report.warn(o.metrics + ": kept " + std::to_string(kept) +
                            " metrics lines of epochs <= " + std::to_string(loaded.epoch) +
                            " (expected " + std::to_string(loaded.epoch) + ")");
            }
        }
    } else if (root && checkpoints) {
        const auto existing = checkpoints->list();
        STRATA_CHECK(existing.empty(), o.checkpoint_dir, ": already holds checkpoints (",
                     existing.back().second.filename().string(),
                     "); pass --resume to continue that run, or use another --checkpoint-dir");
    }

    // The whole state after `epoch`, written by rank 0 (the others go on and meet it at the
    // next collective).
    auto save_checkpoint = [&](std::int64_t epoch) {
        if (!checkpoints || !root) {
            return;
        }
        state.epoch = epoch;
        state.early_stopped = early_stopped;
        state.params = model.download_params();
        state.optimizer_state = adam.state();
        state.best = best;
        state.val_losses = val_losses;
        checkpoints->save(state);
        report.save_metrics();  // the metrics file matches the newest checkpoint
    };

    if (early_stopped || first_epoch > o.epochs) {
        STRATA_CHECK(best.has_value(), "internal error: resumed checkpoint has no best epoch");
        report.note("training is already complete (" +
                        std::string(early_stopped ? "early stop" : "all epochs") + " at epoch " +
                        std::to_string(first_epoch - 1) + "); nothing to do",
                    /*even_if_quiet=*/true);
        report.finish(*best);
        return 0;
    }

    // After SIGTERM/SIGINT every rank must reach the next epoch boundary within a few epoch
    // times; one that does not is blocked on a dead peer, and the watchdog ends it.
    StopSignals signals;
    auto boundary = std::chrono::steady_clock::now();
    std::chrono::milliseconds longest_epoch{0};
    for (auto epoch = static_cast<int>(first_epoch); epoch <= o.epochs; ++epoch) {
        maybe_inject_failure(o.inject_failure, comm.rank(), epoch);
        const EpochStats stats = trainer.train_epoch(epoch);
        STRATA_CHECK(std::isfinite(stats.loss), "training diverged: loss is ", stats.loss,
                     " at epoch ", epoch, " (try a smaller --lr)");
        report.epoch(stats);
        if (!best || stats.val_acc > best->val_acc) {
            best = stats;
        }
        // Kipf & Welling's criterion: stop when the validation loss exceeds the mean of the
        // previous `early_stop` epochs.
        if (o.early_stop > 0 && static_cast<int>(val_losses.size()) >= o.early_stop) {
            double mean = 0.0;
            for (auto it = val_losses.end() - o.early_stop; it != val_losses.end(); ++it) {
                mean += *it;
            }
            mean /= o.early_stop;
            if (stats.val_loss > mean) {
                report.note("early stop at epoch " + std::to_string(epoch));
                early_stopped = true;
                save_checkpoint(epoch);
                break;
            }
        }
        val_losses.push_back(stats.val_loss);
        if (o.epoch_sleep_ms > 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(o.epoch_sleep_ms));
        }
        maybe_inject_signal(o.inject_signal, comm.rank(), epoch);

        // Every rank stops at the same epoch boundary if any rank got SIGTERM/SIGINT.
        // A signal during the last epoch changes nothing: the run is complete.
        std::array<std::int64_t, 1> stop{signals.received()};
        comm.allreduce_max(stop);
        if (stop[0] != 0) {
            signals.acknowledge();  // every rank is alive and has seen the stop
        }
        const auto now = std::chrono::steady_clock::now();
        longest_epoch = std::max(
            longest_epoch, std::chrono::duration_cast<std::chrono::milliseconds>(now - boundary));
        boundary = now;
        signals.set_grace(
            std::max<std::chrono::milliseconds>(std::chrono::seconds(5), 4 * longest_epoch));
        const bool last = epoch == o.epochs;
        const bool stopping = stop[0] != 0 && !last;
        if (stopping || last || (o.checkpoint_every > 0 && epoch % o.checkpoint_every == 0)) {
            save_checkpoint(epoch);
        }
        if (stopping) {
            report.save_metrics();  // also without --checkpoint-dir
            const std::string where = checkpoints
                                          ? "checkpoint " + checkpoints->path_for(epoch).string() +
                                                " written; rerun with --resume to continue"
                                          : "no --checkpoint-dir, so this progress is lost";
            report.note("strata train: stopped by " +
                            std::string(signal_name(static_cast<int>(stop[0]))) + " after epoch " +
                            std::to_string(epoch) + " of " + std::to_string(o.epochs) + ": " +
                            where,
                        /*even_if_quiet=*/true);
            comm.barrier();  // rank 0 has written the checkpoint before anyone exits
            return 0;
        }
    }
    report.finish(*best);
    comm.barrier();
    return 0;
}

}  // namespace

Command add_train_command(CLI::App& root) {
    auto o = std::make_shared<TrainOptions>();
    CLI::App* cmd =
        root.add_subcommand("train", "Train a GNN full-batch (run under mpirun/srun for K ranks)");
    cmd->add_option("--data", o->data,
                    "Graph .h5 file, or a partition directory from `strata partition`")
        ->required();
    cmd->add_option("--model", o->model, "Model")->check(CLI::IsMember({"gcn"}));
    cmd->add_option("--layers", o->gcn.layers, "Number of GCN layers")->check(CLI::PositiveNumber);
    cmd->add_option("--hidden", o->gcn.hidden, "Hidden width")->check(CLI::PositiveNumber);
    cmd->add_option("--epochs", o->epochs, "Epochs")->check(CLI::PositiveNumber);
    cmd->add_option("--lr", o->lr, "Adam learning rate")->check(CLI::PositiveNumber);
    cmd->add_option("--weight-decay", o->gcn.weight_decay, "L2 coefficient (first layer's weights)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_flag("--decay-all-layers", o->gcn.decay_all_layers,
                  "Apply --weight-decay to every layer's weights");
    cmd->add_option("--dropout", o->gcn.dropout, "Dropout rate")->check(CLI::Range(0.0, 0.99));
    cmd->add_option("--seed", o->seed, "Seed of initialization, dropout and partitioning");
    cmd->add_flag("--row-normalize-features", o->row_normalize,
                  "Divide each feature row by its sum (Kipf & Welling preprocessing)");
    cmd->add_option("--early-stop", o->early_stop,
                    "Stop when val loss exceeds the mean of the last N epochs (0: off)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--metrics", o->metrics, "Write one JSON object per epoch to this file");
    add_device_options(*cmd, o->device);
    cmd->add_option("--partition-method", o->partition_method,
                    "In-memory partitioning of a .h5 --data over the ranks")
        ->check(CLI::IsMember({"metis", "random", "block"}));
    cmd->add_flag("--quiet", o->quiet, "Print only the final line");
    cmd->add_option("--checkpoint-dir", o->checkpoint_dir,
                    "Write checkpoints (ckpt-<epoch>.h5, the newest two kept) to this directory");
    cmd->add_option("--checkpoint-every", o->checkpoint_every,
                    "Checkpoint every N epochs (0: only at the end and on SIGTERM/SIGINT)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_flag("--resume", o->resume,
                  "Continue from the newest valid checkpoint in --checkpoint-dir (if there is "
                  "none, start at epoch 1)")
        ->needs(cmd->get_option("--checkpoint-dir"));
    cmd->add_option("--inject-failure", o->inject_failure)
        ->group("")
        ->envname("STRATA_INJECT_FAILURE");
    cmd->add_option("--inject-signal", o->inject_signal)
        ->group("")
        ->envname("STRATA_INJECT_SIGNAL");
    cmd->add_option("--epoch-sleep-ms", o->epoch_sleep_ms)
        ->group("")
        ->envname("STRATA_EPOCH_SLEEP_MS");
    return {cmd, [o] { return run_train(*o); }};
}

}  // namespace strata::app
