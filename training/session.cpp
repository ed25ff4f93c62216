// Session: outputs checked, rank prepared, executor built; run() resumes, fits and reports.
#include "training/session.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "datasets/content_hash.hpp"
#include "src/base/atomic_output.hpp"
#include "src/base/error.hpp"
#include "src/base/log.hpp"
#include "src/comm/broadcast_string.hpp"
#include "src/nn/optimizer.hpp"
#include "training/accuracy_guard.hpp"
#include "training/best_tracker.hpp"
#include "training/checkpointer.hpp"
#include "training/early_stopping.hpp"
#include "training/guard_list.hpp"
#include "training/make_executor.hpp"
#include "training/metrics_writer.hpp"
#include "training/precision_guard.hpp"
#include "training/resume.hpp"
#include "training/signal_stop.hpp"
#include "training/trace_file.hpp"

namespace strata {
namespace {

/// The configuration a session runs: recipe and layout resolved, every option checked.
RunConfig resolved(const RunConfig& given, int ranks) {
    STRATA_CHECK_OPTION(given.plan.empty(), "plan", "'" + given.plan + "'",
                        "resolve it into a layout first (planner::resolve_plan)");
    RunConfig config = resolve_recipe(given);
    validate(config);
    return resolve_layout(std::move(config), ranks);
}

/// Before any data is read (rank 0): outputs that would be refused after a long load.
void check_outputs(const RunConfig& config) {
    std::error_code ec;
    if (!config.metrics.empty()) {
        STRATA_CHECK_OPTION(
            !std::filesystem::exists(config.metrics, ec) || config.overwrite || config.resume,
            "metrics", "'" + config.metrics + "'",
            "the file exists; set overwrite to replace it, or resume to keep its "
            "records up to the resumed epoch");
        const AtomicOutput probe(config.metrics, /*overwrite=*/true);  // a writable parent
    }
    if (!config.trace.empty()) {
        STRATA_CHECK_OPTION(!std::filesystem::exists(config.trace, ec) || config.overwrite, "trace",
                            "'" + config.trace + "'",
                            "the file exists; set overwrite to replace it");
        const AtomicOutput probe(config.trace, /*overwrite=*/true);  // a writable parent
    }
    if (!config.checkpoint_dir.empty() && !config.resume) {
        refuse_existing_checkpoints(CheckpointDir(config.checkpoint_dir));
    }
}

/// The recipe in force, for the report: "recipe: lr 0.01, weight decay 0.0005 (l2), ...".
std::string recipe_line(const RunConfig& c) {
    std::array<char, 256> text{};
    std::snprintf(text.data(), text.size(),
                  "recipe: lr %g, weight decay %g (%s), %s features, %d epochs, best epoch by %s, "
                  "patience %d, early stop %d, evaluation every %d epoch(s)",
                  static_cast<double>(*c.lr), static_cast<double>(c.model.weight_decay),
                  c.weight_decay_mode.c_str(), *c.row_normalize_features ? "row-normalised" : "raw",
                  *c.epochs, c.select_by->c_str(), *c.patience, c.early_stop, c.eval_every);
    return text.data();
}

/// Reports each epoch to the observer.
class ObserverHook final : public FitHook {
public:
    explicit ObserverHook(RunObserver* observer) : observer_(observer) {}
    void end_epoch(const EpochStats& stats, FitState& /*state*/) override {
        if (observer_ != nullptr) {
            observer_->epoch(stats);
        }
    }

private:
    RunObserver* observer_;
};

/// After the caller's hooks: a stop any rank's hook requested stops every rank, with the reason
/// of the lowest such rank (one all-reduce per epoch, and a broadcast when one asked).
class AgreedStop final : public FitHook {
public:
    explicit AgreedStop(Communicator& comm) : comm_(comm) {}
    void end_epoch(const EpochStats& /*stats*/, FitState& state) override {
        std::array<std::int64_t, 1> first{state.stopping() ? comm_.size() - comm_.rank() : 0};
        comm_.allreduce_max(first);
        if (first[0] == 0) {
            return;
        }
        const int rank = comm_.size() - static_cast<int>(first[0]);
        std::string reason = state.stop_reason;
        broadcast_string(comm_, reason, rank);
        state.stop_reason = rank == 0 ? reason : reason + " (rank " + std::to_string(rank) + ")";
    }

private:
    Communicator& comm_;
};

/// resume of a layer-pipeline run: this rank's history and the guard's state (every rank
/// evaluates the same checks on the broadcast checkpoint, so all fail or none).
void restore_pipeline_state(const Checkpoint& c, PipelineExecutor& pipeline, AccuracyGuard* guard,
                            const Communicator& comm) {
    STRATA_CHECK(c.pipeline_history.size() == static_cast<std::size_t>(comm.size()),
                 "the checkpoint holds the pipeline state of ", c.pipeline_history.size(),
                 " ranks, this run has ", comm.size(),
                 c.pipeline_history.empty()
                     ? " (it was written by a strata without pipeline checkpoints, format 3, and "
                       "cannot continue this run exactly: train again with a new "
                       "checkpoint_dir)"
                     : "");
    pipeline.restore_history(c.pipeline_history[static_cast<std::size_t>(comm.rank())]);
    STRATA_CHECK(
        c.guard.has_value() == (guard != nullptr), "the checkpoint ", c.guard ? "holds" : "lacks",
        " accuracy guard state, but this run has guard = ", guard != nullptr ? "true" : "false");
    if (guard != nullptr) {
        guard->set_state(*c.guard);
    }
}

}  // namespace

struct Session::Parts {
    Parts(const RunConfig& given, Runtime& rt, SessionOptions o)
        : runtime(rt), options(std::move(o)), config(resolved(given, rt.comm->size())) {}

    Runtime& runtime;
    SessionOptions options;
    RunConfig config;
    RunSummary summary;
    Prepared prepared;
    std::optional<ModelParameters> parameters;
    MadeExecutor made;
    std::optional<Adam> adam;
    std::optional<BestTracker> best;

    [[nodiscard]] Backend& backend() const { return *runtime.backend; }
    [[nodiscard]] Communicator& comm() const { return *runtime.comm; }
    [[nodiscard]] bool root() const { return runtime.comm->rank() == 0; }
    void note(const std::string& text, bool important) const {
        if (options.observer != nullptr) {
            options.observer->note(text, important);
        }
    }
    void warn(const std::string& text) const {
        if (options.observer != nullptr) {
            options.observer->warning(text);
        }
    }
    /// The notes of the summary (RunSummary::notes).
    std::vector<std::string> notes() const;
    /// Identity and how to rebuild, for checkpoints (the identity strings on rank 0 only).
    Checkpoint checkpoint_base() const;
};

std::vector<std::string> Session::Parts::notes() const {
    const RunConfig& c = config;
    std::vector<std::string> lines{prepared.notes.split, recipe_line(c)};
    if (!runtime.threads_note.empty()) {
        lines.push_back(runtime.threads_note);
    }
    const std::string on_off = c.overlap ? "on" : "off";
    lines.push_back("overlap: " + on_off +
                    (c.overlap && comm().needs_progress()
                         ? " (inner SpMM in row blocks, the exchange progressed between them)"
                     : c.overlap ? " (this communicator needs no progress calls)"
                                 : " (one inner SpMM, then the waits)"));
    if (c.halo_precision != "fp32") {
        const bool staged = c.parallel == "pipeline";
        lines.push_back(
            "halo precision: " + c.halo_precision +
            (staged ? " stage transfers and mirror rows" : "") +
            (!c.guard ? " (guard off)"
             : staged ? " (at each evaluation the next step repeated with fp32 transfers; the "
                        "precision guard switches to fp32 on a relative loss gap above " +
                            std::to_string(c.precision_margin) + ")"
                      : " (each evaluation repeated with fp32 halos; the precision guard "
                        "switches to fp32 on a gap above " +
                            std::to_string(c.precision_margin) + ")"));
    }
    lines.push_back(prepared.notes.order);
    lines.push_back(prepared.notes.features);
    if (!prepared.notes.grid.empty()) {
        lines.push_back(prepared.notes.grid);
    }
    if (made.pipeline != nullptr) {
        const PipelineExecutor& pipeline = *made.pipeline;
        const int slices = std::max(1, c.feature_slices);
        lines.push_back("pipeline: " + std::to_string(c.stages) + " stages x " +
                        (slices == 1   ? std::to_string(c.ways) + " ways, "
                         : c.ways == 1 ? std::to_string(slices) + " feature slices, "
                                       : std::to_string(c.ways) + " ways x " +
                                             std::to_string(slices) + " feature slices, ") +
                        std::to_string(pipeline.chunks()) + " chunks; " +
                        pipeline.layout().describe(prepared.model.graph));
        std::string per_rank;
        const std::vector<std::int64_t>& bytes = summary.memory.per_rank_bytes;
        for (std::size_t r = 0; r < bytes.size(); ++r) {
            std::array<char, 64> text{};
            std::snprintf(text.data(), text.size(), "%s rank %zu (stage %zu) %.1f MB",
                          r == 0 ? "" : ",", r,
                          prepared.stage_of_rank.empty()
                              ? r / static_cast<std::size_t>(c.ways * slices)
                              : static_cast<std::size_t>(prepared.stage_of_rank[r]),
                          static_cast<double>(bytes[r]) / 1e6);
            per_rank += text.data();
        }
        lines.push_back("pipeline memory plan per rank:" + per_rank);
        const auto flag = [](bool on) { return on ? std::string("on") : std::string("off"); };
        lines.push_back("pipeline: chunk shuffle " + flag(c.chunk_shuffle) + ", grad zero+scale " +
                        flag(c.grad_zero_scale) + ", snapshot period " +
                        std::to_string(c.snapshot_period) + ", guard " + flag(c.guard));
    }
    return lines;
}

Checkpoint Session::Parts::checkpoint_base() const {
    const RunConfig& c = config;
    Checkpoint base;
    base.model = c.model;
    base.row_normalize = *c.row_normalize_features;
    base.partition_method = c.partition_method;
    base.dataset_path = c.data;
    base.selection = best->selection();
    base.config = config_to_json(run_definition(c));
    if (root()) {
        base.identity = {
            .model = model_identity(c.model, *c.row_normalize_features),
            .parameters = parameters->summary(),
            .dataset = dataset_identity(c.data, options.input),
            .partition = partition_identity(c.data, comm().size(), c.partition_method, c.seed),
            .training = training_identity(c)};
    }
    return base;
}

Session::Session(const RunConfig& config, Runtime& runtime, SessionOptions options)
    : p_(std::make_unique<Parts>(config, runtime, std::move(options))) {
    Parts& p = *p_;
    const RunConfig& c = p.config;
    if (p.root()) {
        check_outputs(c);
    }
    const std::int64_t baseline = current_rss_bytes();  // MPI, BLAS, the program: before any data
    // Every wait from here on, loading included, is bounded: a rank working alone for long
    // (serial METIS on rank 0) keeps the others informed (src/comm/run_alone.hpp), so a longer
    // silence is a failed link or rank.
    p.comm().set_wait_limit(c.comm_timeout);
    p.prepared = prepare(c, p.backend(), p.comm(), p.options.input,
                         PrepareOptions{.build_model = p.options.build_model});
    // What prepare did, as the metrics, checkpoints and predict record it (a recipe's row
    // normalization skips features with negative values).
    p.config.row_normalize_features = p.prepared.row_normalized;
    if (!p.prepared.notes.grid_warning.empty()) {
        p.warn(p.prepared.notes.grid_warning);
    }

    p.parameters.emplace(p.backend(), p.prepared.model.graph, c.seed);
    p.made = make_executor(c, p.prepared, p.backend(), p.comm(), *p.parameters);
    p.adam.emplace(p.backend(), p.parameters->size(),
                   AdamOptions{.lr = *c.lr, .decoupled = c.weight_decay_mode == "decoupled"});
    p.best.emplace(p.backend(), *p.parameters, parse_selection(*c.select_by));

    RunSummary& s = p.summary;
    s.data = c.data.empty() ? std::string("the graph in memory") : c.data;
    s.ranks = p.comm().size();
    s.device = runtime.device;
    s.comm = runtime.comm_name;
    s.model = describe(c.model);
    s.seed = c.seed;
    s.epochs = *c.epochs;
    s.vertices = p.prepared.vertices;
    s.recompute = c.recompute;
    s.memory = summarize_memory(
        run_memory_lines(p.prepared.lines, p.made.executor->memory_plan(), p.parameters->size()),
        p.prepared.owned, baseline, p.comm());
    s.notes = p.notes();
    if (p.options.observer != nullptr) {
        p.options.observer->started(s);
    }
}

Session::~Session() = default;

MetricsContext Session::metrics_context() const {
    const Parts& p = *p_;
    const FeatureChoice& features = p.prepared.features;
    return MetricsContext{
        .planned_bytes = p.summary.memory.total_bytes,
        .planned_bytes_per_vertex = p.summary.memory.bytes_per_vertex,
        .baseline_rss_bytes = p.summary.memory.baseline_rss_bytes,
        .split = p.prepared.split,
        .threads = p.runtime.threads,
        .overlap = p.config.overlap ? "on" : "off",
        .features = features.storage == FeatureStorage::sparse ? "sparse" : "dense",
        .features_density = features.density,
        .halo_precision = p.config.halo_precision,
        .config = config_to_json(p.config)};
}

const RunConfig& Session::config() const {
    return p_->config;
}

const RunSummary& Session::summary() const {
    return p_->summary;
}

ModelParameters& Session::parameters() {
    return *p_->parameters;
}

std::vector<float> Session::best_parameters() const {
    return p_->best->download();
}

RunResult Session::run() {
    Parts& p = *p_;
    const RunConfig& c = p.config;
    Communicator& comm = p.comm();
    const bool root = p.root();
    ModelParameters& parameters = *p.parameters;
    Adam& adam = *p.adam;
    BestTracker& best = *p.best;
    PipelineExecutor* pipeline = p.made.pipeline;

    FitState state;
    state.epochs = *c.epochs;
    std::optional<CheckpointDir> checkpoints;
    Checkpoint base;  // identity and how to rebuild; filled with the state at each save
    if (!c.checkpoint_dir.empty()) {
        checkpoints.emplace(c.checkpoint_dir);
        base = p.checkpoint_base();
    }
    std::optional<AccuracyGuard> guard;  // before resume, which restores its state
    if (pipeline != nullptr && c.guard) {
        guard.emplace(
            *pipeline, parameters, adam, &best,
            GuardOptions{
                .select_by = best.selection(), .bound = c.guard_bound, .window = c.guard_window},
            [&p](const std::string& text) { p.note(text, true); });
    }
    std::optional<PrecisionGuard> precision_guard;  // compressed halos or stage transfers
    if (c.guard && c.halo_precision != "fp32") {
        const PrecisionGuardOptions options{
            .precision = *parse_halo_precision(c.halo_precision),
            .margin = c.precision_margin,
            .owns_divergence = pipeline == nullptr};  // else the accuracy guard's, reviewing first
        const auto say = [&p](const std::string& text) { p.note(text, true); };
        if (pipeline != nullptr) {
            precision_guard.emplace(*pipeline, options, say);
        } else {
            ModelInputs& inputs = *p.prepared.inputs;
            precision_guard.emplace(
                *p.made.executor,
                [&inputs](HaloPrecision precision) { inputs.set_halo_precision(precision); },
                options, say);
        }
    }
    GuardList guards;  // the pipeline's accuracy guard first, then the precision guard
    guards.add(guard ? &*guard : nullptr);
    guards.add(precision_guard ? &*precision_guard : nullptr);
    EpochGuard* epoch_guard = guards.empty() ? nullptr : &guards;
    if (c.resume) {
        const RestoreMore restore_pipeline = [&](const Checkpoint& loaded) {
            if (pipeline != nullptr) {
                restore_pipeline_state(loaded, *pipeline, guard ? &*guard : nullptr, comm);
            }
            if (!loaded.halo_precision_switched.empty() && precision_guard) {
                precision_guard->restore_switch();  // fp32 from now on, as before the stop
            }
        };
        (void)resume(
            *checkpoints, base.identity, comm, parameters, adam, best, state,
            [&p](const std::string& text, bool warning) {
                warning ? p.warn(text) : p.note(text, /*important=*/true);
            },
            restore_pipeline);
    }

    MetricsWriter metrics(c.metrics, root, state.epoch, metrics_context());
    if (!c.metrics.empty() && state.epoch > 0 && metrics.kept() != state.epoch) {
        p.warn(c.metrics + ": kept " + std::to_string(metrics.kept()) +
               " metrics records of epochs <= " + std::to_string(state.epoch) + " (expected " +
               std::to_string(state.epoch) + ")");
    }

    RunResult result;
    result.selection = best.selection();
    const auto finish = [&] {
        result.best = state.best;
        result.epoch = state.epoch;
        result.early_stopped = state.early_stopped;
        result.stop_reason = state.stop_reason;
        result.stop_signal = state.stop_signal;
        if (checkpoints && root) {
            const auto saved = checkpoints->list();
            result.checkpoint = saved.empty() ? std::string() : saved.back().second.string();
        }
        if (p.options.observer != nullptr) {
            p.options.observer->finished(result);
        }
        return result;
    };
    if (state.early_stopped || state.epoch >= state.epochs) {
        result.already_complete = true;
        return finish();
    }

    WindowEarlyStop window(c.early_stop);
    PatienceStop patience(*c.patience);
    SignalStop signals(comm);
    ObserverHook observer(p.options.observer);
    AgreedStop agreed(comm);
    std::optional<Checkpointer> checkpointer;
    if (checkpoints) {
        checkpointer.emplace(*checkpoints, c.checkpoint_every, root, base, parameters, adam, best);
        if (pipeline != nullptr) {  // every rank's history, gathered at each save
            checkpointer->add_pipeline_state(comm, [pipeline, &guard] {
                PipelineCheckpointState mine{.history = pipeline->history(), .guard = {}};
                if (guard) {
                    mine.guard = guard->state();
                }
                return mine;
            });
        }
        if (precision_guard) {
            checkpointer->add_precision_switch([&precision_guard] {
                return precision_guard->in_force() == HaloPrecision::fp32 ? std::string("fp32")
                                                                          : std::string();
            });
        }
    }
    // The order is the contract (tests/training/test_session.cpp): the caller's hooks and their
    // agreed stop first; the observer and the metrics record see every epoch; the best weights
    // before early stopping reads them; every stop decision before the checkpointer saves.
    std::vector<FitHook*> hooks = p.options.hooks;
    if (!hooks.empty()) {
        hooks.push_back(&agreed);
    }
    for (FitHook* hook : std::initializer_list<FitHook*>{&observer, &metrics, &best, &window,
                                                         &patience, &signals}) {
        hooks.push_back(hook);
    }
    if (checkpointer) {
        hooks.push_back(&*checkpointer);
    }
    std::optional<TraceHook> tracer;  // last: it sees every stop decision
    if (!c.trace.empty()) {
        const TraceEpochs traced = parse_trace_epochs(c.trace_epochs, *c.epochs);
        if (traced.first <= state.epoch) {
            p.warn(c.trace + ": epochs " + std::to_string(traced.first) + ".." +
                   std::to_string(traced.last) + " ran before the resumed epoch " +
                   std::to_string(state.epoch) + ": no trace is written (trace_epochs)");
        }
        tracer.emplace(comm, c.trace, c.overwrite, traced);
        hooks.push_back(&*tracer);
    }
    // S x F placed into nodes runs on the job's ranks renumbered (prepare.hpp): its all-reduces
    // are counted there.
    Communicator& fit_comm = p.prepared.pipeline_world ? *p.prepared.pipeline_world : comm;
    fit(FitContext{*p.made.executor, adam, parameters, p.backend(), fit_comm, epoch_guard},
        FitOptions{.eval_every = c.eval_every,
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
                              "), holds the weights before it: resuming continues from there";
                   }},
        hooks, state);
    if (state.early_stopped) {
        p.note(state.stop_reason, false);
    }
    comm.barrier();  // rank 0 has written its outputs before anyone returns
    return finish();
}

}  // namespace strata
