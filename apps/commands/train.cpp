// `strata train`: flags -> a run configuration (training/run_config.hpp; --config FILE gives a
// whole one, flags override it), the plan resolved (planner/resolve_plan.hpp), then one Session
// (training/session.hpp) reporting through RunReport. The one place that knows which flag sets
// which option, so an option's error names its flag here, once.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "apps/commands/cli_checks.hpp"
#include "apps/commands/command.hpp"
#include "apps/commands/model_options.hpp"
#include "apps/commands/option_flags.hpp"
#include "apps/commands/plan_defaults.hpp"
#include "apps/commands/runtime_options.hpp"
#include "apps/commands/train_report.hpp"
#include "layers/sparse_features.hpp"
#include "planner/resolve_plan.hpp"
#include "src/base/error.hpp"
#include "training/session.hpp"

namespace strata::app {
namespace {

/// The flags of `strata train`: values land in `flags` (or the on/off strings), and `given` maps
/// each run option to the flag that sets it.
struct TrainFlags {
    RunConfig flags;
    ModelOptions model;
    std::string config_file;
    bool quiet = false;
    std::string overlap = "on";
    std::string chunk_shuffle = "on";
    std::string grad_zero_scale = "on";
    std::string guard = "on";
    RuntimeOptions runtime;
    FlagTable options;  ///< run option -> its flag
};

/// The configuration the flags describe: --config FILE (or the defaults), the given flags over
/// it, the model from the model flags when any is given (or without a file).
RunConfig config_of(const TrainFlags& t) {
    RunConfig config;
    if (!t.config_file.empty()) {
        std::ifstream in(t.config_file);
        STRATA_CHECK(in.good(), t.config_file, ": cannot read the run configuration");
        std::stringstream text;
        text << in.rdbuf();
        config = config_from_json(text.str(), t.config_file);
    }
    RunConfig flags = t.flags;
    flags.overlap = t.overlap == "on";
    flags.chunk_shuffle = t.chunk_shuffle == "on";
    flags.grad_zero_scale = t.grad_zero_scale == "on";
    flags.guard = t.guard == "on";
    flags.device = t.runtime.device;
    flags.comm = t.runtime.comm;
    flags.threads = t.runtime.threads;
    for (const auto& [key, flag] : t.options) {
        if (flag->count() > 0) {
            copy_option(key, flags, config);
        }
    }
    const bool model_flags =
        t.model.model_option->count() > 0 || !t.model.spec_file.empty() ||
        std::any_of(t.model.options.begin(), t.model.options.end(),
                    [](const auto& option) { return option.second->count() > 0; });
    if (model_flags || t.config_file.empty()) {
        const std::uint64_t seed = config.model.seed;
        config.model = resolve_model(t.model);
        config.model.seed = seed;
    }
    return config;
}

int run_train(const TrainFlags& t, const TrainExtensions& extensions) {
    RunConfig config = config_of(t);
    validate(config);  // before the runtime: a bad option fails without starting anything
    Runtime runtime =
        open_runtime({.device = config.device, .comm = config.comm, .threads = config.threads});
    Communicator& comm = *runtime.comm;
    const bool root = comm.rank() == 0;
    RunReport report(root, t.quiet);
    if (!config.plan.empty()) {
        const planner::ResolvedPlan plan = planner::resolve_plan(config, comm);
        config = plan.config;
        report.note(plan.line, false);
        if (!plan.warning.empty()) {
            report.warning(plan.warning);
        }
    }
    std::vector<std::unique_ptr<FitHook>> owned_hooks;
    if (extensions.hooks) {
        owned_hooks = extensions.hooks(comm.rank());
    }
    SessionOptions options{.observer = &report};
    for (auto& hook : owned_hooks) {
        options.hooks.push_back(hook.get());
    }
    Session session(config, runtime, std::move(options));
    (void)session.run();
    return 0;
}

CLI::Option* option(TrainFlags& t, const std::string& key, CLI::Option* flag) {
    t.options.emplace_back(key, flag);
    return flag;
}

}  // namespace

Command add_train_command(CLI::App& root, TrainExtensions extensions) {
    auto t = std::make_shared<TrainFlags>();
    RunConfig& f = t->flags;
    CLI::App* cmd =
        root.add_subcommand("train", "Train a GNN full-batch (run under mpirun/srun for K ranks)");
    cmd->add_option("--config", t->config_file,
                    "A run configuration (JSON: every option of docs/training.md, as the first "
                    "metrics record and checkpoints store it); flags given beside it override it")
        ->check(CLI::ExistingFile);
    option(*t, "data",
           cmd->add_option("--data", f.data,
                           "Graph .h5 file, or a partition directory from `strata partition`"));
    add_model_options(*cmd, t->model);
    option(*t, "epochs",
           cmd->add_option("--epochs", f.epochs, "Epochs (default: the recipe's)")
               ->default_str("recipe"));
    option(*t, "lr",
           cmd->add_option("--lr", f.lr, "Adam learning rate (default: the recipe's)")
               ->default_str("recipe"));
    option(*t, "weight_decay_mode",
           cmd->add_option("--weight-decay-mode", f.weight_decay_mode,
                           "l2: added to the gradient (PyTorch Adam's weight_decay); decoupled: "
                           "AdamW"));
    option(*t, "seed",
           cmd->add_option("--seed", f.seed, "Seed of initialization, dropout and partitioning"));
    CLI::Option* normalize =
        option(*t, "row_normalize_features",
               cmd->add_flag_callback(
                   "--row-normalize-features", [t] { t->flags.row_normalize_features = true; },
                   "Divide each feature row by the sum of its absolute values (its sum on "
                   "non-negative features; zero rows unchanged); default: the "
                   "model's recipe - on for every model but gcn, when the features are "
                   "non-negative (docs/models.md)"));
    option(*t, "row_normalize_features",
           cmd->add_flag_callback(
                  "--no-row-normalize-features", [t] { t->flags.row_normalize_features = false; },
                  "Keep the features as stored (the recipe of gcn)")
               ->excludes(normalize));
    option(*t, "recompute",
           cmd->add_option("--recompute", f.recompute,
                           "What backward recomputes instead of keeping: none (fastest), "
                           "aggregation (never keep an aggregation's output), all (keep only "
                           "layer inputs)"));
    option(*t, "eval_every",
           cmd->add_option("--eval-every", f.eval_every,
                           "Evaluate every N epochs (and at the last epoch)"));
    option(*t, "select_by",
           cmd->add_option("--select-by", f.select_by,
                           "Which evaluated epoch is best (reported, checkpointed, served by "
                           "predict): val_acc, val_loss, or val_auc (two-class tasks)")
               ->default_str("recipe"));
    option(*t, "early_stop",
           cmd->add_option("--early-stop", f.early_stop,
                           "Stop when val loss exceeds the mean of the last N evaluations (0: "
                           "off)"));
    option(*t, "patience",
           cmd->add_option("--patience", f.patience,
                           "Stop after N evaluations without a better --select-by value (0: off)")
               ->default_str("recipe"));
    option(*t, "metrics",
           cmd->add_option("--metrics", f.metrics,
                           "Write one JSON object per epoch to this file as it ends (the first "
                           "holds the run configuration); an existing file is refused unless "
                           "--force (replace) or --resume (keep its records up to the resumed "
                           "epoch, then append)"));
    option(*t, "overwrite",
           cmd->add_flag("--force,--overwrite", f.overwrite,
                         "Replace an existing --metrics file (the run option overwrite)"));
    for (const auto& [key, flag] : add_runtime_flags(*cmd, t->runtime)) {
        option(*t, key, flag);
    }
    option(*t, "split_index",
           cmd->add_option("--split-index", f.split_index,
                           "Which of the dataset's splits (train/val/test masks) to use, from 0"));
    option(*t, "partition_method",
           cmd->add_option("--partition-method", f.partition_method,
                           "In-memory partitioning of a .h5 --data over the ranks: ptscotch (the "
                           "ranks partition their slices together: no rank holds the whole "
                           "graph), metis (serial, on rank 0, which reads the whole adjacency; "
                           "what strata plan measures), random, block, or auto (ptscotch; metis "
                           "under --plan)"));
    option(*t, "parallel",
           cmd->add_option(
               "--parallel", f.parallel,
               "graph: every rank owns a part of the graph and runs every layer (exact); "
               "pipeline: every rank runs a stage of consecutive layers on the whole graph, "
               "chunk by chunk (GNNPipe; less traffic for deep models, stale rows between "
               "chunks, see docs/pipeline.md)"));
    option(*t, "stages",
           cmd->add_option("--stages", f.stages, "Pipeline stages (default: ranks / ways)")
               ->default_str("ranks / ways"));
    option(*t, "ways",
           cmd->add_option("--ways", f.ways,
                           "Pipeline: ranks per stage (the W x S hybrid); each way owns C/W "
                           "chunks and exchanges boundary rows with the stage's other ways"));
    option(*t, "chunks",
           cmd->add_option("--chunks", f.chunks,
                           "Pipeline chunks: METIS into 4 C parts merged 4-to-1 at random; 1 is "
                           "exact (default: a partition directory's chunk map from strata "
                           "partition --chunks, else 4 per stage and way)")
               ->default_str("4 x stages x ways"));
    option(*t, "chunk_shuffle",
           cmd->add_option("--chunk-shuffle", t->chunk_shuffle,
                           "Pipeline: a new chunk order every epoch (GNNPipe's technique 1)")
               ->check(CLI::IsMember({"on", "off"})));
    option(*t, "grad_zero_scale",
           cmd->add_option("--grad-zero-scale", t->grad_zero_scale,
                           "Pipeline: zero historical gradients every epoch and scale processed "
                           "chunks' by 2 (GNNPipe's technique 2)")
               ->check(CLI::IsMember({"on", "off"})));
    option(*t, "snapshot_period",
           cmd->add_option("--snapshot-period", f.snapshot_period,
                           "Pipeline: unprocessed chunks' rows come from a snapshot refreshed "
                           "every N epochs (GNNPipe's technique 3; 0: from the last epoch)"));
    option(*t, "guard",
           cmd->add_option("--guard", t->guard,
                           "Pipeline: roll back to the last good weights with less staleness "
                           "when, at each evaluation, the next step's gradient from stale rows "
                           "differs from the one from fresh rows by more than --guard-bound (off: "
                           "GNNPipe as published); with --halo-precision bf16 or int8: the "
                           "precision guard")
               ->check(CLI::IsMember({"on", "off"})));
    option(*t, "guard_window",
           cmd->add_option("--guard-window", f.guard_window,
                           "Pipeline guard: its trigger needs its streak of evaluations to span "
                           "at least N epochs"));
    option(*t, "guard_bound",
           cmd->add_option("--guard-bound", f.guard_bound,
                           "Pipeline guard: the staleness gap it tolerates at two evaluations in a "
                           "row, ||s (g_stale - g_fresh)|| / ||s g_fresh|| of the next step's "
                           "gradients, each coordinate scaled as Adam's step scales it (1: an "
                           "error as large as the update)"));
    option(*t, "feature_slices",
           cmd->add_option("--feature-slices", f.feature_slices,
                           "Graph parallelism as a G x F grid (printed GxF): F column slices per "
                           "graph part, G = ranks / F parts; aggregations run on column slices "
                           "inside each graph group, dense ops on row chunks (docs/layouts.md). "
                           "Each feature group (F ranks) is placed inside one node, the graph "
                           "groups across nodes (consecutive ranks, with a warning, when a node's "
                           "ranks are not a multiple of F). With --parallel pipeline: F slices "
                           "inside each stage (S x F), or inside each way (S x W x F; "
                           "docs/pipeline.md). 1: every rank owns a whole part (1D)"));
    option(*t, "column_blocks",
           cmd->add_option("--column-blocks", f.column_blocks,
                           "The grid (--feature-slices > 1): aggregate each column slice in B "
                           "blocks, one after the other: the aggregation's two layout-C buffers "
                           "/ B, B x the switch and halo messages, the same bytes and results "
                           "(docs/layouts.md, \"Memory\")"));
    option(*t, "overlap",
           cmd->add_option("--overlap", t->overlap,
                           "on: run the inner SpMM of each aggregation in row blocks and let MPI "
                           "progress the halo exchange and gradient all-reduces between them "
                           "(real overlap over TCP); off: one inner SpMM, then wait (the same "
                           "results, bit for bit)")
               ->check(CLI::IsMember({"on", "off"})));
    option(*t, "halo_precision",
           cmd->add_option("--halo-precision", f.halo_precision,
                           "What halo rows (forward rows and backward gradients) cross the wire "
                           "as: fp32 (exact), bf16 (2 bytes a value, round to nearest even) or "
                           "int8 (1 byte a value plus a 4-byte scale per row); in the layer "
                           "pipeline its stage transfers and mirror rows. On the CPU; with --guard "
                           "on, each evaluation is repeated with fp32 halos (the pipeline: the "
                           "next step with fp32 transfers) and the run falls back to fp32 when "
                           "they disagree")
               ->default_str("fp32"));
    option(*t, "halo_rounding",
           cmd->add_option("--halo-rounding", f.halo_rounding,
                           "How values round to --halo-precision bf16 or int8: nearest, or "
                           "stochastic (up or down with probability by nearness, so the expected "
                           "value is exact; the random number of a value is keyed by the seed, "
                           "epoch, layer, vertex and column, as dropout's masks). Graph "
                           "parallelism; the same bytes")
               ->check(CLI::IsMember({"nearest", "stochastic"}))
               ->default_str("nearest"));
    option(*t, "precision_margin",
           cmd->add_option("--precision-margin", f.precision_margin,
                           "Precision guard: the validation-accuracy gap (a fraction; 0.02 is two "
                           "points) between fp32 and compressed halos that, at two evaluations in "
                           "a row, switches the run to fp32 halos")
               ->default_str("0.02"));
    option(
        *t, "sparse_features",
        cmd->add_option(
            "--sparse-features", f.sparse_features,
            "auto: store the input features as CSR when at most " +
                std::to_string(std::lround(100.0 * sparse_features_threshold)) +
                " % of them are non-zero and the model reads them through a linear layer (x W and "
                "its weight gradient become SpMMs, input dropout acts on the "
                "non-zeros); on: always (an error when the model cannot); off: "
                "always dense. The same results either way, to rounding"));
    option(*t, "local_order",
           cmd->add_option("--local-order", f.local_order,
                           "Vertex order inside each rank's part, for the locality of the "
                           "SpMMs, computed at load: rcm (reverse Cuthill-McKee on the part's "
                           "inner block), metis (METIS blocks of 1024 rows: slower to compute, "
                           "best on graphs with small communities) or none (the partition's "
                           "order). Graph parallelism only; the same results to rounding"));
    option(*t, "comm_timeout",
           cmd->add_option("--comm-timeout", f.comm_timeout,
                           "After loading, a rank that waits this many seconds for another rank "
                           "in one operation (a cut or crawling network link, a stuck rank) names "
                           "it and ends the job (0: wait forever; MPI communication only)"));
    option(
        *t, "plan",
        cmd->add_option("--plan", f.plan,
                        "auto: plan this run (strata plan for the launched rank count) and use "
                        "the recommended --parallel and --recompute (or --stages/--ways/--chunks "
                        "for the pipeline); FILE: take them from strata plan --json's output"));
    option(*t, "machine", add_machine_option(*cmd, f.machine, "--plan auto: the machine model"));
    cmd->add_flag("--quiet", t->quiet, "Print only the final line");
    option(*t, "profile",
           cmd->add_flag("--profile", f.profile,
                         "Time the training step's phases (GEMM, aggregation, attention, "
                         "elementwise with dropout, loss, optimizer, exposed wait) on every rank, "
                         "the backend synchronized around each step; print the slowest rank's per "
                         "epoch and add them to the metrics ('phases'). Graph parallelism only"));
    option(*t, "trace",
           cmd->add_option("--trace", f.trace,
                           "Write a timeline of the traced epochs (--trace-epochs) to this file: "
                           "every rank's ops, exchanges (gather, pack, unpack, each MPI wait), "
                           "SpMMs, optimizer and evaluation, as Chrome trace JSON (open it in "
                           "https://ui.perfetto.dev or chrome://tracing); written when they end, "
                           "an existing file replaced only with --force"));
    option(*t, "trace_epochs",
           cmd->add_option("--trace-epochs", f.trace_epochs,
                           "N or N:M, the epochs --trace records (default: the second, or the "
                           "first of a one-epoch run)"));
    option(*t, "checkpoint_dir",
           cmd->add_option("--checkpoint-dir", f.checkpoint_dir,
                           "Write checkpoints (ckpt-<epoch>.h5, the newest two kept) to this "
                           "directory"));
    option(*t, "checkpoint_every",
           cmd->add_option("--checkpoint-every", f.checkpoint_every,
                           "Checkpoint every N epochs (0: only at the end and on "
                           "SIGTERM/SIGINT)"));
    option(*t, "resume",
           cmd->add_flag("--resume", f.resume,
                         "Continue from the newest valid checkpoint in --checkpoint-dir (if "
                         "there is none, start at epoch 1)"));
    // Numbers are checked as numbers here; their ranges are the configuration's to check.
    for (const auto& [key, flag] : t->options) {
        for (const char* numeric :
             {"epochs", "lr", "seed", "eval_every", "early_stop", "patience", "split_index",
              "stages", "ways", "chunks", "snapshot_period", "guard_window", "guard_bound",
              "feature_slices", "column_blocks", "comm_timeout", "precision_margin",
              "checkpoint_every", "threads"}) {
            if (key == numeric) {
                flag->check(a_number());
            }
        }
    }
    return {cmd, [t, extensions] {
                const bool has_data = std::any_of(
                    t->options.begin(), t->options.end(),
                    [](const auto& o) { return o.first == "data" && o.second->count() > 0; });
                STRATA_CHECK(has_data || !t->config_file.empty(),
                             "--data is required (or a --config file naming it)");
                // The library names the option; the flag that sets it is added once, here.
                return with_flag_names(t->options, "--config",
                                       [&] { return run_train(*t, extensions); });
            }};
}

}  // namespace strata::app
