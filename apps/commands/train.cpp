// `strata train`: argument parsing and wiring — runtime → local part → model graph →
// executor → optimizer → fit with its hooks (report, metrics, best weights, early stopping,
// signal stop, checkpoints; --resume restores them).
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "apps/commands/cli_checks.hpp"
#include "apps/commands/command.hpp"
#include "apps/commands/device_options.hpp"
#include "apps/commands/model_options.hpp"
#include "apps/commands/plan_defaults.hpp"
#include "apps/commands/train_report.hpp"
#include "datasets/normalize.hpp"
#include "layers/model_inputs.hpp"
#include "layers/sparse_input_graph.hpp"
#include "partition/chunking.hpp"
#include "partition/distributed_load.hpp"
#include "partition/local_order.hpp"
#include "partition/partition_report.hpp"
#include "planner/layout_plan.hpp"
#include "src/base/atomic_output.hpp"
#include "src/base/error.hpp"
#include "src/base/log.hpp"
#include "src/base/timer.hpp"
#include "src/comm/broadcast_string.hpp"
#include "src/comm/make_communicator.hpp"
#include "src/nn/full_graph_executor.hpp"
#include "src/nn/pipeline_executor.hpp"
#include "training/accuracy_guard.hpp"
#include "training/best_tracker.hpp"
#include "training/checkpointer.hpp"
#include "training/early_stopping.hpp"
#include "training/metrics_writer.hpp"
#include "training/resume.hpp"
#include "training/run_memory.hpp"
#include "training/signal_stop.hpp"

#include <malloc.h>

namespace strata::app {
namespace {

struct TrainOptions {
    std::string data;
    ModelOptions model;
    int epochs = 200;
    float lr = 0.01f;
    std::uint64_t seed = 0;
    bool row_normalize = false;
    int early_stop = 0;
    int patience = 0;
    int eval_every = 1;
    std::string select_by = "val_acc";
    std::string recompute = "none";
    std::string weight_decay_mode = "l2";
    /// The recipe's training options apply where these flags are not given.
    CLI::Option* lr_option = nullptr;
    CLI::Option* epochs_option = nullptr;
    CLI::Option* patience_option = nullptr;
    CLI::Option* select_by_option = nullptr;
    CLI::Option* row_normalize_option = nullptr;
    std::string metrics;
    DeviceOptions device;
    std::string partition_method = "ptscotch";
    CLI::Option* partition_method_option = nullptr;
    bool quiet = false;
    std::string checkpoint_dir;
    int checkpoint_every = 10;
    bool resume = false;
    int split_index = 0;
    double comm_timeout = 300.0;  ///< seconds one wait for another rank may take (0: forever)
    /// Layer-pipeline parallelism (src/nn/pipeline_executor.hpp).
    std::string parallel = "graph";
    int stages = 0;  ///< 0: ranks / ways
    int ways = 1;
    int chunks = 0;  ///< 0: 4 per stage and way
    int snapshot_period = 23;
    std::string chunk_shuffle = "on";
    std::string grad_zero_scale = "on";
    std::string guard = "on";
    std::string overlap = "on";  ///< --overlap: progress the halo exchange during the inner SpMM
    bool profile = false;        ///< --profile: time the training step's phases
    std::string sparse_features = "auto";  ///< --sparse-features: CSR features for the first linear
    std::string local_order = "rcm";       ///< --local-order: vertex order inside each part
    int guard_window = GuardOptions{}.window;
    std::string plan;     ///< --plan auto|FILE: the planner's layout (planner/layout_plan.hpp)
    std::string machine;  ///< --machine for --plan auto
    CLI::Option* parallel_option = nullptr;
    CLI::Option* recompute_option = nullptr;
    CLI::Option* stages_option = nullptr;
    CLI::Option* ways_option = nullptr;
    CLI::Option* chunks_option = nullptr;
};

bool pipelined(const TrainOptions& o) {
    return o.parallel == "pipeline";
}

/// The pipeline's settings, for the checkpoint identity and the report.
std::string pipeline_identity(const TrainOptions& o) {
    return "parallel pipeline, stages " + std::to_string(o.stages) + ", ways " +
           std::to_string(o.ways) + ", chunks " + std::to_string(o.chunks) + ", chunk shuffle " +
           o.chunk_shuffle + ", grad zero+scale " + o.grad_zero_scale + ", snapshot period " +
           std::to_string(o.snapshot_period) + ", guard " + o.guard +
           (o.guard_window == GuardOptions{}.window
                ? ""
                : ", guard window " + std::to_string(o.guard_window));
}

/// Options that change the training trajectory (beyond the model itself), for the checkpoint
/// identity: a resumed run must use the same ones to continue the same run. --recompute is not
/// one: it changes memory and time, not the result.
std::string training_identity(const TrainOptions& o) {
    std::array<char, 300> text{};
    std::snprintf(text.data(), text.size(),
                  "adam%s lr %.9g, seed %llu, early-stop %d, patience %d, eval-every %d, "
                  "select-by %s, row-normalize-features %d%s",
                  o.weight_decay_mode == "decoupled" ? "w" : "", o.lr,
                  static_cast<unsigned long long>(o.seed), o.early_stop, o.patience, o.eval_every,
                  o.select_by.c_str(), o.row_normalize ? 1 : 0,
                  o.split_index == 0 ? "" : (", split " + std::to_string(o.split_index)).c_str());
    return pipelined(o) ? std::string(text.data()) + ", " + pipeline_identity(o) : text.data();
}

/// --resume of a layer-pipeline run: this rank's history and the guard's state (every rank
/// evaluates the same checks on the broadcast checkpoint, so all fail or none).
void restore_pipeline_state(const Checkpoint& c, PipelineExecutor& pipeline, AccuracyGuard* guard,
                            const Communicator& comm) {
    STRATA_CHECK(c.pipeline_history.size() == static_cast<std::size_t>(comm.size()),
                 "the checkpoint holds the pipeline state of ", c.pipeline_history.size(),
                 " ranks, this run has ", comm.size(),
                 c.pipeline_history.empty()
                     ? " (it was written by a strata without pipeline checkpoints, format 3, and "
                       "cannot continue this run exactly: train again with a new "
                       "--checkpoint-dir)"
                     : "");
    pipeline.restore_history(c.pipeline_history[static_cast<std::size_t>(comm.rank())]);
    STRATA_CHECK(c.guard.has_value() == (guard != nullptr), "the checkpoint ",
                 c.guard ? "holds" : "lacks", " accuracy guard state, but this run has --guard ",
                 guard != nullptr ? "on" : "off");
    if (guard != nullptr) {
        guard->set_state(*c.guard);
    }
}

/// The run's memory plan: this rank's lines, and the totals reduced over ranks.
MemoryPlanSummary summarize(std::vector<MemoryLine> lines, index_t owned, std::int64_t baseline,
                            Communicator& comm) {
    MemoryPlanSummary summary;
    const std::int64_t total = total_bytes(lines);
    std::array<double, 3> maxima{static_cast<double>(total),
                                 static_cast<double>(total) / std::max<double>(1.0, owned),
                                 static_cast<double>(baseline)};
    comm.allreduce_max(maxima);
    summary.lines = std::move(lines);
    summary.total_bytes = static_cast<std::int64_t>(maxima[0]);
    summary.bytes_per_vertex = maxima[1];
    summary.baseline_rss_bytes = static_cast<std::int64_t>(maxima[2]);
    return summary;
}

/// The model and the recipe's training options for the flags not given.
std::pair<ModelSpec, TrainOptions> resolve(const TrainOptions& given) {
    TrainOptions o = given;
    ModelSpec spec = resolve_model(o.model);
    spec.seed = o.seed;
    const Recipe& recipe = find_model(spec.model).recipe;
    if (o.lr_option->count() == 0) {
        o.lr = recipe.lr;
    }
    if (o.epochs_option->count() == 0) {
        o.epochs = recipe.epochs;
    }
    if (o.patience_option->count() == 0) {
        o.patience = recipe.patience;
    }
    if (o.select_by_option->count() == 0) {
        o.select_by = recipe.select_by;
    }
    if (o.row_normalize_option->count() == 0) {
        o.row_normalize = recipe.row_normalize;
    }
    if (!o.plan.empty()) {
        for (const CLI::Option* option : {o.parallel_option, o.recompute_option, o.stages_option,
                                          o.ways_option, o.chunks_option}) {
            STRATA_CHECK(option->count() == 0, option->get_name(),
                         " cannot be given with --plan (the plan chooses it)");
        }
    }
    if (!pipelined(o)) {
        for (const CLI::Option* option : {o.stages_option, o.ways_option, o.chunks_option}) {
            STRATA_CHECK(option->count() == 0, option->get_name(), " needs --parallel pipeline");
        }
    }
    STRATA_CHECK(!o.profile || !pipelined(o),
                 "--profile times graph parallelism's training step; the layer pipeline reports "
                 "its bubble and stage waits in the metrics instead");
    return {spec, o};
}

/// --plan auto|FILE: rank 0 reads the plan (auto: plans this run's data, model and rank
/// count) and every rank applies its recommended layout.
std::string apply_plan(const ModelSpec& spec, TrainOptions& o, Communicator& comm) {
    std::string chosen;
    if (comm.rank() == 0) {
        planner::ChosenLayout layout;
        if (o.plan == "auto") {
            planner::PlanRequest request{.data = o.data,
                                         .spec = spec,
                                         .ranks = {comm.size()},
                                         .machine = load_machine(o.machine),
                                         .cache_dir = default_plan_cache(),
                                         .seed = o.seed};
            const planner::Plan plan = planner::make_plan(request);
            layout =
                planner::chosen_layout(planner::plan_to_json(plan), "--plan auto", comm.size());
        } else {
            std::ifstream in(o.plan);
            STRATA_CHECK(in.good(), o.plan, ": cannot read the plan");
            std::stringstream text;
            text << in.rdbuf();
            layout = planner::chosen_layout(text.str(), o.plan, comm.size());
        }
        chosen = layout.parallel + " " + layout.recompute + " " + std::to_string(layout.stages) +
                 " " + std::to_string(layout.ways) + " " + std::to_string(layout.chunks);
    }
    broadcast_string(comm, chosen, 0);
    std::istringstream fields(chosen);
    int stages = 0;
    int ways = 0;
    int chunks = 0;
    fields >> o.parallel >> o.recompute >> stages >> ways >> chunks;
    const std::string what = "plan: " + std::string(o.plan == "auto" ? "planned here" : o.plan) +
                             ": --parallel " + o.parallel;
    if (pipelined(o)) {
        STRATA_CHECK(!o.profile,
                     "--profile: the plan chose the layer pipeline, which reports "
                     "its bubble and stage waits in the metrics instead");
        o.stages = stages;
        o.ways = ways;
        o.chunks = chunks;
        return what + " --stages " + std::to_string(stages) + " --ways " + std::to_string(ways) +
               " --chunks " + std::to_string(chunks) + " for " + std::to_string(comm.size()) +
               " ranks";
    }
    // The plan's statistics come from METIS's partition of a .h5 (planner/partition_stats.cpp):
    // a planned graph-parallel run partitions the same way, unless told otherwise.
    std::string method;
    if (o.partition_method_option->count() == 0 && !std::filesystem::is_directory(o.data) &&
        comm.size() > 1) {
        o.partition_method = "metis";
        method = " --partition-method metis";
    }
    return what + " --recompute " + o.recompute + method + " for " + std::to_string(comm.size()) +
           " ranks";
}

int run_train(const ModelSpec& spec, const TrainOptions& given, const TrainExtensions& extensions) {
    Runtime runtime = open_runtime(given.device);
    Backend& backend = *runtime.backend;
    Communicator& comm = *runtime.comm;
    const bool root = comm.rank() == 0;
    TrainOptions planned = given;
    const std::string plan_line =
        given.plan.empty() ? std::string() : apply_plan(spec, planned, comm);

    // Data: the model is built from the part's sizes (it names the graph operator to upload),
    // everything is uploaded once, then the host copy is released (its bytes would otherwise
    // stay for the whole run next to the backend's).
    TrainOptions o = planned;
    std::unique_ptr<Communicator> self;  // the pipeline's per-rank whole graph and evaluation
    if (pipelined(o)) {
        o.stages = o.stages == 0 ? std::max(1, comm.size() / o.ways) : o.stages;
        if (o.chunks == 0 && std::filesystem::is_directory(o.data)) {
            // The partition's chunk map (0 if it has none: load_chunked_part names the fix).
            const PartitionReport stored = read_partition_report(o.data);
            o.chunks = stored.chunks_per_part * stored.num_parts;
        }
        o.chunks = o.chunks == 0 ? 4 * o.stages * o.ways : o.chunks;
        STRATA_CHECK(o.chunks % o.ways == 0, "--chunks ", o.chunks, " with --ways ", o.ways,
                     ": every way needs the same number of chunks (a multiple of ", o.ways, ")");
        STRATA_CHECK(o.stages * o.ways == comm.size(), "--stages ", o.stages, " x --ways ", o.ways,
                     " = ", o.stages * o.ways, " ranks, but the job has ", comm.size(),
                     " (run mpirun -np ", o.stages * o.ways, ")");
        self = make_communicator(backend, CommKind::mpi, MPI_COMM_SELF);
    }
    std::vector<index_t> chunk_offsets;
    std::optional<HostCsr> structure;  // the hybrid's mirror lists are made from it
    std::int64_t nnz = 0;
    const Recompute recompute = *parse_recompute(o.recompute);
    const Selection selection = parse_selection(o.select_by);
    const std::int64_t baseline = current_rss_bytes();  // MPI, BLAS, the program: before any data
    if (root && !o.metrics.empty()) {
        const AtomicOutput probe(o.metrics, /*overwrite=*/true);  // fail before loading any data
    }
    std::optional<BuiltModel> model;
    FeatureChoice features;
    std::string order_line = "local order: none (the layer pipeline keeps its chunks' order)";
    std::unique_ptr<ModelInputs> inputs;
    std::vector<MemoryLine> lines;
    index_t owned = 0;
    global_id vertices = 0;
    std::string split_line;
    int split = 0;
    {
        LocalPart part;
        if (pipelined(o)) {
            ChunkedPart chunked = load_chunked_part(
                o.data, comm, ChunkOptions{.chunks = o.chunks, .seed = o.seed}, o.split_index);
            part = std::move(chunked.part);
            chunk_offsets = std::move(chunked.chunk_offsets);
            if (o.ways > 1) {
                structure = part.graph.inner;
            }
        } else {
            part = load_local_part(
                o.data, comm,
                InMemoryPartitionOptions{.method = o.partition_method, .seed = o.seed},
                o.split_index);
            const Stopwatch ordering;
            apply_local_order(part, *parse_local_order(o.local_order));
            std::array<char, 96> text{};
            std::snprintf(text.data(), text.size(), "local order: %s (%.3f s on rank %d)",
                          o.local_order.c_str(), ordering.seconds(), comm.rank());
            order_line = text.data();
        }
        nnz = part.graph.inner.nnz();
        split = part.split;
        split_line = "split: " + std::to_string(part.split) + " of " +
                     std::to_string(part.num_splits) + " (train " +
                     std::to_string(part.global_train) + ", val " +
                     std::to_string(part.global_val) + ", test " +
                     std::to_string(part.global_test) + " vertices)";
        if (o.row_normalize) {
            row_normalize_features(part.features);
        }
        model.emplace(
            build_model(spec, part.features.cols, static_cast<index_t>(part.num_classes)));
        features = choose_feature_storage(*parse_sparse_features(o.sparse_features), part.features,
                                          pipelined(o) ? "the layer pipeline reads dense features"
                                                       : sparse_input_blocker(model->graph),
                                          comm);
        if (features.storage == FeatureStorage::sparse) {
            model->graph = with_sparse_input(model->graph);
        }
        inputs = std::make_unique<ModelInputs>(backend, self ? *self : comm, part, model->graph,
                                               AggregationOptions{.overlap = o.overlap == "on"},
                                               features.storage);
        lines = inputs->lines;
        owned = part.graph.num_owned;
        vertices = part.graph.num_global_vertices;
    }
    (void)malloc_trim(0);
    // From here on no rank has a reason to wait long for another (loading, where rank 0 may
    // partition a large graph alone, is over): a longer wait is a failed link or rank.
    comm.set_wait_limit(o.comm_timeout);

    ModelGraph& graph = model->graph;
    ModelParameters parameters(backend, graph, o.seed);
    std::unique_ptr<Executor> executor;
    PipelineExecutor* pipeline = nullptr;
    if (pipelined(o)) {
        auto p = std::make_unique<PipelineExecutor>(
            backend, comm, *self, graph, parameters, *inputs->aggregation, inputs->inputs->data(),
            PipelineOptions{.stages = o.stages,
                            .ways = o.ways,
                            .structure = structure ? &*structure : nullptr,
                            .chunk_offsets = chunk_offsets,
                            .shuffle = o.chunk_shuffle == "on",
                            .grad_zero_scale = o.grad_zero_scale == "on",
                            .snapshot_period = o.snapshot_period,
                            .seed = o.seed,
                            .nnz = nnz,
                            .recompute = recompute});
        pipeline = p.get();
        executor = std::move(p);
        structure.reset();
    } else {
        executor = std::make_unique<FullGraphExecutor>(
            backend, comm, graph, parameters, *inputs->aggregation, inputs->inputs->data(),
            inputs->executor_options(
                {.recompute = recompute, .progress = o.overlap == "on", .profile = o.profile}));
    }
    Adam adam(backend, parameters.size(),
              AdamOptions{.lr = o.lr, .decoupled = o.weight_decay_mode == "decoupled"});
    BestTracker best(backend, parameters, selection);
    lines = run_memory_lines(std::move(lines), executor->memory_plan(), parameters.size());
    const MemoryPlanSummary memory = summarize(lines, owned, baseline, comm);
    std::string per_rank;  // the pipeline's stages hold different layers: each rank's plan
    if (pipeline != nullptr) {
        const std::int64_t total = total_bytes(lines);
        const std::vector<std::byte> all =
            comm.gather(std::as_bytes(std::span<const std::int64_t>(&total, 1)), 0);
        for (std::size_t r = 0; r * sizeof(std::int64_t) < all.size(); ++r) {
            std::int64_t bytes = 0;
            std::memcpy(&bytes, all.data() + r * sizeof(std::int64_t), sizeof(bytes));
            std::array<char, 64> text{};
            std::snprintf(text.data(), text.size(), "%s rank %zu (stage %zu) %.1f MB",
                          r == 0 ? "" : ",", r, r / static_cast<std::size_t>(o.ways),
                          static_cast<double>(bytes) / 1e6);
            per_rank += text.data();
        }
    }

    RunReport report(root, o.quiet);
    report.start(o.data, comm.size(), runtime.device, runtime.comm_name, describe(spec), o.seed,
                 o.epochs, vertices, memory, to_string(recompute));
    report.note(split_line);
    if (!plan_line.empty()) {
        report.note(plan_line);
    }
    if (!runtime.threads_note.empty()) {
        report.note(runtime.threads_note);
    }
    report.note("overlap: " + o.overlap +
                (o.overlap == "on" && comm.needs_progress()
                     ? " (inner SpMM in row blocks, the exchange progressed between them)"
                 : o.overlap == "on" ? " (this communicator needs no progress calls)"
                                     : " (one inner SpMM, then the waits)"));
    report.note(order_line);
    report.note(std::string("features: ") +
                (features.storage == FeatureStorage::sparse
                     ? "sparse (CSR; the first linear is an SpMM, input dropout on the non-zeros)"
                     : "dense") +
                ", " + features.reason);
    if (pipeline != nullptr) {
        report.note("pipeline: " + std::to_string(o.stages) + " stages x " +
                    std::to_string(o.ways) + " ways, " + std::to_string(pipeline->chunks()) +
                    " chunks; " + pipeline->layout().describe(graph));
        report.note("pipeline memory plan per rank:" + per_rank);
        report.note("pipeline: chunk shuffle " + o.chunk_shuffle + ", grad zero+scale " +
                    o.grad_zero_scale + ", snapshot period " + std::to_string(o.snapshot_period) +
                    ", guard " + o.guard);
    }

    FitState state;
    state.epochs = o.epochs;
    std::optional<CheckpointDir> checkpoints;
    Checkpoint base;  // identity and how to rebuild; filled with the state at each save
    if (!o.checkpoint_dir.empty()) {
        checkpoints.emplace(o.checkpoint_dir);
        base.model = spec;
        base.row_normalize = o.row_normalize;
        base.partition_method = o.partition_method;
        base.dataset_path = o.data;
        base.selection = selection;
        if (root) {
            base.identity = {
                .model = model_identity(spec, o.row_normalize),
                .parameters = parameters.summary(),
                .dataset = data_identity(o.data),
                .partition = partition_identity(o.data, comm.size(), o.partition_method, o.seed),
                .training = training_identity(o)};
        }
    }
    std::optional<AccuracyGuard> guard;  // before resume, which restores its state
    if (pipeline != nullptr && o.guard == "on") {
        guard.emplace(*pipeline, parameters, adam, &best,
                      GuardOptions{.select_by = selection, .window = o.guard_window},
                      [&report](const std::string& text) { report.note(text, true); });
    }
    if (o.resume) {
        RestoreMore restore_pipeline;
        if (pipeline != nullptr) {
            restore_pipeline = [&](const Checkpoint& c) {
                restore_pipeline_state(c, *pipeline, guard ? &*guard : nullptr, comm);
            };
        }
        (void)resume(
            *checkpoints, base.identity, comm, parameters, adam, best, state,
            [&](const std::string& text, bool warning) {
                warning ? report.warn(text) : report.note(text, /*even_if_quiet=*/true);
            },
            restore_pipeline);
    } else if (root && checkpoints) {
        refuse_existing_checkpoints(*checkpoints);
    }

    MetricsWriter metrics(
        o.metrics, root, state.epoch,
        MetricsContext{.planned_bytes = memory.total_bytes,
                       .planned_bytes_per_vertex = memory.bytes_per_vertex,
                       .baseline_rss_bytes = memory.baseline_rss_bytes,
                       .split = split,
                       .threads = runtime.threads,
                       .overlap = o.overlap,
                       .features = features.storage == FeatureStorage::sparse ? "sparse" : "dense",
                       .features_density = features.density});
    if (!o.metrics.empty() && state.epoch > 0 && metrics.kept() != state.epoch) {
        report.warn(o.metrics + ": kept " + std::to_string(metrics.kept()) +
                    " metrics records of epochs <= " + std::to_string(state.epoch) + " (expected " +
                    std::to_string(state.epoch) + ")");
    }
    if (state.early_stopped || state.epoch >= state.epochs) {
        report.note("training is already complete (" +
                        std::string(state.early_stopped ? "early stop" : "all epochs") +
                        " at epoch " + std::to_string(state.epoch) + "); nothing to do",
                    /*even_if_quiet=*/true);
        report.finish(state.best);
        return 0;
    }

    std::vector<std::unique_ptr<FitHook>> owned_hooks;
    if (extensions.hooks) {
        owned_hooks = extensions.hooks(comm.rank());
    }
    WindowEarlyStop window(o.early_stop);
    PatienceStop patience(o.patience);
    SignalStop signals(comm);
    std::optional<Checkpointer> checkpointer;
    if (checkpoints) {
        checkpointer.emplace(*checkpoints, o.checkpoint_every, root, base, parameters, adam, best);
        if (pipeline != nullptr) {  // every rank's history, gathered at each save
            checkpointer->add_pipeline_state(comm, [pipeline, &guard] {
                PipelineCheckpointState mine{.history = pipeline->history(), .guard = {}};
                if (guard) {
                    mine.guard = guard->state();
                }
                return mine;
            });
        }
    }
    std::vector<FitHook*> hooks;
    for (auto& hook : owned_hooks) {
        hooks.push_back(hook.get());
    }
    // Order matters: the best weights before early stopping reads them, every stop decision
    // before the checkpointer saves, the report and the metrics record first.
    for (FitHook* hook :
         std::initializer_list<FitHook*>{&report, &metrics, &best, &window, &patience, &signals}) {
        hooks.push_back(hook);
    }
    if (checkpointer) {
        hooks.push_back(&*checkpointer);
    }
    fit(FitContext{*executor, adam, parameters, backend, comm, guard ? &*guard : nullptr},
        FitOptions{.eval_every = o.eval_every,
                   .divergence_hint = [&]() -> std::string {
                       if (!checkpoints || !root) {
                           return {};
                       }
                       const auto saved = checkpoints->list();
                       if (saved.empty()) {
                           return "; no checkpoint was written before it";
                       }
                       return "; the newest checkpoint, " + saved.back().second.string() +
                              " (epoch " + std::to_string(saved.back().first) +
                              "), holds the weights before it: --resume continues from there";
                   }},
        hooks, state);
    if (state.early_stopped) {
        report.note(state.stop_reason);
    }

    if (state.stop_signal != 0) {
        const std::string where = checkpoints ? "checkpoint " +
                                                    checkpoints->path_for(state.epoch).string() +
                                                    " written; rerun with --resume to continue"
                                              : "no --checkpoint-dir, so this progress is lost";
        report.note("strata train: " + state.stop_reason + ": " + where, /*even_if_quiet=*/true);
        comm.barrier();  // rank 0 has written the checkpoint before anyone exits
        return 0;
    }
    report.finish(state.best);
    comm.barrier();
    return 0;
}

}  // namespace

Command add_train_command(CLI::App& root, TrainExtensions extensions) {
    auto o = std::make_shared<TrainOptions>();
    CLI::App* cmd =
        root.add_subcommand("train", "Train a GNN full-batch (run under mpirun/srun for K ranks)");
    cmd->add_option("--data", o->data,
                    "Graph .h5 file, or a partition directory from `strata partition`")
        ->required();
    add_model_options(*cmd, o->model);
    o->epochs_option = cmd->add_option("--epochs", o->epochs, "Epochs (default: the recipe's)")
                           ->check(positive())
                           ->default_str("recipe");
    o->lr_option = cmd->add_option("--lr", o->lr, "Adam learning rate (default: the recipe's)")
                       ->check(positive())
                       ->default_str("recipe");
    cmd->add_option("--weight-decay-mode", o->weight_decay_mode,
                    "l2: added to the gradient (PyTorch Adam's weight_decay); decoupled: AdamW")
        ->check(CLI::IsMember({"l2", "decoupled"}));
    cmd->add_option("--seed", o->seed, "Seed of initialization, dropout and partitioning");
    o->row_normalize_option =
        cmd->add_flag("--row-normalize-features,!--no-row-normalize-features", o->row_normalize,
                      "Divide each feature row by its sum (Kipf & Welling preprocessing; default: "
                      "the recipe's)");
    o->recompute_option =
        cmd->add_option("--recompute", o->recompute,
                        "What backward recomputes instead of keeping: none (fastest), aggregation "
                        "(never keep an aggregation's output), all (keep only layer inputs)")
            ->check(CLI::IsMember({"none", "aggregation", "all"}));
    cmd->add_option("--eval-every", o->eval_every,
                    "Evaluate every N epochs (and at the last epoch)")
        ->check(positive());
    o->select_by_option =
        cmd->add_option("--select-by", o->select_by,
                        "Which evaluated epoch is best (reported, checkpointed, served by predict)")
            ->check(CLI::IsMember({"val_acc", "val_loss"}))
            ->default_str("recipe");
    cmd->add_option("--early-stop", o->early_stop,
                    "Stop when val loss exceeds the mean of the last N evaluations (0: off)")
        ->check(non_negative());
    o->patience_option =
        cmd->add_option("--patience", o->patience,
                        "Stop after N evaluations without a better --select-by value (0: off)")
            ->check(non_negative())
            ->default_str("recipe");
    cmd->add_option("--metrics", o->metrics,
                    "Append one JSON object per epoch to this file (flushed as it happens)");
    add_device_options(*cmd, o->device);
    cmd->add_option("--split-index", o->split_index,
                    "Which of the dataset's splits (train/val/test masks) to use, from 0")
        ->check(non_negative());
    o->partition_method_option =
        cmd->add_option("--partition-method", o->partition_method,
                        "In-memory partitioning of a .h5 --data over the ranks: ptscotch (the "
                        "ranks partition their slices together: no rank holds the whole graph), "
                        "metis (serial, on rank 0, which reads the whole adjacency; what strata "
                        "plan measures, so --plan uses it unless this flag is given), random, "
                        "block")
            ->check(CLI::IsMember({"metis", "ptscotch", "random", "block"}))
            ->capture_default_str();
    o->parallel_option =
        cmd->add_option(
               "--parallel", o->parallel,
               "graph: every rank owns a part of the graph and runs every layer (exact); "
               "pipeline: every rank runs a stage of consecutive layers on the whole graph, "
               "chunk by chunk (GNNPipe; less traffic for deep models, stale rows between "
               "chunks, see docs/pipeline.md)")
            ->check(CLI::IsMember({"graph", "pipeline"}));
    o->stages_option =
        cmd->add_option("--stages", o->stages, "Pipeline stages (default: ranks / ways)")
            ->check(positive())
            ->default_str("ranks");
    o->ways_option =
        cmd->add_option("--ways", o->ways,
                        "Pipeline: ranks per stage (the W x S hybrid); each way owns C/W chunks "
                        "and exchanges boundary rows with the stage's other ways")
            ->check(positive());
    o->chunks_option =
        cmd->add_option("--chunks", o->chunks,
                        "Pipeline chunks: METIS into 4 C parts merged 4-to-1 at random; 1 is "
                        "exact (default: 4 per stage and way; a partition directory's chunk map "
                        "from strata partition --chunks)")
            ->check(positive())
            ->default_str("4 x stages x ways");
    cmd->add_option("--chunk-shuffle", o->chunk_shuffle,
                    "Pipeline: a new chunk order every epoch (GNNPipe's technique 1)")
        ->check(CLI::IsMember({"on", "off"}));
    cmd->add_option("--grad-zero-scale", o->grad_zero_scale,
                    "Pipeline: zero historical gradients every epoch and scale processed chunks' "
                    "by 2 (GNNPipe's technique 2)")
        ->check(CLI::IsMember({"on", "off"}));
    cmd->add_option("--snapshot-period", o->snapshot_period,
                    "Pipeline: unprocessed chunks' rows come from a snapshot refreshed every N "
                    "epochs (GNNPipe's technique 3; 0: from the last epoch)")
        ->check(non_negative());
    cmd->add_option("--guard", o->guard,
                    "Pipeline: roll back to the last good weights with less staleness when an "
                    "exact evaluation says staleness hurts (off: GNNPipe as published)")
        ->check(CLI::IsMember({"on", "off"}));
    cmd->add_option("--guard-window", o->guard_window,
                    "Pipeline guard: the validation-accuracy trigger needs its streak of "
                    "evaluations to span at least N epochs")
        ->check(non_negative());
    cmd->add_option("--overlap", o->overlap,
                    "on: run the inner SpMM of each aggregation in row blocks and let MPI "
                    "progress the halo exchange and gradient all-reduces between them (real "
                    "overlap over TCP); off: one inner SpMM, then wait (the same results, bit "
                    "for bit)")
        ->check(CLI::IsMember({"on", "off"}));
    cmd->add_option("--sparse-features", o->sparse_features,
                    "auto: store the input features as CSR when at most 4 % of them are "
                    "non-zero and the model reads them through a linear layer (x W and its "
                    "weight gradient become SpMMs, input dropout acts on the non-zeros); on: "
                    "always (an error when the model cannot); off: always dense. The same "
                    "results either way, to rounding")
        ->check(CLI::IsMember({"auto", "on", "off"}));
    cmd->add_option("--local-order", o->local_order,
                    "Vertex order inside each rank's part, for the locality of the SpMMs, "
                    "computed at load: rcm (reverse Cuthill-McKee on the part's inner block), "
                    "metis (METIS blocks of 1024 rows: slower to compute, best on graphs with "
                    "small communities) or none (the partition's order). Graph parallelism only; "
                    "the same results to rounding")
        ->check(CLI::IsMember({"none", "rcm", "metis"}));
    cmd->add_option("--comm-timeout", o->comm_timeout,
                    "After loading, a rank that waits this many seconds for another rank in one "
                    "operation (a cut or crawling network link, a stuck rank) names it and ends "
                    "the job (0: wait forever; MPI communication only)")
        ->check(non_negative());
    cmd->add_option("--plan", o->plan,
                    "auto: plan this run (strata plan for the launched rank count) and use the "
                    "recommended --parallel and --recompute (or --stages/--ways/--chunks for "
                    "the pipeline); FILE: take them from strata plan --json's output");
    add_machine_option(*cmd, o->machine, "--plan auto: the machine model")
        ->needs(cmd->get_option("--plan"));
    cmd->add_flag("--quiet", o->quiet, "Print only the final line");
    cmd->add_flag("--profile", o->profile,
                  "Time the training step's phases (GEMM, aggregation, attention, elementwise "
                  "with dropout, loss, optimizer, exposed wait) on every rank, the backend "
                  "synchronized around each step; print the slowest rank's per epoch and add "
                  "them to the metrics ('phases'). Graph parallelism only");
    cmd->add_option("--checkpoint-dir", o->checkpoint_dir,
                    "Write checkpoints (ckpt-<epoch>.h5, the newest two kept) to this directory");
    cmd->add_option("--checkpoint-every", o->checkpoint_every,
                    "Checkpoint every N epochs (0: only at the end and on SIGTERM/SIGINT)")
        ->check(non_negative());
    cmd->add_flag("--resume", o->resume,
                  "Continue from the newest valid checkpoint in --checkpoint-dir (if there is "
                  "none, start at epoch 1)")
        ->needs(cmd->get_option("--checkpoint-dir"));
    return {cmd, [o, extensions] {
                auto [spec, resolved] = resolve(*o);
                return run_train(spec, resolved, extensions);
            }};
}

}  // namespace strata::app
