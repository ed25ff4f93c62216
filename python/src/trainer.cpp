// strata.Trainer's C++ half: a run configuration (JSON from the Python keywords), the runtime
// and one Session (training/session.hpp), exactly what `strata train` runs; fit() releases the
// GIL and calls the Python callback after each epoch with its metrics record; predict() serves
// the best weights through training/predictor.hpp (what `strata predict` runs), returning numpy
// arrays that own the C++ buffers (no copy).
#include <csignal>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "datasets/content_hash.hpp"
#include "graph.hpp"
#include "planner/resolve_plan.hpp"
#include "slice.hpp"
#include "src/base/error.hpp"
#include "src/comm/make_communicator.hpp"
#include "training/checkpoint.hpp"
#include "training/metrics_writer.hpp"
#include "training/predictor.hpp"
#include "training/session.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace nb = nanobind;

namespace strata::python {
namespace {

/// Collects what the session reports; the Python side shows it.
class Collector final : public RunObserver {
public:
    void note(const std::string& text, bool important) override {
        notes.push_back((important ? "! " : "") + text);
    }
    void warning(const std::string& text) override { warnings.push_back(text); }
    std::vector<std::string> notes;
    std::vector<std::string> warnings;
};

/// The Python callback as a FitHook: called with the epoch's metrics record (JSON text) under
/// the GIL. It returns a stop reason ("" to go on); an exception it raises stops the run (on
/// every rank, agreed) and is raised again by fit().
class CallbackHook final : public FitHook {
public:
    void end_epoch(const EpochStats& stats, FitState& state) override {
        if (!callback.is_valid() || error) {
            return;
        }
        const std::string record = metrics_record(stats, context);
        nb::gil_scoped_acquire acquire;
        try {
            nb::object reason = callback(nb::str(record.c_str()));
            if (!reason.is_none()) {
                const std::string text = nb::cast<std::string>(reason);
                if (!text.empty()) {
                    state.stop_reason = text;
                }
            }
        } catch (...) {
            error = std::current_exception();
            state.stop_reason = "the callback raised an exception";
        }
    }
    nb::object callback;
    MetricsContext context;
    std::exception_ptr error;
};

template <class T>
nb::object owned_array(std::vector<T>&& values, std::initializer_list<std::size_t> shape) {
    auto* heap = new std::vector<T>(std::move(values));
    nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
    return nb::cast(nb::ndarray<nb::numpy, T>(heap->data(), shape.size(), shape.begin(), owner));
}

class PyTrainer {
public:
    /// comm: the Fortran handle of the communicator of the run's ranks (mpi4py's py2f()), or
    /// None for MPI_COMM_WORLD.
    PyTrainer(const std::string& config_json, nb::object graph, std::optional<std::int64_t> comm)
        : graph_ref_(std::move(graph)) {
        config_ = config_from_json(config_json, "Trainer");
        if (nb::isinstance<PySlice>(graph_ref_)) {
            input_.slice = &nb::cast<PySlice&>(graph_ref_).slice;
            STRATA_CHECK(config_.data.empty(), "Trainer: data = '", config_.data,
                         "' beside a GraphSlice: give one of them");
        } else if (!graph_ref_.is_none()) {
            input_.view = &nb::cast<const PyGraph&>(graph_ref_).graph();
            STRATA_CHECK(config_.data.empty(), "Trainer: data = '", config_.data,
                         "' beside a Graph: give one of them");
        } else {
            STRATA_CHECK(!config_.data.empty(), "Trainer: no data (a Graph, or data = PATH)");
        }
        nb::gil_scoped_release release;
        validate(config_);
        runtime_ = std::make_unique<Runtime>(open_runtime(
            {.device = config_.device,
             .comm = config_.comm,
             .threads = config_.threads,
             .parent = comm ? communicator_from_fortran(*comm, "Trainer: comm") : MPI_COMM_WORLD}));
        if (!config_.plan.empty()) {
            const planner::ResolvedPlan plan = planner::resolve_plan(config_, *runtime_->comm);
            config_ = plan.config;
            collector_.notes.push_back(plan.line);
            if (!plan.warning.empty()) {
                collector_.warnings.push_back(plan.warning);
            }
        }
        SessionOptions options{.input = input_, .observer = &collector_, .hooks = {&hook_}};
        session_ = std::make_unique<Session>(config_, *runtime_, std::move(options));
        hook_.context = session_->metrics_context();
    }

    /// The run's result as JSON text (records as metrics_record).
    nb::dict fit(nb::object callback) {
        STRATA_CHECK(!fitted_, "Trainer: fit() was called already (make a new Trainer)");
        fitted_ = true;
        hook_.callback = std::move(callback);
        RunResult result;
        {
            nb::gil_scoped_release release;
            result = session_->run();
        }
        hook_.callback = nb::object();
        if (hook_.error) {
            std::exception_ptr error = hook_.error;
            hook_.error = nullptr;
            std::rethrow_exception(error);
        }
        nb::dict out;
        out["best"] = result.best
                          ? nb::object(nb::str(metrics_record(*result.best, hook_.context).c_str()))
                          : nb::none();
        out["selection"] = to_string(result.selection);
        out["epoch"] = result.epoch;
        out["already_complete"] = result.already_complete;
        out["early_stopped"] = result.early_stopped;
        out["stop_reason"] = result.stop_reason;
        out["stop_signal"] = result.stop_signal;
        out["stopped_by_interrupt"] = result.stop_signal == SIGINT;
        out["checkpoint"] = result.checkpoint;
        return out;
    }

    nb::dict predict(bool embeddings, const std::string& checkpoint_path) {
        Predictions p;
        {
            nb::gil_scoped_release release;
            Communicator& comm = *runtime_->comm;
            Checkpoint checkpoint;
            std::string what = checkpoint_path;
            if (!checkpoint_path.empty()) {
                if (comm.rank() == 0) {
                    checkpoint = read_checkpoint(checkpoint_path);
                }
                broadcast_checkpoint(checkpoint, comm, 0);
            } else {
                STRATA_CHECK(fitted_, "Trainer: predict() needs fit() first, or a checkpoint");
                what = "the trained Trainer";
                checkpoint = session_checkpoint();
            }
            const RunConfig config = prediction_config(
                checkpoint, config_.data, config_.split_index,
                {.device = config_.device, .comm = config_.comm, .threads = config_.threads});
            p = strata::predict(checkpoint, what, config, *runtime_, embeddings, input_);
        }
        nb::dict out;
        const auto rows = static_cast<std::size_t>(p.logits.rows);
        const auto classes = static_cast<std::size_t>(p.logits.cols);
        out["node_ids"] = owned_array(std::move(p.ids), {p.ids.size()});
        out["logits"] = owned_array(std::move(p.logits.values), {rows, classes});
        out["pred"] = owned_array(std::move(p.predicted), {rows});
        if (p.embeddings) {
            const auto width = static_cast<std::size_t>(p.embeddings->cols);
            out["embeddings"] = owned_array(std::move(p.embeddings->values), {rows, width});
        } else {
            out["embeddings"] = nb::none();
        }
        nb::list counts;
        for (const std::int64_t c : p.counts) {
            counts.append(c);
        }
        out["counts"] = counts;
        out["num_nodes"] = p.vertices;
        out["split"] = p.split;
        return out;
    }

    [[nodiscard]] std::string config_json() const { return config_to_json(session_->config()); }
    [[nodiscard]] std::vector<std::string> notes() const {
        std::vector<std::string> lines = collector_.notes;
        const RunSummary& s = session_->summary();
        lines.insert(lines.begin(), s.notes.begin(), s.notes.end());
        return lines;
    }
    [[nodiscard]] std::vector<std::string> take_warnings() {
        return std::exchange(collector_.warnings, {});
    }
    [[nodiscard]] nb::dict summary() const {
        const RunSummary& s = session_->summary();
        nb::dict out;
        out["data"] = s.data;
        out["ranks"] = s.ranks;
        out["device"] = s.device;
        out["comm"] = s.comm;
        out["model"] = s.model;
        out["seed"] = s.seed;
        out["epochs"] = s.epochs;
        out["num_nodes"] = s.vertices;
        out["recompute"] = s.recompute;
        out["planned_bytes"] = s.memory.total_bytes;
        out["planned_bytes_per_vertex"] = s.memory.bytes_per_vertex;
        out["rank"] = runtime_->comm->rank();
        out["threads"] = runtime_->threads;
        return out;
    }

private:
    /// The session's best weights as a checkpoint in memory (what `strata predict` reads).
    Checkpoint session_checkpoint() const {
        const RunConfig& c = session_->config();
        Checkpoint k;
        k.model = c.model;
        k.row_normalize = *c.row_normalize_features;
        k.partition_method = c.partition_method;
        k.dataset_path = c.data;
        k.selection = parse_selection(*c.select_by);
        k.config = config_to_json(run_definition(c));
        k.best_params = session_->best_parameters();
        if (runtime_->comm->rank() == 0) {
            k.identity.model = model_identity(c.model, *c.row_normalize_features);
            k.identity.parameters = session_->parameters().summary();
            k.identity.dataset = dataset_identity(c.data, input_);
        }
        return k;
    }

    nb::object graph_ref_;  ///< keeps the Python Graph (and its arrays) alive
    DataInput input_{};
    RunConfig config_;
    std::unique_ptr<Runtime> runtime_;
    Collector collector_;
    CallbackHook hook_;
    std::unique_ptr<Session> session_;
    bool fitted_ = false;
};

}  // namespace

void bind_trainer(nb::module_& m) {
    nb::class_<PyTrainer>(m, "Trainer", "One training run (a strata::Session).")
        .def(nb::init<const std::string&, nb::object, std::optional<std::int64_t>>(),
             nb::arg("config_json"), nb::arg("graph").none(), nb::arg("comm").none() = nb::none())
        .def("fit", &PyTrainer::fit, nb::arg("callback").none())
        .def("predict", &PyTrainer::predict, nb::arg("embeddings") = false,
             nb::arg("checkpoint") = "")
        .def("config_json", &PyTrainer::config_json)
        .def("notes", &PyTrainer::notes)
        .def("take_warnings", &PyTrainer::take_warnings)
        .def("summary", &PyTrainer::summary);
    m.def("run_options", &run_options, "Every run option's name (RunConfig's JSON keys).");
    m.def(
        "model_options",
        [] {
            std::vector<std::string> keys;
            for (const ModelOption& o : model_options()) {
                keys.emplace_back(o.key);
            }
            return keys;
        },
        "Every model option's name (ModelSpec's JSON keys).");
}

}  // namespace strata::python
