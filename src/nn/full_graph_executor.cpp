// FullGraphExecutor: runs the planned schedules.
#include "src/nn/full_graph_executor.hpp"

#include <array>

#include "src/base/error.hpp"
#include "src/base/timer.hpp"
#include "src/nn/roc_auc.hpp"

namespace strata {

/// Times schedule steps into a PhaseTimes (or only runs them, without one): the backend is
/// synchronized before and after each, and the communicator's wait during it is split out.
class PhaseClock {
public:
    PhaseClock(Backend& backend, const Communicator& comm, PhaseTimes* times)
        : backend_(backend), comm_(comm), times_(times) {}

    template <class Run>
    void time(double PhaseTimes::*slot, Run&& run) {
        if (times_ == nullptr) {
            run();
            return;
        }
        backend_.synchronize();
        const double wait_before = comm_.stats().wait_seconds;
        const Stopwatch watch;
        run();
        backend_.synchronize();
        const double wait = comm_.stats().wait_seconds - wait_before;
        times_->*slot += watch.seconds() - wait;
        times_->exposed_wait += wait;
    }

    /// The phase of an op of `kind`.
    static double PhaseTimes::*slot(OpKind kind) {
        switch (kind) {
            case OpKind::linear:
                return &PhaseTimes::gemm;
            case OpKind::aggregate:
                return &PhaseTimes::aggregation;
            case OpKind::attention:
                return &PhaseTimes::attention;
            default:
                return &PhaseTimes::elementwise;
        }
    }

private:
    Backend& backend_;
    const Communicator& comm_;
    PhaseTimes* times_;
};
namespace {

PlanOptions plan_options(const ModelGraph& graph, const GraphOperator& gcn,
                         const ExecutorOptions& options) {
    PlanOptions plan;
    plan.rows = gcn.num_rows();
    plan.recompute = options.recompute;
    plan.graph = &gcn;
    plan.halo = options.halo;
    plan.training = options.training;
    for (const std::string& name : options.evaluation_outputs) {
        const auto t = graph.find(name);
        STRATA_CHECK(t.has_value(), "executor: the model has no tensor '", name, "'");
        plan.evaluation_outputs.push_back(*t);
    }
    return plan;
}

}  // namespace

FullGraphExecutor::FullGraphExecutor(Backend& backend, Communicator& comm, ModelGraph& graph,
                                     ModelParameters& parameters, GraphOperator& gcn,
                                     TrainingData data, const ExecutorOptions& options)
    : backend_(backend),
      comm_(comm),
      graph_(graph),
      parameters_(parameters),
      gcn_(gcn),
      halo_(options.halo),
      progress_(options.progress && comm.needs_progress()),
      profile_(options.profile),
      data_(std::move(data)),
      plan_(plan_execution(graph, plan_options(graph, gcn, options))),
      arena_(backend, plan_.arena_floats()) {
    const index_t rows = gcn.num_rows();
    STRATA_CHECK(data_.inputs.size() == graph.inputs().size(), "executor: ", data_.inputs.size(),
                 " data inputs for a model with ", graph.inputs().size());
    for (std::size_t k = 0; k < data_.inputs.size(); ++k) {
        const TensorInfo& info = graph.tensor(graph.inputs()[k]);
        STRATA_CHECK(data_.inputs[k].rows == rows && data_.inputs[k].cols == info.cols,
                     "executor: input '", info.name, "' is ", data_.inputs[k].rows, " x ",
                     data_.inputs[k].cols, ", the model expects ", rows, " x ", info.cols);
    }
    STRATA_CHECK(halo_ == nullptr || halo_->num_owned() == rows, "executor: the halo exchange has ",
                 halo_ == nullptr ? 0 : halo_->num_owned(), " owned rows, the graph operator ",
                 rows);
    const auto n = static_cast<std::size_t>(rows);
    STRATA_CHECK(data_.labels.size() == n && data_.train_mask.size() == n &&
                     data_.val_mask.size() == n && data_.test_mask.size() == n &&
                     data_.row_ids.size() == n,
                 "executor: labels, masks or row ids do not have ", rows, " rows");
    STRATA_CHECK(!options.training || data_.global_train > 0,
                 "training set is empty (no vertex has train_mask = 1)");
    const Schedule& evaluation = plan_.evaluation();
    for (const PlanStep& step : evaluation.steps) {
        evaluation_slots_.emplace_back(graph.node(step.node).output, step.y);
    }
}

MatrixView FullGraphExecutor::view(const Schedule& schedule, int slot) {
    if (slot < 0) {
        return {};
    }
    const Slot& s = schedule.slots[static_cast<std::size_t>(slot)];
    if (s.input >= 0) {
        // Model inputs are read only (ConstMatrixView on the way in); the cast never writes.
        const ConstMatrixView in = data_.inputs[static_cast<std::size_t>(s.input)];
        return {const_cast<float*>(in.data), in.rows, in.cols};
    }
    return {arena_.data() + s.offset, plan_.rows(), s.cols};
}

std::span<float> FullGraphExecutor::scratch(const Schedule& schedule, int slot) {
    if (slot < 0) {
        return {};
    }
    const Slot& s = schedule.slots[static_cast<std::size_t>(slot)];
    return {arena_.data() + s.offset, s.floats};
}

void FullGraphExecutor::run_forward(const Schedule& schedule, const PlanStep& step,
                                    const OpContext& context) {
    std::vector<ConstMatrixView> x;
    for (const int slot : step.x) {
        x.push_back(view(schedule, slot));
    }
    graph_.node(step.node).op->forward(context,
                                       ForwardArgs{.x = x,
                                                   .y = view(schedule, step.y),
                                                   .rows = {0, plan_.rows()},
                                                   .workspace = scratch(schedule, step.workspace)});
}

void FullGraphExecutor::run_backward(const Schedule& schedule, const PlanStep& step,
                                     const OpContext& context, PhaseClock& clock) {
    const RowRange all{0, plan_.rows()};
    std::vector<ConstMatrixView> x;
    for (const int slot : step.x) {
        x.push_back(view(schedule, slot));
    }
    std::vector<MatrixView> dx;
    for (const int slot : step.dx) {
        dx.push_back(view(schedule, slot));
    }
    Op& op = *graph_.node(step.node).op;
    const std::span<float> workspace = scratch(schedule, step.workspace);
    if (step.folded < 0) {
        clock.time(PhaseClock::slot(op.kind()), [&] {
            op.backward(context, BackwardArgs{.x = x,
                                              .y = view(schedule, step.y),
                                              .dy = view(schedule, step.dy),
                                              .dx = dx,
                                              .modes = step.modes,
                                              .rows = all,
                                              .workspace = workspace});
        });
        return;
    }
    // Commuted: G = Âᵀ dy at the output width, then the linear's backward from x and G.
    const MatrixView g = view(schedule, step.folded_grad);
    const std::array<MatrixView, 1> g_out{g};
    const std::array<GradMode, 1> overwrite{GradMode::overwrite};
    Op& folded = *graph_.node(step.folded).op;
    clock.time(PhaseClock::slot(folded.kind()), [&] {
        folded.backward(context, BackwardArgs{.x = {},
                                              .y = {},
                                              .dy = view(schedule, step.dy),
                                              .dx = g_out,
                                              .modes = overwrite,
                                              .rows = all,
                                              .workspace = workspace});
    });
    clock.time(PhaseClock::slot(op.kind()), [&] {
        op.backward(context, BackwardArgs{.x = x,
                                          .y = {},
                                          .dy = g,
                                          .dx = dx,
                                          .modes = step.modes,
                                          .rows = all,
                                          .workspace = workspace});
    });
}

double FullGraphExecutor::train_step(std::int64_t epoch) {
    STRATA_CHECK(!plan_.training().steps.empty(), "executor: built for inference only");
    parameters_.zero_grads();
    const OpContext context{.backend = backend_,
                            .graph = &gcn_,
                            .halo = halo_,
                            .row_ids = data_.row_ids,
                            .training = true,
                            .epoch = static_cast<std::uint64_t>(epoch),
                            .comm = &comm_,
                            .sparse_input = data_.sparse_input};
    OpContext recompute = context;
    recompute.recompute = true;
    const Schedule& schedule = plan_.training();
    // Each node's gradient all-reduce starts as soon as its backward is done and overlaps the
    // backward of the nodes below; communicators order themselves after the work already queued
    // on the backend, so no host synchronisation is needed.
    std::vector<std::unique_ptr<Reduction>> reductions;
    const bool distributed = comm_.size() > 1;
    phases_ = PhaseTimes{};
    PhaseClock clock(backend_, comm_, profile_ ? &phases_ : nullptr);
    double loss = 0.0;
    for (const PlanStep& step : schedule.steps) {
        const auto kind = [&] { return PhaseClock::slot(graph_.node(step.node).op->kind()); };
        switch (step.kind) {
            case StepKind::forward:
                clock.time(kind(), [&] { run_forward(schedule, step, context); });
                break;
            case StepKind::recompute:
                clock.time(kind(), [&] { run_forward(schedule, step, recompute); });
                break;
            case StepKind::loss: {
                const float scale = 1.0f / static_cast<float>(data_.global_train);
                clock.time(&PhaseTimes::loss, [&] {
                    loss =
                        backend_
                            .softmax_cross_entropy(view(schedule, step.y), data_.labels,
                                                   data_.train_mask, scale, view(schedule, step.dy))
                            .loss;
                });
                break;
            }
            case StepKind::backward:
                run_backward(schedule, step, context, clock);
                if (distributed) {
                    if (const std::span<float> grads = parameters_.node_grads(step.node);
                        !grads.empty()) {
                        reductions.push_back(comm_.start_allreduce_sum(grads));
                    }
                }
                break;
        }
        if (progress_ && !reductions.empty()) {
            comm_.progress();
        }
    }
    clock.time(&PhaseTimes::exposed_wait, [&] {  // all of it is wait: split out, nothing left
        for (auto& reduction : reductions) {
            reduction->wait();
        }
    });
    std::array<double, 1> sum{loss};
    comm_.allreduce_sum(sum);
    return sum[0] / static_cast<double>(data_.global_train);
}

Evaluation FullGraphExecutor::evaluate() {
    const OpContext context{.backend = backend_,
                            .graph = &gcn_,
                            .halo = halo_,
                            .row_ids = data_.row_ids,
                            .training = false,
                            .comm = &comm_,
                            .sparse_input = data_.sparse_input};
    const Schedule& schedule = plan_.evaluation();
    for (const PlanStep& step : schedule.steps) {
        run_forward(schedule, step, context);
    }
    const ConstMatrixView logits = evaluation_output(graph_.tensor(graph_.output()).name);
    const MatrixView no_grad{};
    std::array<std::int64_t, 6> counts{};
    std::array<double, 3> losses{};
    const std::array<std::span<const std::uint8_t>, 3> masks{data_.train_mask, data_.val_mask,
                                                             data_.test_mask};
    for (std::size_t m = 0; m < masks.size(); ++m) {
        const LossSums sums =
            backend_.softmax_cross_entropy(logits, data_.labels, masks[m], 1.0f, no_grad);
        counts[2 * m] = sums.correct;
        counts[2 * m + 1] = sums.count;
        losses[m] = sums.loss;
    }
    comm_.allreduce_sum(counts);
    comm_.allreduce_sum(losses);
    auto ratio = [](double a, std::int64_t b) { return b > 0 ? a / static_cast<double>(b) : 0.0; };
    Evaluation e;
    e.train_acc = ratio(static_cast<double>(counts[0]), counts[1]);
    e.val_acc = ratio(static_cast<double>(counts[2]), counts[3]);
    e.test_acc = ratio(static_cast<double>(counts[4]), counts[5]);
    e.train_loss = ratio(losses[0], counts[1]);
    e.val_loss = ratio(losses[1], counts[3]);
    e.test_loss = ratio(losses[2], counts[5]);
    if (logits.cols == 2) {
        e.binary = true;
        const auto auc = gathered_roc_auc(backend_, comm_, logits, data_.labels,
                                          {data_.val_mask, data_.test_mask});
        e.val_auc = auc[0];
        e.test_auc = auc[1];
    }
    return e;
}

HaloBytes FullGraphExecutor::halo_bytes() const {
    HaloBytes bytes = gcn_.bytes_sent();
    if (halo_ != nullptr) {
        const HaloBytes attention = halo_->bytes_sent();
        bytes.forward += attention.forward;
        bytes.backward += attention.backward;
        bytes.recompute += attention.recompute;
    }
    return bytes;
}

ConstMatrixView FullGraphExecutor::evaluation_output(const std::string& name) const {
    const auto t = graph_.find(name);
    STRATA_CHECK(t.has_value(), "executor: the model has no tensor '", name, "'");
    for (const auto& [tensor, slot] : evaluation_slots_) {
        if (tensor == *t) {
            const Slot& s = plan_.evaluation().slots[static_cast<std::size_t>(slot)];
            return {arena_.data() + s.offset, plan_.rows(), s.cols};
        }
    }
    STRATA_FAIL("executor: tensor '", name, "' is not an evaluation output");
}

std::vector<MemoryLine> FullGraphExecutor::memory_plan() const {
    return plan_memory(plan_, parameters_.size());
}

std::vector<MemoryLine> FullGraphExecutor::plan_memory(const ExecutionPlan& plan,
                                                       std::size_t num_parameters) {
    const auto bytes = [](std::size_t floats) {
        return static_cast<std::int64_t>(floats * sizeof(float));
    };
    return {{"activations (arena)", bytes(plan.arena_floats())},
            {"parameters + gradients", bytes(2 * num_parameters)}};
}

std::optional<PhaseTimes> FullGraphExecutor::phase_times() const {
    if (!profile_) {
        return std::nullopt;
    }
    return phases_;
}

}  // namespace strata
