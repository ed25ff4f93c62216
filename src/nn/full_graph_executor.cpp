// FullGraphExecutor: runs the planned schedules over every owned row.
#include "src/nn/full_graph_executor.hpp"

#include <array>
#include <span>
#include <vector>

#include "src/base/error.hpp"
#include "src/nn/node_runner.hpp"
#include "src/nn/phase_clock.hpp"
#include "src/nn/roc_auc.hpp"

namespace strata {

namespace {

PlanOptions plan_options(const ModelGraph& graph, const GraphOperator& graph_operator,
                         const ExecutorOptions& options) {
    PlanOptions plan;
    plan.rows = graph_operator.num_rows();
    plan.recompute = options.recompute;
    plan.graph = &graph_operator;
    plan.halo = options.halo;
    plan.training = options.training;
    for (const std::string& name : options.evaluation_outputs) {
        const auto t = graph.find(name);
        STRATA_CHECK(t.has_value(), "executor: the model has no tensor '", name, "'");
        plan.evaluation_outputs.push_back(*t);
    }
    return plan;
}

/// Whether `step` may exchange rows with other ranks: an aggregation (or a backward with one
/// folded in) or an attention op.
bool step_exchanges(const ModelGraph& graph, const PlanStep& step) {
    if (step.kind == StepKind::loss) {
        return false;
    }
    if (step.folded >= 0) {
        return true;
    }
    const OpKind kind = graph.node(step.node).op->kind();
    return kind == OpKind::aggregate || kind == OpKind::attention;
}

}  // namespace

FullGraphExecutor::FullGraphExecutor(Backend& backend, Communicator& comm, ModelGraph& graph,
                                     ModelParameters& parameters, GraphOperator& graph_operator,
                                     TrainingData data, const ExecutorOptions& options)
    : backend_(backend),
      comm_(comm),
      graph_(graph),
      parameters_(parameters),
      graph_operator_(graph_operator),
      halo_(options.halo),
      progress_(options.progress && comm.needs_progress()),
      profile_(options.profile),
      data_(std::move(data)),
      plan_(plan_execution(graph, plan_options(graph, graph_operator, options))),
      arena_(backend, plan_.arena_floats()) {
    const index_t rows = graph_operator.num_rows();
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

/// Slots of a schedule in the arena (or the data's inputs): every call covers every row.
class FullGraphExecutor::ArenaViews final : public StepViews {
public:
    ArenaViews(FullGraphExecutor& executor, const Schedule& schedule)
        : e_(executor), schedule_(schedule) {}
    [[nodiscard]] RowRange range() const override { return {0, e_.plan_.rows()}; }
    [[nodiscard]] bool whole(int) const override { return true; }
    [[nodiscard]] MatrixView all(int slot) const override { return rows(slot); }
    [[nodiscard]] MatrixView rows(int slot) const override {
        if (slot < 0) {
            return {};
        }
        const Slot& s = schedule_.slots[static_cast<std::size_t>(slot)];
        if (s.input >= 0) {
            // Model inputs are read only (ConstMatrixView on the way in); the cast never writes.
            const ConstMatrixView in = e_.data_.inputs[static_cast<std::size_t>(s.input)];
            return {const_cast<float*>(in.data), in.rows, in.cols};
        }
        return {e_.arena_.data() + s.offset, e_.plan_.rows(), s.cols};
    }
    [[nodiscard]] std::span<float> workspace(const PlanStep& step) const override {
        if (step.workspace < 0) {
            return {};
        }
        const Slot& s = schedule_.slots[static_cast<std::size_t>(step.workspace)];
        return {e_.arena_.data() + s.offset, s.floats};
    }

private:
    FullGraphExecutor& e_;
    const Schedule& schedule_;
};

double FullGraphExecutor::train_step(std::int64_t epoch) {
    STRATA_CHECK(!plan_.training().steps.empty(), "executor: built for inference only");
    parameters_.zero_grads();
    const OpContext context{.backend = backend_,
                            .graph = &graph_operator_,
                            .halo = halo_,
                            .row_ids = data_.row_ids,
                            .training = true,
                            .epoch = static_cast<std::uint64_t>(epoch),
                            .comm = &comm_,
                            .sparse_input = data_.sparse_input};
    OpContext recompute = context;
    recompute.recompute = true;
    const Schedule& schedule = plan_.training();
    const ArenaViews views(*this, schedule);
    // Each node's gradient all-reduce starts as soon as its backward is done and overlaps the
    // backward of the nodes below; communicators order themselves after the work already queued
    // on the backend, so no host synchronisation is needed. Where transfers move only inside MPI
    // calls (needs_progress: MPI over TCP or shared memory), an all-reduce never shares the wire
    // with a halo exchange: one due just before an exchanging step starts after it, and those in
    // flight are completed before one (docs/training.md, "Gradient all-reduces and halo
    // exchanges": at 1 Gbit/s, an all-reduce in flight during an exchange slowed one direction
    // of it to half the link rate in about half of the steps).
    phases_ = PhaseTimes{};
    PhaseClock clock(backend_, comm_, profile_ ? &phases_ : nullptr);
    double loss = 0.0;
    std::vector<std::unique_ptr<Reduction>> reductions;
    std::vector<std::span<float>> due;  // gradients whose all-reduce is not started yet
    const bool distributed = comm_.size() > 1;
    const bool apart = distributed && comm_.needs_progress();
    const auto exchanges = [&](std::size_t i) {
        return apart && i < schedule.steps.size() && step_exchanges(graph_, schedule.steps[i]);
    };
    const auto wait_reductions = [&] {
        clock.time(&PhaseTimes::exposed_wait, "gradient all-reduces", [&] {  // all of it is wait
            for (auto& reduction : reductions) {
                reduction->wait();
            }
        });
        reductions.clear();
    };
    for (std::size_t i = 0; i < schedule.steps.size(); ++i) {
        const PlanStep& step = schedule.steps[i];
        if (exchanges(i) && !reductions.empty()) {
            wait_reductions();
        }
        switch (step.kind) {
            case StepKind::forward:
                run_forward(graph_, step, views, context, clock);
                break;
            case StepKind::recompute:
                run_forward(graph_, step, views, recompute, clock);
                break;
            case StepKind::loss:
                loss = run_loss(backend_, step, views, data_, clock);
                break;
            case StepKind::backward:
                run_backward(graph_, step, views, context, clock);
                if (distributed) {
                    if (const std::span<float> grads = parameters_.node_grads(step.node);
                        !grads.empty()) {
                        due.push_back(grads);
                    }
                }
                break;
        }
        if (!exchanges(i + 1)) {
            for (const std::span<float> grads : due) {
                reductions.push_back(comm_.start_allreduce_sum(grads));
            }
            due.clear();
        }
        if (progress_ && !reductions.empty()) {
            comm_.progress();
        }
    }
    STRATA_ASSERT(due.empty());  // the last step is never followed by an exchanging one
    wait_reductions();
    std::array<double, 1> sum{loss};
    comm_.allreduce_sum(sum);
    return sum[0] / static_cast<double>(data_.global_train);
}

Evaluation FullGraphExecutor::evaluate() {
    const OpContext context{.backend = backend_,
                            .graph = &graph_operator_,
                            .halo = halo_,
                            .row_ids = data_.row_ids,
                            .training = false,
                            .comm = &comm_,
                            .sparse_input = data_.sparse_input};
    const Schedule& schedule = plan_.evaluation();
    const ArenaViews views(*this, schedule);
    PhaseClock untimed(backend_, comm_, nullptr);
    for (const PlanStep& step : schedule.steps) {
        run_forward(graph_, step, views, context, untimed);
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
    HaloBytes bytes = graph_operator_.bytes_sent();
    if (halo_ != nullptr) {
        const HaloBytes attention = halo_->bytes_sent();
        bytes.forward += attention.forward;
        bytes.backward += attention.backward;
        bytes.recompute += attention.recompute;
        bytes.inter_node += attention.inter_node;
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
