// TrainingProbe: a generated graph, its model, executor and optimizer, kept across rounds.
#include "planner/training_probe.hpp"

#include <algorithm>
#include <vector>

#include "datasets/adjacency.hpp"
#include "datasets/generate.hpp"
#include "layers/model_inputs.hpp"
#include "partition/local_part.hpp"
#include "src/comm/make_communicator.hpp"
#include "src/nn/full_graph_executor.hpp"
#include "src/nn/model_parameters.hpp"
#include "src/nn/optimizer.hpp"

namespace strata::planner {
namespace {

GraphDataset generated(std::int64_t vertices, double degree, index_t features) {
    GenerateOptions g;
    g.num_vertices = vertices;
    g.avg_degree = degree;
    g.num_features = features;
    g.num_classes = 16;
    g.seed = 3;
    return generate_graph(g);
}

BuiltModel gcn(index_t features, index_t hidden) {
    ModelSpec spec = find_model("gcn").recipe.spec;
    spec.layers = 3;
    spec.hidden = hidden;
    return build_model(spec, features, 16);
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

/// Members in construction order: each refers to those above it.
struct TrainingProbe::State {
    CpuBackend& backend;
    std::unique_ptr<Communicator> self;
    GraphDataset graph;
    BuiltModel model;
    PartitionStats stats;
    LocalPart part;
    ModelInputs inputs;
    ModelParameters parameters;
    FullGraphExecutor executor;
    Adam adam;
    int epoch = 0;

    static ExecutorOptions profiled(const ModelInputs& inputs) {
        ExecutorOptions options;
        options.profile = true;
        return inputs.executor_options(options);
    }

    State(CpuBackend& b, std::int64_t vertices, double degree, index_t features, index_t hidden)
        : backend(b),
          self(make_communicator(b, CommKind::mpi, MPI_COMM_SELF)),
          graph(generated(vertices, degree, features)),
          model(gcn(features, hidden)),
          stats(measure_partition(graph, "calibration", 1, model.graph.normalization(), 0)),
          part(build_local_part(graph, adjacency_matrix(graph),
                                partition_block(graph.num_vertices(), 1), 0)),
          inputs(b, *self, part, model.graph),
          parameters(b, model.graph, 1),
          executor(b, *self, model.graph, parameters, *inputs.aggregation, inputs.uploaded->data(),
                   profiled(inputs)),
          adam(b, parameters.size(), AdamOptions{}) {}

    /// One epoch as strata train runs it: the step, Adam, the evaluation.
    void epoch_once() {
        (void)executor.train_step(++epoch);
        adam.step(parameters.all());
        (void)executor.evaluate();
        backend.synchronize();
    }
};

TrainingProbe::TrainingProbe(CpuBackend& backend, std::int64_t vertices, double degree,
                             index_t features, index_t hidden)
    : state_(std::make_unique<State>(backend, vertices, degree, features, hidden)) {}

TrainingProbe::~TrainingProbe() = default;

TrainingProbe::Round TrainingProbe::round(int epochs, const Clock& clock) {
    state_->epoch_once();
    std::vector<double> times;
    std::vector<double> aggregation;
    for (int e = 0; e < epochs; ++e) {
        const double start = clock();
        state_->epoch_once();
        times.push_back(clock() - start);
        aggregation.push_back(state_->executor.phase_times().value().aggregation);
    }
    return {median(times), median(aggregation)};
}

const ModelGraph& TrainingProbe::model() const {
    return state_->model.graph;
}

const PartitionStats& TrainingProbe::stats() const {
    return state_->stats;
}

}  // namespace strata::planner
