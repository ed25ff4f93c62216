// K ranks ≡ 1 rank: the overlapped aggregation against the global Â H and Âᵀ G on a directed
// graph, and whole training runs (losses and accuracies at every epoch, in every --recompute
// mode) against a one-rank run made in the same process (MPI_COMM_SELF).
#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>

#include <mpi.h>

#include <catch2/catch.hpp>

#include "datasets/adjacency.hpp"
#include "datasets/graph_io.hpp"
#include "datasets/normalize.hpp"
#include "layers/gcn_model.hpp"
#include "layers/overlapped_aggregation.hpp"
#include "layers/sparse_input_graph.hpp"
#include "layers/training_inputs.hpp"
#include "partition/local_normalize.hpp"
#include "partition/local_order.hpp"
#include "partition/local_part.hpp"
#include "partition/metis_partitioner.hpp"
#include "partition/partition.hpp"
#include "src/comm/forwarding_communicator.hpp"
#include "src/comm/mpi_communicator.hpp"
#include "src/comm/staged_communicator.hpp"
#include "src/nn/full_graph_executor.hpp"
#include "src/nn/optimizer.hpp"
#include "tests/layers/distributed_harness.hpp"
#include "tests/support/all_ranks.hpp"
#include "tests/support/graphs.hpp"
#include "tests/support/matrices.hpp"

using namespace strata;
using strata::test::agreed_partition;
using strata::test::all_ranks;
using strata::test::same_run;

namespace {

/// Σ over ranks of distinct remote in-neighbours: the analytic halo rows of one exchange.
std::int64_t analytic_halo_rows(const GlobalCsr& a, const Partition& p) {
    std::int64_t total = 0;
    for (int r = 0; r < p.num_parts; ++r) {
        std::set<std::int64_t> halo;
        for (std::int64_t v = 0; v < a.num_rows(); ++v) {
            if (p.owner[static_cast<std::size_t>(v)] != r) {
                continue;
            }
            for (auto k = a.indptr[static_cast<std::size_t>(v)];
                 k < a.indptr[static_cast<std::size_t>(v) + 1]; ++k) {
                const auto u = a.indices[static_cast<std::size_t>(k)];
                if (p.owner[static_cast<std::size_t>(u)] != r) {
                    halo.insert(u);
                }
            }
        }
        total += static_cast<std::int64_t>(halo.size());
    }
    return total;
}

/// What one epoch of a test run gives (global over ranks).
struct EpochResult {
    double loss = 0.0;
    Evaluation eval;
    std::int64_t halo_bytes = 0;       ///< this epoch, summed over ranks
    std::int64_t recompute_bytes = 0;  ///< this epoch, summed over ranks
    std::int64_t allreduce_bytes = 0;  ///< this epoch, this rank
};

/// `epochs` epochs of GCN training on `backend`, whose memory `comm` exchanges.
/// How a run stores its features and orders its rows (the defaults: as the data comes).
struct Layout {
    FeatureStorage features = FeatureStorage::dense;
    LocalOrder order = LocalOrder::none;
};

std::vector<EpochResult> train_on(Backend& backend, const GraphDataset& g, Communicator& comm,
                                  const GcnOptions& gcn, int epochs, const std::string& method,
                                  Recompute recompute = Recompute::none, Layout layout = {}) {
    const GlobalCsr adjacency = adjacency_matrix(g);
    LocalPart part = build_local_part(g, adjacency, agreed_partition(g, comm, method), comm.rank());
    apply_local_order(part, layout.order);
    // As the recipes do: Cora's non-negative features row-normalized, signed ones as stored.
    if (std::none_of(g.features.values.begin(), g.features.values.end(),
                     [](float v) { return v < 0.0f; })) {
        row_normalize_features(part.features);
    }
    ModelGraph built = build_gcn(part.features.cols, static_cast<index_t>(part.num_classes), gcn);
    ModelGraph graph =
        layout.features == FeatureStorage::sparse ? with_sparse_input(built) : std::move(built);
    const TrainingInputs inputs(backend, part,
                                TrainingInputs::plan(part, graph.normalization(), layout.features));
    OverlappedAggregation aggregation(inputs.blocks, comm);
    ModelParameters parameters(backend, graph, 17);
    FullGraphExecutor executor(backend, comm, graph, parameters, aggregation, inputs.data(),
                               ExecutorOptions{.recompute = recompute});
    Adam adam(backend, parameters.size(), AdamOptions{.lr = 0.01f});
    std::vector<EpochResult> results;
    for (int e = 1; e <= epochs; ++e) {
        const HaloBytes before = executor.halo_bytes();
        const std::int64_t collective_before = comm.stats().collective_bytes;
        EpochResult r;
        r.loss = executor.train_step(e);
        adam.step(parameters.all());
        r.eval = executor.evaluate();
        const HaloBytes after = executor.halo_bytes();
        r.allreduce_bytes = comm.stats().collective_bytes - collective_before;
        std::array<std::int64_t, 2> bytes{
            after.forward - before.forward + after.backward - before.backward,
            after.recompute - before.recompute};
        comm.allreduce_sum(bytes);
        r.halo_bytes = bytes[0];
        r.recompute_bytes = bytes[1];
        results.push_back(r);
    }
    return results;
}

std::vector<EpochResult> train(const GraphDataset& g, Communicator& comm, const GcnOptions& gcn,
                               int epochs, const std::string& method,
                               Recompute recompute = Recompute::none, Layout layout = {}) {
    auto backend = make_cpu_backend(1);
    return train_on(*backend, g, comm, gcn, epochs, method, recompute, layout);
}

/// MPI, except that every exchange hands its peers out in reverse order (all received first):
/// the arrival order a slow network could produce, to check that sums do not depend on it.
class ReversedArrivals final : public ForwardingCommunicator {
public:
    explicit ReversedArrivals(Communicator& inner) : ForwardingCommunicator(inner) {}
    [[nodiscard]] std::unique_ptr<Exchange> start_exchange(const ExchangePattern& pattern,
                                                           ConstMatrixView send,
                                                           MatrixView recv) override {
        return std::make_unique<Reversed>(inner().start_exchange(pattern, send, recv));
    }

private:
    class Reversed final : public Exchange {
    public:
        explicit Reversed(std::unique_ptr<Exchange> inner) : inner_(std::move(inner)) {
            while (auto peer = inner_->wait_any()) {
                order_.push_back(*peer);
            }
            std::sort(order_.rbegin(), order_.rend());
        }
        std::optional<int> wait_any() override {
            if (order_.empty()) {
                return std::nullopt;
            }
            const int peer = order_.front();
            order_.erase(order_.begin());
            return peer;
        }
        void wait_all() override { inner_->wait_all(); }

    private:
        std::unique_ptr<Exchange> inner_;
        std::vector<int> order_;
    };
};

}  // namespace

TEST_CASE("the same seed gives the same bits whatever order the peers' rows arrive in",
          "[layers][mpi]") {
    // Random parts: every rank reads rows of every other, so at K >= 3 many rows sum halo
    // entries from several peers, the case an arrival-order sum would round differently.
    MpiCommunicator world;
    ReversedArrivals reversed(world);
    const GraphDataset g = test::community_graph(400, 5, 5, 24, 8);
    const GcnOptions gcn{.layers = 3, .hidden = 16, .dropout = 0.5f, .seed = 9};
    const auto in_order = train(g, world, gcn, 10, "random");
    const auto backwards = train(g, reversed, gcn, 10, "random");
    bool same = in_order.size() == backwards.size();
    for (std::size_t e = 0; same && e < in_order.size(); ++e) {
        same = in_order[e].loss == backwards[e].loss &&
               in_order[e].eval.test_acc == backwards[e].eval.test_acc &&
               in_order[e].eval.val_loss == backwards[e].eval.val_loss;
    }
    CHECK(same);
    REQUIRE(all_ranks(same));
}

TEST_CASE("overlapped aggregation equals the global Â H and Âᵀ G rows on a directed graph",
          "[layers][mpi]") {
    MpiCommunicator comm;
    const GraphDataset g = test::directed_graph(90, 4, 4, 3, 21);
    const GlobalCsr a_hat = gcn_normalize(g);  // the global reference
    const GlobalCsr adjacency = adjacency_matrix(g);
    const Partition p = agreed_partition(g, comm, "random");
    const LocalGraph local =
        normalized(build_local_graph(adjacency, p, comm.rank()), Normalization::symmetric);
    auto backend = make_cpu_backend(1);
    const GraphBlocks blocks(*backend, local);
    OverlappedAggregation aggregation(blocks, comm);
    Buffer<float> workspace(*backend, std::max<std::size_t>(1, aggregation.workspace_floats(7)));
    const HostMatrix h_global = test::random_matrix(90, 7, 5);  // same on every rank
    HostMatrix h_local(local.num_owned, 7);
    for (index_t i = 0; i < local.num_owned; ++i) {
        for (index_t c = 0; c < 7; ++c) {
            h_local.at(i, c) = h_global.at(static_cast<index_t>(local.owned_original[i]), c);
        }
    }
    const DenseMatrix h = DenseMatrix::upload(*backend, h_local);
    DenseMatrix z(*backend, local.num_owned, 7);
    DenseMatrix dh(*backend, local.num_owned, 7);

    const RowRange all{0, local.num_owned};
    aggregation.forward(h.view(), z.view(), all, workspace.span(), ExchangePurpose::forward);
    aggregation.backward(h.view(), dh.view(), all, 0.0f, workspace.span(),
                         ExchangePurpose::backward);  // dh = Âᵀ h

    const HostMatrix z_host = z.download();
    const HostMatrix dh_host = dh.download();
    double worst = 0.0;
    for (index_t i = 0; i < local.num_owned; ++i) {
        const auto v = local.owned_original[static_cast<std::size_t>(i)];
        for (index_t c = 0; c < 7; ++c) {
            double forward = 0.0;
            double backward = 0.0;
            for (std::int64_t u = 0; u < 90; ++u) {
                for (auto k = a_hat.indptr[static_cast<std::size_t>(u)];
                     k < a_hat.indptr[static_cast<std::size_t>(u) + 1]; ++k) {
                    const auto col = a_hat.indices[static_cast<std::size_t>(k)];
                    const double a = a_hat.values[static_cast<std::size_t>(k)];
                    if (u == v) {
                        forward += a * h_global.at(static_cast<index_t>(col), c);
                    }
                    if (col == v) {
                        backward += a * h_global.at(static_cast<index_t>(u), c);
                    }
                }
            }
            worst = std::max(worst, std::abs(z_host.at(i, c) - forward));
            worst = std::max(worst, std::abs(dh_host.at(i, c) - backward));
        }
    }
    CHECK(worst < 1e-5);
    REQUIRE(all_ranks(worst < 1e-5));
    if (comm.size() > 1 && !local.pattern.peers.empty()) {
        CHECK_THROWS_WITH(aggregation.forward(h.view(), z.view(), {0, 1}, workspace.span(),
                                              ExchangePurpose::forward),
                          Catch::Contains("a partial range needs a rank without halo peers"));
    }
}

TEST_CASE("GCN training on K ranks equals one rank on a generated graph", "[layers][mpi]") {
    MpiCommunicator world;
    MpiCommunicator self(MPI_COMM_SELF);
    const GraphDataset g = test::community_graph(400, 5, 5, 24, 8);
    for (int layers : {2, 3}) {
        const GcnOptions gcn{.layers = layers, .hidden = 16, .dropout = 0.5f, .seed = 9};
        const auto k = train(g, world, gcn, 30, "metis");
        const auto one = train(g, self, gcn, 30, "metis");
        INFO("layers " << layers);
        CHECK(same_run(k, one, g));
        REQUIRE(all_ranks(same_run(k, one, g)));
        CHECK(one.back().eval.test_acc > 0.5);  // it learned something (5 classes)
    }
}

TEST_CASE("every recompute mode on K ranks equals one rank on a directed graph", "[layers][mpi]") {
    // 12 -> 32 -> 32 -> 4: layer 0 aggregates first (kept, or recomputed with a re-exchange),
    // layer 1 folds its aggregation into the linear's backward; the directed graph makes every
    // transposed block matter.
    MpiCommunicator world;
    MpiCommunicator self(MPI_COMM_SELF);
    const GraphDataset g = test::directed_graph(300, 4, 5, 12, 5);
    const GcnOptions gcn{.layers = 3, .hidden = 32, .dropout = 0.5f, .seed = 2};
    const auto reference = train(g, self, gcn, 12, "metis", Recompute::none);
    for (const Recompute mode : {Recompute::none, Recompute::aggregation, Recompute::all}) {
        const auto k = train(g, world, gcn, 12, "metis", mode);
        INFO("recompute " << to_string(mode));
        CHECK(same_run(k, reference, g));
        REQUIRE(all_ranks(same_run(k, reference, g)));
    }
}

TEST_CASE("recomputing an aggregation re-exchanges its halo rows, counted apart", "[layers][mpi]") {
    MpiCommunicator world;
    const GraphDataset g = test::community_graph(300, 4, 4, 12, 12);
    const GcnOptions gcn{.layers = 3, .hidden = 32, .dropout = 0.0f, .seed = 1};
    const auto kept = train(g, world, gcn, 2, "random", Recompute::none);
    const auto recomputed = train(g, world, gcn, 2, "random", Recompute::aggregation);
    const Partition p = agreed_partition(g, world, "random");
    const std::int64_t rows = analytic_halo_rows(adjacency_matrix(g), p);

    // Layer 0 (12 -> 32) aggregates its 12-wide input first; recomputing it in backward sends
    // the same halo rows again, once per training step. Everything else is unchanged.
    CHECK(kept.back().recompute_bytes == 0);
    CHECK(recomputed.back().recompute_bytes == rows * 12 * 4);
    CHECK(recomputed.back().halo_bytes == kept.back().halo_bytes);
    REQUIRE(all_ranks(recomputed.back().recompute_bytes == rows * 12 * 4));
}

TEST_CASE("training through the staged communicator equals plain MPI and one rank",
          "[layers][mpi]") {
    // The path of `--device cuda --comm mpi`, on the CPU backend (staging is a copy there).
    // Halo rows are added in arrival order, so with 3+ ranks two runs agree to rounding only.
    MpiCommunicator world;
    MpiCommunicator self(MPI_COMM_SELF);
    const GraphDataset g = test::community_graph(400, 5, 5, 24, 8);
    const GcnOptions gcn{.layers = 3, .hidden = 16, .dropout = 0.5f, .seed = 9};
    auto backend = make_cpu_backend(1);
    StagedCommunicator staged(*backend, std::make_unique<MpiCommunicator>());
    const auto via_staging = train_on(*backend, g, staged, gcn, 20, "metis");
    const auto direct = train(g, world, gcn, 20, "metis");
    const auto one = train(g, self, gcn, 20, "metis");
    bool ok = same_run(via_staging, direct, g) && same_run(via_staging, one, g);
    for (std::size_t e = 0; ok && e < direct.size(); ++e) {
        ok = via_staging[e].halo_bytes == direct[e].halo_bytes &&
             via_staging[e].allreduce_bytes == direct[e].allreduce_bytes;
    }
    CHECK(ok);
    REQUIRE(all_ranks(ok));
}

TEST_CASE("GCN training on K ranks equals one rank on Cora", "[layers][mpi][cora]") {
    MpiCommunicator world;
    MpiCommunicator self(MPI_COMM_SELF);
    const GraphDataset g = read_graph(std::string(STRATA_DATA_DIR) + "/cora.h5");
    for (int layers : {2, 3}) {
        const GcnOptions gcn{.layers = layers, .hidden = 16, .dropout = 0.5f, .seed = 4};
        const auto k = train(g, world, gcn, 30, "metis");
        const auto one = train(g, self, gcn, 30, "metis");
        INFO("layers " << layers);
        CHECK(same_run(k, one, g));
        REQUIRE(all_ranks(same_run(k, one, g)));
    }
}

TEST_CASE("K ranks equal one rank with PT-Scotch owners (Cora, directed graph)",
          "[layers][mpi][ptscotch]") {
    MpiCommunicator world;
    MpiCommunicator self(MPI_COMM_SELF);
    const GcnOptions gcn{.layers = 3, .hidden = 16, .dropout = 0.5f, .seed = 4};
    for (const bool cora : {true, false}) {
        const GraphDataset g = cora ? read_graph(std::string(STRATA_DATA_DIR) + "/cora.h5")
                                    : test::directed_graph(300, 4, 5, 12, 5);
        const auto k = train(g, world, gcn, 12, "ptscotch");
        const auto one = train(g, self, gcn, 12, "ptscotch");
        INFO((cora ? "cora" : "directed"));
        CHECK(same_run(k, one, g));
        REQUIRE(all_ranks(same_run(k, one, g)));
    }
}

TEST_CASE("sparse features and the local orders on K ranks equal one dense rank on Cora",
          "[layers][mpi][cora][sparse]") {
    // Cora's bag of words (1.3 % non-zero) through SparseLinearOp, input dropout on the
    // non-zeros, and every part's rows in RCM order: the same losses as dense features in the
    // partition's order, every epoch (one rank, and K ranks), and the same halo traffic.
    MpiCommunicator world;
    MpiCommunicator self(MPI_COMM_SELF);
    const GraphDataset g = read_graph(std::string(STRATA_DATA_DIR) + "/cora.h5");
    const GcnOptions gcn{.layers = 2, .hidden = 16, .dropout = 0.5f, .seed = 4};
    const auto dense = train(g, self, gcn, 30, "metis");
    const Layout sparse_rcm{.features = FeatureStorage::sparse, .order = LocalOrder::rcm};
    const auto one = train(g, self, gcn, 30, "metis", Recompute::none, sparse_rcm);
    const auto k = train(g, world, gcn, 30, "metis", Recompute::none, sparse_rcm);
    const auto k_dense = train(g, world, gcn, 30, "metis");
    const auto k_metis = train(g, world, gcn, 30, "metis", Recompute::none,
                               {.features = FeatureStorage::dense, .order = LocalOrder::metis});
    CHECK(same_run(one, dense, g));
    CHECK(same_run(k, dense, g));
    CHECK(same_run(k_metis, dense, g));
    CHECK(k.back().halo_bytes == k_dense.back().halo_bytes);
    REQUIRE(
        all_ranks(same_run(k, dense, g) && same_run(one, dense, g) && same_run(k_metis, dense, g)));
}

TEST_CASE("halo bytes per epoch equal the analytic halo volume of the partition", "[layers][mpi]") {
    MpiCommunicator world;
    const GraphDataset g = test::community_graph(300, 4, 4, 20, 12);
    const GcnOptions gcn{.layers = 2, .hidden = 8, .dropout = 0.0f, .seed = 1};
    const auto stats = train(g, world, gcn, 2, "random");
    const Partition p = agreed_partition(g, world, "random");
    const std::int64_t rows = analytic_halo_rows(adjacency_matrix(g), p);
    // Layer 1 (20 → 8) and layer 2 (8 → 4 classes) both transform first and exchange their
    // output width: per epoch one training forward, one backward and one evaluation forward.
    const std::int64_t expected = rows * 4 * (3 * 8 + 3 * 4);

    CHECK(stats.back().halo_bytes == expected);
    REQUIRE(all_ranks(stats.back().halo_bytes == expected));
}
