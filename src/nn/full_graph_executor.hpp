// FullGraphExecutor: the exact executor. Every step runs over all owned rows (through the node
// runner, node_runner.hpp, as the layer pipeline's chunks do); aggregations go through a
// GraphOperator (the overlapped halo exchange); buffers come from one arena laid out by the
// ExecutionPlan; each node's weight-gradient all-reduce starts as soon as its backward is done
// and overlaps the backward of the nodes below.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "src/comm/communicator.hpp"
#include "src/device/buffer.hpp"
#include "src/nn/execution_plan.hpp"
#include "src/nn/executor.hpp"
#include "src/nn/model_parameters.hpp"

namespace strata {

struct ExecutorOptions {
    Recompute recompute = Recompute::none;
    /// Tensors (by name) evaluate() keeps for evaluation_output(), e.g. embeddings.
    std::vector<std::string> evaluation_outputs{};
    /// false: inference only (`strata predict`): no training schedule, no arena for it, and
    /// train_step() throws.
    bool training = true;
    /// The halo exchange lent to attention ops (OpContext::halo); required when the model has
    /// one (layers/graph_halo_exchange.hpp). Must outlive the executor. Its traffic is added to
    /// halo_bytes().
    HaloExchange* halo = nullptr;
    /// true (--overlap on): after every training step of the schedule (a forward, backward or
    /// loss node) while gradient all-reduces are in flight, call the communicator's progress()
    /// (when it needs_progress()), so that they advance between the steps. false: they advance
    /// only inside MPI calls. Either way, over such a communicator, no all-reduce is in flight
    /// while a step exchanges halo rows (docs/training.md, "Gradient all-reduces and halo
    /// exchanges").
    bool progress = true;
    /// true (--profile): time every training step's phases (phase_times()), synchronizing the
    /// backend around each schedule step (slower on a device).
    bool profile = false;
};

class FullGraphExecutor final : public Executor {
public:
    /// Plans and allocates the arena once. `graph`, `parameters`, `graph_operator` and the data's
    /// owner must outlive the executor. Throws strata::Error if the data does not fit the graph
    /// (input count or widths, row counts) or, when training, the training set is empty.
    FullGraphExecutor(Backend& backend, Communicator& comm, ModelGraph& graph,
                      ModelParameters& parameters, GraphOperator& graph_operator, TrainingData data,
                      const ExecutorOptions& options);

    double train_step(std::int64_t epoch) override;
    Evaluation evaluate() override;
    [[nodiscard]] std::vector<MemoryLine> memory_plan() const override;
    /// The lines memory_plan() returns for an executor of `plan` with `num_parameters`
    /// (strata plan predicts them without building one).
    [[nodiscard]] static std::vector<MemoryLine> plan_memory(const ExecutionPlan& plan,
                                                             std::size_t num_parameters);
    [[nodiscard]] HaloBytes halo_bytes() const override;
    [[nodiscard]] HaloBytes switch_bytes() const override { return graph_operator_.switch_bytes(); }
    [[nodiscard]] std::optional<PhaseTimes> phase_times() const override;

    [[nodiscard]] const ExecutionPlan& plan() const { return plan_; }
    /// After evaluate(): the model output (logits) or a tensor named in evaluation_outputs,
    /// num_rows x cols, valid until the next call.
    [[nodiscard]] ConstMatrixView evaluation_output(const std::string& name) const;

private:
    class ArenaViews;

    Backend& backend_;
    Communicator& comm_;
    ModelGraph& graph_;
    ModelParameters& parameters_;
    GraphOperator& graph_operator_;
    HaloExchange* halo_;
    bool progress_;
    bool profile_;
    PhaseTimes phases_;  ///< the last train_step's, when profile_
    TrainingData data_;
    ExecutionPlan plan_;
    Buffer<float> arena_;
    std::vector<std::pair<TensorId, int>> evaluation_slots_;  ///< tensor -> slot of evaluation
};

}  // namespace strata
