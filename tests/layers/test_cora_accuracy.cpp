// Accuracy against the paper's table: GCN on Cora (Planetoid public split), Kipf & Welling's
// recipe, 10 seeds, mean ≥ 81.0% (paper: 81.5%) and no seed below 79.5%. The seeds are spread
// over the ranks, each training alone (MPI_COMM_SELF) through fit, the best epoch kept by a
// BestTracker as in `strata train`; results are gathered on every rank.
#include <cstdio>

#include <mpi.h>

#include <catch2/catch.hpp>

#include "datasets/adjacency.hpp"
#include "datasets/graph_io.hpp"
#include "datasets/normalize.hpp"
#include "layers/gcn_model.hpp"
#include "layers/overlapped_aggregation.hpp"
#include "layers/training_inputs.hpp"
#include "partition/local_part.hpp"
#include "partition/partition.hpp"
#include "src/comm/mpi_communicator.hpp"
#include "src/nn/full_graph_executor.hpp"
#include "src/nn/optimizer.hpp"
#include "tests/support/all_ranks.hpp"
#include "training/best_tracker.hpp"
#include "training/fit.hpp"

using namespace strata;

namespace {

/// Test accuracy at the epoch of best validation accuracy, as `strata train` selects it: 200
/// epochs of fit with a BestTracker by val_acc.
double cora_test_accuracy(const GraphDataset& g, const GlobalCsr& adjacency, std::uint64_t seed) {
    MpiCommunicator self(MPI_COMM_SELF);
    auto backend = make_cpu_backend(1);
    LocalPart part = build_local_part(g, adjacency, partition_block(g.num_vertices(), 1), 0);
    row_normalize_features(part.features);
    const GcnOptions gcn{
        .layers = 2, .hidden = 16, .dropout = 0.5f, .weight_decay = 5e-4f, .seed = seed};
    ModelGraph graph = build_gcn(part.features.cols, static_cast<index_t>(part.num_classes), gcn);
    const TrainingInputs inputs(*backend, part, graph.normalization());
    OverlappedAggregation aggregation(inputs.blocks, self);
    ModelParameters parameters(*backend, graph, seed);
    FullGraphExecutor executor(*backend, self, graph, parameters, aggregation, inputs.data(),
                               ExecutorOptions{});
    Adam adam(*backend, parameters.size(), AdamOptions{.lr = 0.01f});
    BestTracker best(*backend, parameters, Selection::val_acc);
    FitHook* const hooks[] = {&best};
    FitState state;
    state.epochs = 200;
    fit(FitContext{.executor = executor,
                   .optimizer = adam,
                   .parameters = parameters,
                   .backend = *backend,
                   .comm = self},
        FitOptions{}, hooks, state);
    REQUIRE(state.best.has_value());
    return state.best->test_acc;
}

}  // namespace

TEST_CASE("GCN on Cora reaches the published accuracy over 10 seeds", "[layers][cora][slow]") {
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const GraphDataset g = read_graph(std::string(STRATA_DATA_DIR) + "/cora.h5");
    const GlobalCsr adjacency = adjacency_matrix(g);
    std::vector<double> accuracy(10, 0.0);
    for (int seed = rank; seed < 10; seed += size) {
        accuracy[static_cast<std::size_t>(seed)] =
            cora_test_accuracy(g, adjacency, static_cast<std::uint64_t>(seed) + 1);
    }
    MPI_Allreduce(MPI_IN_PLACE, accuracy.data(), 10, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

    double mean = 0.0;
    double lowest = 1.0;
    for (double a : accuracy) {
        mean += a / 10.0;
        lowest = std::min(lowest, a);
    }
    if (rank == 0) {
        std::printf("cora GCN test accuracy over 10 seeds: mean %.4f, min %.4f:", mean, lowest);
        for (double a : accuracy) {
            std::printf(" %.3f", a);
        }
        std::printf("\n");
    }
    CHECK(mean >= 0.810);
    CHECK(lowest >= 0.795);
}
