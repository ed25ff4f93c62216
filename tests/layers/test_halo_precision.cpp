// Compressed halos through the overlapped aggregation (halo_precision): on values that bf16 and
// int8 represent exactly, the forward result is fp32's bit for bit (the whole wire path: pack,
// message, unpack, peer order); gradients stay within the format's error; the bytes sent are the
// format's, rows x record bytes, in the aggregation's count and the communicator's alike; overlap
// on and off give the same bits.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include <catch2/catch.hpp>

#include "datasets/adjacency.hpp"
#include "layers/graph_blocks.hpp"
#include "layers/overlapped_aggregation.hpp"
#include "partition/local_normalize.hpp"
#include "partition/local_part.hpp"
#include "src/base/error.hpp"
#include "src/comm/halo_packing.hpp"
#include "src/comm/mpi_communicator.hpp"
#include "src/device/buffer.hpp"
#include "src/tensor/dense_matrix.hpp"
#include "tests/layers/distributed_harness.hpp"
#include "tests/support/all_ranks.hpp"
#include "tests/support/graphs.hpp"

using namespace strata;
using Catch::Matchers::Contains;
using strata::test::agreed_partition;
using strata::test::all_ranks;

namespace {

struct Result {
    std::vector<float> z;
    std::vector<float> dh;
    HaloBytes sent;
    std::int64_t comm_bytes = 0;  ///< the communicator's exchange_bytes_sent
};

}  // namespace

TEST_CASE("compressed halos: exact forward on representable rows, bytes = rows x record",
          "[layers][mpi][halo_precision]") {
    MpiCommunicator world;
    const GraphDataset g = test::directed_graph(1500, 6, 4, 3, 21);
    const GlobalCsr adjacency = adjacency_matrix(g);
    const Partition p = agreed_partition(g, world, "random");
    const LocalGraph local =
        normalized(build_local_graph(adjacency, p, world.rank()), Normalization::symmetric);
    auto backend = make_cpu_backend(1);
    const GraphBlocks blocks(*backend, local);
    constexpr index_t width = 13;  // odd: int8 records of 17 bytes, bf16 of 26
    // h on the grid k / 128, |k| <= 127, each row holding 127 / 128: exact in bf16 and in int8
    // (the row's scale is 1 / 128). dz arbitrary.
    HostMatrix h_host(local.num_owned, width);
    HostMatrix dz_host(local.num_owned, width);
    for (index_t i = 0; i < local.num_owned; ++i) {
        for (index_t c = 0; c < width; ++c) {
            const int k = c == 0 ? 127 : static_cast<int>((i * 37 + c * 11) % 255) - 127;
            h_host.at(i, c) = static_cast<float>(k) / 128.0f;
            dz_host.at(i, c) = 0.001f * static_cast<float>((i * 13 + c * 7) % 1000) - 0.5f;
        }
    }
    const DenseMatrix h = DenseMatrix::upload(*backend, h_host);
    const DenseMatrix dz = DenseMatrix::upload(*backend, dz_host);

    auto run = [&](HaloPrecision precision, bool overlap) {
        OverlappedAggregation aggregation(blocks, world,
                                          {.overlap = overlap, .precision = precision});
        Buffer<float> workspace(*backend,
                                std::max<std::size_t>(1, aggregation.workspace_floats(width)));
        DenseMatrix z(*backend, local.num_owned, width);
        DenseMatrix dh(*backend, local.num_owned, width);
        const RowRange all{0, local.num_owned};
        const std::int64_t before = world.stats().exchange_bytes_sent;
        aggregation.forward(h.view(), z.view(), all, workspace.span(), ExchangePurpose::forward);
        aggregation.backward(dz.view(), dh.view(), all, 0.0f, workspace.span(),
                             ExchangePurpose::backward);
        return Result{z.download().values, dh.download().values, aggregation.bytes_sent(),
                      world.stats().exchange_bytes_sent - before};
    };
    const Result fp32 = run(HaloPrecision::fp32, true);
    const index_t send_rows = blocks.pattern().num_send_rows();
    const index_t recv_rows = blocks.pattern().num_recv_rows();
    CHECK(fp32.sent.forward == std::int64_t{send_rows} * width * 4);
    CHECK(fp32.sent.backward == std::int64_t{recv_rows} * width * 4);
    bool ok = true;
    for (const HaloPrecision precision : {HaloPrecision::bf16, HaloPrecision::int8}) {
        INFO(to_string(precision));
        const Result on = run(precision, true);
        const Result off = run(precision, false);
        // The formula: rows x width x value bytes, + rows x 4 for int8's scales.
        const std::int64_t value_bytes = precision == HaloPrecision::bf16 ? 2 : 1;
        const std::int64_t scale_bytes = precision == HaloPrecision::int8 ? 4 : 0;
        CHECK(on.sent.forward == send_rows * (width * value_bytes + scale_bytes));
        CHECK(on.sent.backward == recv_rows * (width * value_bytes + scale_bytes));
        CHECK(on.comm_bytes == on.sent.forward + on.sent.backward);
        CHECK(on.z == fp32.z);  // bit for bit: every halo row was representable
        CHECK(on.z == off.z);
        CHECK(on.dh == off.dh);
        // Gradients: bf16 within 2^-8 of each received value, int8 within half its row's step;
        // dh sums a few of them, so a loose bound on the sum's magnitude.
        float worst = 0.0f;
        for (std::size_t i = 0; i < fp32.dh.size(); ++i) {
            worst = std::max(worst, std::fabs(on.dh[i] - fp32.dh[i]));
        }
        CHECK(worst < (precision == HaloPrecision::bf16 ? 0.01f : 0.05f));
        if (world.size() > 1) {
            CHECK(on.dh != fp32.dh);  // the gradients did cross the wire compressed
        }
        ok = ok && on.z == fp32.z && on.z == off.z && on.dh == off.dh;
    }
    REQUIRE(all_ranks(ok));
}

TEST_CASE("compressed halos: the precision switches only back to fp32",
          "[layers][halo_precision]") {
    MpiCommunicator world;
    const GraphDataset g = test::directed_graph(200, 4, 4, 3, 5);
    const GlobalCsr adjacency = adjacency_matrix(g);
    const Partition p = agreed_partition(g, world, "random");
    const LocalGraph local =
        normalized(build_local_graph(adjacency, p, world.rank()), Normalization::symmetric);
    auto backend = make_cpu_backend(1);
    const GraphBlocks blocks(*backend, local);
    OverlappedAggregation aggregation(blocks, world, {.precision = HaloPrecision::int8});
    CHECK(aggregation.precision() == HaloPrecision::int8);
    aggregation.set_precision(HaloPrecision::fp32);
    CHECK(aggregation.precision() == HaloPrecision::fp32);
    aggregation.set_precision(HaloPrecision::int8);
    CHECK_THROWS_WITH(aggregation.set_precision(HaloPrecision::bf16),
                      Contains("halo precision bf16 in a run planned for int8"));
    // The workspace was planned for int8 and for the switch to fp32: the received rows' width
    // in fp32 (the backward's outgoing gradients) and both sides' records, or fp32's if larger.
    OverlappedAggregation exact(blocks, world);
    const ExchangePattern& pattern = blocks.pattern();
    const auto send = static_cast<std::size_t>(pattern.num_send_rows());
    const auto recv = static_cast<std::size_t>(pattern.num_recv_rows());
    for (const index_t width : {1, 16, 256}) {
        const auto w = static_cast<std::size_t>(width);
        const std::size_t int8 = recv * w + (send * (w + 4) + 3) / 4 + (recv * (w + 4) + 3) / 4;
        CHECK(exact.workspace_floats(width) == (send + recv) * w);
        CHECK(aggregation.workspace_floats(width) == std::max(int8, (send + recv) * w));
    }
}
