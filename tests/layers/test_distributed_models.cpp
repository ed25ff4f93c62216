// K ranks ≡ 1 rank for every model of the zoo: the same model trained 20 epochs on K ranks
// (METIS over MPI_COMM_WORLD, K = 2, 3, 4) and on one rank (MPI_COMM_SELF) in the same process,
// on a DIRECTED graph (in-degrees differ from out-degrees, so each normalization's halo
// degrees matter): losses within 1e-5 relative at every epoch, accuracies within one vertex.
#include <mpi.h>

#include <catch2/catch.hpp>

#include "datasets/adjacency.hpp"
#include "datasets/normalize.hpp"
#include "layers/model_inputs.hpp"
#include "layers/model_zoo.hpp"
#include "partition/local_part.hpp"
#include "src/comm/mpi_communicator.hpp"
#include "src/nn/full_graph_executor.hpp"
#include "src/nn/optimizer.hpp"
#include "tests/layers/distributed_harness.hpp"
#include "tests/support/all_ranks.hpp"
#include "tests/support/graphs.hpp"

using namespace strata;
using strata::test::agreed_partition;
using strata::test::all_ranks;
using strata::test::same_run;

namespace {

struct EpochResult {
    double loss = 0.0;
    Evaluation eval;
};

/// A small instance of the model's recipe (depth kept where it is the point: 4 layers).
ModelSpec small(const std::string& name) {
    ModelSpec s = find_model(name).recipe.spec;
    s.layers = std::min(s.layers, 4);
    s.hidden = 8;
    s.heads = 2;
    s.hops = 4;
    s.seed = 9;
    return s;
}

std::vector<EpochResult> train(const GraphDataset& g, Communicator& comm, const ModelSpec& spec,
                               int epochs) {
    auto backend = make_cpu_backend(1);
    LocalPart part =
        build_local_part(g, adjacency_matrix(g), agreed_partition(g, comm), comm.rank());
    row_normalize_features(part.features);
    BuiltModel model =
        build_model(spec, part.features.cols, static_cast<index_t>(part.num_classes));
    const ModelInputs inputs(*backend, comm, part, model.graph);
    ModelParameters parameters(*backend, model.graph, 17);
    FullGraphExecutor executor(*backend, comm, model.graph, parameters, *inputs.aggregation,
                               inputs.uploaded->data(), inputs.executor_options({}));
    Adam adam(*backend, parameters.size(), AdamOptions{.lr = 0.01f});
    std::vector<EpochResult> results;
    for (int e = 1; e <= epochs; ++e) {
        EpochResult r;
        r.loss = executor.train_step(e);
        adam.step(parameters.all());
        r.eval = executor.evaluate();
        results.push_back(r);
    }
    return results;
}

}  // namespace

TEST_CASE("every model trains on K ranks as on one rank, every epoch", "[models][mpi]") {
    MpiCommunicator world;
    MpiCommunicator self(MPI_COMM_SELF);
    const GraphDataset g = test::community_graph(300, 4, 6, 12, 23, /*directed=*/true);
    for (const ModelInfo& info : model_zoo()) {
        const ModelSpec spec = small(info.name);
        INFO(describe(spec) << " on " << world.size() << " ranks");
        const auto k = train(g, world, spec, 20);
        const auto one = train(g, self, spec, 20);
        CHECK(same_run(k, one, g));
        REQUIRE(all_ranks(same_run(k, one, g)));
    }
}
