// --overlap: the row-block rule of the inner SpMM, the progress calls the overlapped aggregation
// makes between blocks (a counting communicator over MPI), and the same bits with and without.
#include <algorithm>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "datasets/adjacency.hpp"
#include "datasets/normalize.hpp"
#include "layers/gcn_model.hpp"
#include "layers/graph_blocks.hpp"
#include "layers/overlapped_aggregation.hpp"
#include "layers/training_inputs.hpp"
#include "partition/local_normalize.hpp"
#include "partition/local_part.hpp"
#include "src/comm/forwarding_communicator.hpp"
#include "src/comm/mpi_communicator.hpp"
#include "src/device/buffer.hpp"
#include "src/nn/full_graph_executor.hpp"
#include "src/nn/optimizer.hpp"
#include "src/tensor/dense_matrix.hpp"
#include "tests/layers/distributed_harness.hpp"
#include "tests/support/all_ranks.hpp"
#include "tests/support/graphs.hpp"
#include "tests/support/matrices.hpp"

using namespace strata;
using strata::test::agreed_partition;
using strata::test::all_ranks;

namespace {

/// MPI, counting progress() calls; `needs` says whether it asks for them.
class CountingProgress final : public ForwardingCommunicator {
public:
    CountingProgress(MpiCommunicator& inner, bool needs)
        : ForwardingCommunicator(inner), needs_(needs) {}
    [[nodiscard]] bool needs_progress() const override { return needs_; }
    void progress() override {
        ++calls;
        inner().progress();
    }

    int calls = 0;

private:
    bool needs_;
};

/// MPI, tracking the gradient all-reduces in flight (started, not yet waited for) whenever an
/// exchange starts; `needs` says whether it asks for progress calls.
class TrackingReductions final : public ForwardingCommunicator {
public:
    TrackingReductions(MpiCommunicator& inner, bool needs)
        : ForwardingCommunicator(inner), needs_(needs) {}
    [[nodiscard]] bool needs_progress() const override { return needs_; }
    [[nodiscard]] std::unique_ptr<Exchange> start_exchange(const ExchangePattern& pattern,
                                                           ConstMatrixView send,
                                                           MatrixView recv) override {
        ++exchanges;
        most_in_flight_at_exchange = std::max(most_in_flight_at_exchange, in_flight);
        return inner().start_exchange(pattern, send, recv);
    }
    [[nodiscard]] std::unique_ptr<Reduction> start_allreduce_sum(std::span<float> data) override {
        ++reductions;
        ++in_flight;
        return std::make_unique<Tracked>(inner().start_allreduce_sum(data), in_flight);
    }

    int exchanges = 0;
    int reductions = 0;
    int in_flight = 0;
    int most_in_flight_at_exchange = 0;

private:
    class Tracked final : public Reduction {
    public:
        Tracked(std::unique_ptr<Reduction> inner, int& in_flight)
            : inner_(std::move(inner)), in_flight_(in_flight) {}
        ~Tracked() override {
            if (!waited_) {
                --in_flight_;
            }
        }
        Tracked(const Tracked&) = delete;
        Tracked& operator=(const Tracked&) = delete;
        void wait() override {
            inner_->wait();
            if (!waited_) {
                waited_ = true;
                --in_flight_;
            }
        }

    private:
        std::unique_ptr<Reduction> inner_;
        int& in_flight_;
        bool waited_ = false;
    };
    bool needs_;
};

struct Outputs {
    std::vector<float> z;
    std::vector<float> dh;
    int forward_calls = 0;
    int backward_calls = 0;
};

}  // namespace

TEST_CASE("the overlap row blocks: about 1 MiB each, 16 to 64 of them, none under 64 rows",
          "[layers]") {
    CHECK(overlap_block_rows(100000, 256) == 1563);  // 102 MB: 64 blocks of 1.6 MB
    CHECK(overlap_block_rows(300000, 16) == 15790);  // 19.2 MB: 19 blocks of 1 MiB
    CHECK(overlap_block_rows(1354, 16) == 85);       // 87 kB: 16 blocks
    CHECK(overlap_block_rows(2000, 16) == 125);      // 16 blocks
    CHECK(overlap_block_rows(500, 16) == 72);        // 7 blocks of at least 64 rows
    CHECK(overlap_block_rows(50, 16) == 50);         // one block
    CHECK(overlap_block_rows(0, 16) == 1);
}

TEST_CASE("overlap on calls progress once per inner block and gives the same bits as off",
          "[layers][mpi]") {
    MpiCommunicator world;
    const GraphDataset g = test::directed_graph(3000, 6, 4, 3, 21);
    const GlobalCsr adjacency = adjacency_matrix(g);
    const Partition p = agreed_partition(g, world, "random");
    const LocalGraph local =
        normalized(build_local_graph(adjacency, p, world.rank()), Normalization::symmetric);
    auto backend = make_cpu_backend(1);
    const GraphBlocks blocks(*backend, local);
    constexpr index_t width = 16;
    HostMatrix h_host(local.num_owned, width);
    for (index_t i = 0; i < local.num_owned; ++i) {
        for (index_t c = 0; c < width; ++c) {
            h_host.at(i, c) = 0.001f * static_cast<float>((i * 37 + c * 11) % 1000) - 0.5f;
        }
    }
    const DenseMatrix h = DenseMatrix::upload(*backend, h_host);

    auto run = [&](bool overlap, bool needs) {
        CountingProgress comm(world, needs);
        OverlappedAggregation aggregation(blocks, comm, {.overlap = overlap});
        Buffer<float> workspace(*backend,
                                std::max<std::size_t>(1, aggregation.workspace_floats(width)));
        DenseMatrix z(*backend, local.num_owned, width);
        DenseMatrix dh(*backend, local.num_owned, width);
        backend->fill(dh.view(), 1.0f);
        const RowRange all{0, local.num_owned};
        Outputs out;
        aggregation.forward(h.view(), z.view(), all, workspace.span(), ExchangePurpose::forward);
        out.forward_calls = comm.calls;
        aggregation.backward(h.view(), dh.view(), all, 0.5f, workspace.span(),
                             ExchangePurpose::backward);
        out.backward_calls = comm.calls - out.forward_calls;
        out.z = z.download().values;
        out.dh = dh.download().values;
        return out;
    };
    const Outputs on = run(true, true);
    const Outputs off = run(false, true);
    const Outputs not_needed = run(true, false);

    const index_t step = overlap_block_rows(local.num_owned, width);
    const int blocks_expected =
        world.size() == 1 ? 0 : static_cast<int>((local.num_owned + step - 1) / step);
    CHECK(on.forward_calls == blocks_expected);
    CHECK(on.backward_calls == blocks_expected);
    if (world.size() > 1) {
        CHECK(blocks_expected >= 8);
    }
    CHECK(off.forward_calls + off.backward_calls == 0);
    CHECK(not_needed.forward_calls + not_needed.backward_calls == 0);
    const bool same =
        on.z == off.z && on.dh == off.dh && on.z == not_needed.z && on.dh == not_needed.dh;
    CHECK(same);
    REQUIRE(all_ranks(same && on.forward_calls == blocks_expected));
}

namespace {

/// Part of a 400-vertex community graph for this rank (random partition over `world`).
LocalPart small_part(MpiCommunicator& world) {
    const GraphDataset g = test::community_graph(400, 5, 5, 24, 8);
    const GlobalCsr adjacency = adjacency_matrix(g);
    LocalPart part =
        build_local_part(g, adjacency, agreed_partition(g, world, "random"), world.rank());
    row_normalize_features(part.features);
    return part;
}

/// The losses of three training steps (Adam) of a fresh GCN 3 x 16 over `comm`.
std::vector<double> three_gcn_steps(const LocalPart& part, Communicator& comm, bool overlap,
                                    const ExecutorOptions& options) {
    const GcnOptions gcn{.layers = 3, .hidden = 16, .dropout = 0.5f, .seed = 9};
    auto backend = make_cpu_backend(1);
    ModelGraph graph = build_gcn(part.features.cols, static_cast<index_t>(part.num_classes), gcn);
    const TrainingInputs inputs(*backend, part, graph.normalization());
    OverlappedAggregation aggregation(inputs.blocks, comm, {.overlap = overlap});
    ModelParameters parameters(*backend, graph, 17);
    FullGraphExecutor executor(*backend, comm, graph, parameters, aggregation, inputs.data(),
                               options);
    Adam adam(*backend, parameters.size(), AdamOptions{.lr = 0.01f});
    std::vector<double> losses;
    for (int e = 1; e <= 3; ++e) {
        losses.push_back(executor.train_step(e));
        adam.step(parameters.all());
    }
    return losses;
}

}  // namespace

TEST_CASE("the executor calls progress between steps while gradient all-reduces are in flight",
          "[layers][mpi]") {
    MpiCommunicator world;
    const LocalPart part = small_part(world);
    auto run = [&](bool progress) {
        CountingProgress comm(world, true);
        std::vector<double> losses =
            three_gcn_steps(part, comm, false, ExecutorOptions{.progress = progress});
        return std::pair{losses, comm.calls};
    };
    const auto [with, with_calls] = run(true);
    const auto [without, without_calls] = run(false);
    CHECK(with == without);
    CHECK(without_calls == 0);
    if (world.size() > 1) {
        CHECK(with_calls >= 3 * 2);  // at least the steps after the first two all-reduces
    } else {
        CHECK(with_calls == 0);  // one rank starts no all-reduce
    }
    REQUIRE(all_ranks(with == without && without_calls == 0));
}

TEST_CASE(
    "over MPI that needs progress calls, no gradient all-reduce is in flight while a halo "
    "exchange starts; the same losses either way",
    "[layers][mpi]") {
    MpiCommunicator world;
    const LocalPart part = small_part(world);
    struct Run {
        std::vector<double> losses;
        int exchanges = 0;
        int reductions = 0;
        int most_in_flight = 0;
    };
    auto run = [&](bool needs) {
        TrackingReductions comm(world, needs);
        Run r;
        r.losses = three_gcn_steps(part, comm, true, ExecutorOptions{});
        r.exchanges = comm.exchanges;
        r.reductions = comm.reductions;
        r.most_in_flight = comm.most_in_flight_at_exchange;
        CHECK(comm.in_flight == 0);  // every all-reduce waited for by the end of each step
        return r;
    };
    const Run apart = run(true);
    const Run together = run(false);  // NCCL-like: all-reduces overlap the exchanges
    CHECK(apart.losses == together.losses);
    CHECK(apart.reductions == together.reductions);
    CHECK(apart.most_in_flight == 0);
    if (world.size() > 1) {
        CHECK(apart.exchanges > 0);
        CHECK(apart.reductions == 3 * 6);  // a weight and a bias in each of 3 layers, 3 steps
        // Without the rule the second layer's exchange starts with the third layer's
        // all-reduce in flight: the check above can fail.
        CHECK(together.most_in_flight > 0);
    } else {
        CHECK(apart.reductions == 0);
    }
    REQUIRE(all_ranks(apart.losses == together.losses && apart.most_in_flight == 0));
}
