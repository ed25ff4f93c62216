// K ranks ≡ 1 rank for every graph operator: each rank builds the operator from its raw part
// (normalized(), using the halo vertices' degrees) and the overlapped aggregation computes
// Z = M H and Mᵀ G on a directed weighted graph with self loops, duplicate edges and vertices
// without in-edges; the K-rank rows must equal a one-rank run (MPI_COMM_SELF) and a dense loop.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <mpi.h>

#include <catch2/catch.hpp>

#include "datasets/adjacency.hpp"
#include "layers/graph_blocks.hpp"
#include "layers/overlapped_aggregation.hpp"
#include "partition/local_graph.hpp"
#include "partition/local_normalize.hpp"
#include "partition/partition.hpp"
#include "src/comm/mpi_communicator.hpp"
#include "src/tensor/dense_matrix.hpp"
#include "tests/support/all_ranks.hpp"
#include "tests/support/graphs.hpp"
#include "tests/support/matrices.hpp"

using namespace strata;
using strata::test::all_ranks;

namespace {

constexpr index_t width = 5;

/// Z = M H and Mᵀ H for this rank's rows (original ids in `rows`), M = normalized(A's part, n).
struct Aggregated {
    std::vector<global_id> rows;
    HostMatrix forward;
    HostMatrix backward;
};

Aggregated aggregate(const GlobalCsr& a, const Partition& p, Communicator& comm, Normalization n,
                     const HostMatrix& h_global) {
    const LocalGraph local = normalized(build_local_graph(a, p, comm.rank()), n);
    auto backend = make_cpu_backend(1);
    const GraphBlocks blocks(*backend, local);
    // The memory plan's bytes (compressed halo blocks, transposes, ids) are what was allocated.
    CHECK(backend->memory_stats().bytes_in_use == GraphBlocks::plan(local).bytes);
    OverlappedAggregation aggregation(blocks, comm);
    Buffer<float> workspace(*backend,
                            std::max<std::size_t>(1, aggregation.workspace_floats(width)));
    HostMatrix h_local(local.num_owned, width);
    for (index_t i = 0; i < local.num_owned; ++i) {
        std::copy_n(h_global.row(static_cast<index_t>(local.owned_original[i])), width,
                    h_local.row(i));
    }
    const DenseMatrix h = DenseMatrix::upload(*backend, h_local);
    DenseMatrix z(*backend, local.num_owned, width);
    DenseMatrix dh(*backend, local.num_owned, width);
    const RowRange all{0, local.num_owned};
    aggregation.forward(h.view(), z.view(), all, workspace.span(), ExchangePurpose::forward);
    aggregation.backward(h.view(), dh.view(), all, 0.0f, workspace.span(),
                         ExchangePurpose::backward);
    return {local.owned_original, z.download(), dh.download()};
}

/// M of `n` as a dense N x N matrix in double, from the edge list.
std::vector<std::vector<double>> dense_operator(const GraphDataset& g, Normalization n) {
    const auto size = static_cast<std::size_t>(g.num_vertices());
    std::vector<std::vector<double>> m(size, std::vector<double>(size, 0.0));
    std::vector<double> degree(size, 0.0);
    for (std::size_t v = 0; v < size; ++v) {
        for (auto k = static_cast<std::size_t>(g.indptr[v]);
             k < static_cast<std::size_t>(g.indptr[v + 1]); ++k) {
            m[v][static_cast<std::size_t>(g.indices[k])] += g.edge_weight[k];
            degree[v] += g.edge_weight[k];
        }
    }
    for (std::size_t v = 0; v < size; ++v) {
        for (std::size_t u = 0; u < size; ++u) {
            if (n == Normalization::mean) {
                m[v][u] = degree[v] == 0.0 ? 0.0 : m[v][u] / degree[v];
            } else if (n == Normalization::symmetric) {
                m[v][u] = (m[v][u] + (u == v ? 1.0 : 0.0)) /
                          std::sqrt((1.0 + degree[v]) * (1.0 + degree[u]));
            }
        }
    }
    return m;
}

}  // namespace

TEST_CASE("every operator aggregates on K ranks as on one rank and as a dense loop",
          "[layers][mpi]") {
    MpiCommunicator world;
    MpiCommunicator self(MPI_COMM_SELF);
    const GraphDataset g = test::weighted_directed_graph(120, 9, /*dyadic=*/false);
    const GlobalCsr a = adjacency_matrix(g);
    const std::int64_t n = g.num_vertices();
    Partition p = partition_random(n, world.size(), 5);  // seeded: the same on every rank
    const HostMatrix h = test::random_matrix(static_cast<index_t>(n), width, 3);

    for (const Normalization norm :
         {Normalization::symmetric, Normalization::mean, Normalization::sum}) {
        const Aggregated k = aggregate(a, p, world, norm, h);
        const Aggregated one = aggregate(a, partition_block(n, 1), self, norm, h);
        const std::vector<std::vector<double>> m = dense_operator(g, norm);

        double worst_vs_one = 0.0;
        double worst_vs_dense = 0.0;
        for (std::size_t i = 0; i < k.rows.size(); ++i) {
            const auto v = static_cast<std::size_t>(k.rows[i]);
            const auto row = static_cast<index_t>(i);
            for (index_t c = 0; c < width; ++c) {
                double forward = 0.0;
                double backward = 0.0;
                double scale = 1.0;
                for (std::size_t u = 0; u < static_cast<std::size_t>(n); ++u) {
                    forward += m[v][u] * h.at(static_cast<index_t>(u), c);
                    backward += m[u][v] * h.at(static_cast<index_t>(u), c);
                    scale += std::abs(m[v][u]) + std::abs(m[u][v]);
                }
                // One rank's rows are in original order (block partition of K = 1).
                const auto original = static_cast<index_t>(v);
                const double z = k.forward.at(row, c);
                const double dh = k.backward.at(row, c);
                worst_vs_one =
                    std::max({worst_vs_one, std::abs(z - double{one.forward.at(original, c)}),
                              std::abs(dh - double{one.backward.at(original, c)})});
                worst_vs_dense = std::max({worst_vs_dense, std::abs(z - forward) / scale,
                                           std::abs(dh - backward) / scale});
            }
        }
        INFO(to_string(norm) << " on " << world.size() << " ranks: worst difference from one rank "
                             << worst_vs_one << ", from the dense loop " << worst_vs_dense);
        const bool ok = worst_vs_one < 1e-5 && worst_vs_dense < 1e-6;
        CHECK(ok);
        REQUIRE(all_ranks(ok));
    }
}
