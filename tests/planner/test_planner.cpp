// The planner's arithmetic against hand-computed cases (a 4-vertex path, one linear layer) and
// against the executor it predicts (halo bytes and memory plan of real runs, K ranks; the layer
// pipeline's stage bytes, split and memory plan on K stages).
#include <algorithm>

#include <catch2/catch.hpp>

#include "datasets/adjacency.hpp"
#include "layers/add_op.hpp"
#include "layers/aggregate_op.hpp"
#include "layers/linear_op.hpp"
#include "layers/model_inputs.hpp"
#include "layers/model_zoo.hpp"
#include "layers/sparse_linear_op.hpp"
#include "partition/distributed_load.hpp"
#include "partition/in_memory_load.hpp"
#include "partition/local_part.hpp"
#include "partition/metis_partitioner.hpp"
#include "planner/cagnet_model.hpp"
#include "planner/cost_model.hpp"
#include "planner/grid_model.hpp"
#include "planner/layout_plan.hpp"
#include "planner/machine_model.hpp"
#include "planner/memory_model.hpp"
#include "planner/partition_stats.hpp"
#include "planner/pipeline_model.hpp"
#include "planner/plexus_model.hpp"
#include "planner/way_stats.hpp"
#include "src/base/error.hpp"
#include "src/comm/mpi_communicator.hpp"
#include "src/device/cpu/cpu_backend.hpp"
#include "src/nn/model_parameters.hpp"
#include "src/nn/pipeline_executor.hpp"
#include "src/nn/pipeline_history.hpp"
#include "tests/support/all_ranks.hpp"
#include "tests/support/flat_machine.hpp"
#include "tests/support/graphs.hpp"
#include "training/run_memory.hpp"

namespace strata {
namespace {

using planner::PartitionStats;
using planner::RankStats;

/// The path 0 - 1 - 2 - 3 (undirected), `features` columns, 2 classes.
GraphDataset path_graph(index_t features) {
    GraphDataset g;
    g.num_classes = 2;
    g.indptr = {0, 1, 3, 5, 6};
    g.indices = {1, 0, 2, 1, 3, 2};
    g.features.rows = 4;
    g.features.cols = features;
    g.features.values.assign(static_cast<std::size_t>(4 * features), 1.0f);
    g.labels = {0, 1, 0, 1};
    g.train_mask = {1, 1, 1, 1};
    g.val_mask = {1, 1, 1, 1};
    g.test_mask = {1, 1, 1, 1};
    return g;
}

using test::flat_machine;

/// A 2-layer GCN of hidden 8 for path_graph(16).
BuiltModel path_gcn() {
    ModelSpec spec = find_model("gcn").recipe.spec;
    spec.hidden = 8;
    return build_model(spec, 16, 2);
}

/// The pipeline tests' model: GCNII, 4 layers of 8, no dropout, 4 classes.
BuiltModel small_gcnii(index_t features) {
    ModelSpec spec = find_model("gcnii").recipe.spec;
    spec.layers = 4;
    spec.hidden = 8;
    spec.dropout = 0.0f;
    return build_model(spec, features, 4);
}

/// The largest rank's memory plan as strata train prints it (its per-rank lines), with `extra`
/// bytes of this rank's added first. Collective.
std::int64_t largest_memory_plan(MpiCommunicator& world, const ModelInputs& inputs,
                                 const PipelineExecutor& executor,
                                 const ModelParameters& parameters, std::int64_t extra = 0) {
    std::array<std::int64_t, 1> bytes{
        total_bytes(run_memory_lines(inputs.lines, executor.memory_plan(), parameters.size())) +
        extra};
    world.allreduce_max(bytes);
    return bytes[0];
}

/// The host copy of the history the accuracy guard's check step holds while it runs: every
/// aggregation input's rows and their snapshot (priced as present), 2 x the embeddings' floats.
std::int64_t guard_history_bytes(const PipelineExecutor& executor) {
    std::int64_t bytes = 0;
    for (const HistoryTensor& t : executor.history().embeddings) {
        bytes += 2 * static_cast<std::int64_t>(t.values.size() * sizeof(float));
    }
    return bytes;
}

TEST_CASE("partition statistics of a path cut in two", "[planner]") {
    const PartitionStats s =
        planner::measure_partition(path_graph(4), "path", 2, Normalization::symmetric, 0);
    REQUIRE(s.ranks.size() == 2);
    for (const RankStats& r : s.ranks) {
        CHECK(r.owned == 2);
        CHECK(r.inner_nnz == 4);  // one edge both ways + 2 self loops (symmetric Â = A + I)
        CHECK(r.halo_nnz == 1);   // the cut edge, seen from this side
        CHECK(r.send_rows == 1);
        CHECK(r.recv_rows == 1);
        CHECK(r.peers == 1);
    }
    CHECK(planner::total_send_rows(s) == 2);
    const PartitionStats back =
        planner::partition_stats_from_json(planner::to_json(s), "stats.json");
    CHECK(back.ranks.size() == 2);
    CHECK(back.ranks[1].halo_nnz == 1);
    for (int r = 0; r < 2; ++r) {
        CHECK(s.ranks[r].feature_nnz == 8);  // 2 rows x 4 features, all ones
        CHECK(back.ranks[r].feature_nnz == 8);
        CHECK(back.ranks[r].sparse_input_bytes == s.ranks[r].sparse_input_bytes);
        CHECK(s.ranks[r].sparse_input_bytes > 0);
    }
    CHECK(planner::feature_density(s) == 1.0);
    CHECK_THROWS_WITH(planner::partition_stats_from_json("{\"format\": \"x\"}", "f.json"),
                      Catch::Contains("f.json: not partition statistics"));
}

TEST_CASE("halo bytes of a 2-layer GCN on the path: by hand", "[planner]") {
    // 16 features > hidden 8: each layer transforms first and exchanges its output width.
    // Per rank per epoch: forward + backward + evaluation forward, 1 row each way:
    // 1 row x 4 bytes x (3 x 8 + 3 x 2) = 120 bytes; two ranks: 240.
    const PartitionStats s =
        planner::measure_partition(path_graph(16), "path", 2, Normalization::symmetric, 0);
    const BuiltModel model = path_gcn();
    const planner::MachineModel m = flat_machine();
    const planner::EpochPrediction p = planner::predict_graph_epoch(
        model.graph, Recompute::none, s, {.machine = &m, .network = m.shared_memory, .threads = 1});
    CHECK(p.halo_bytes == 240);
    CHECK(p.recompute_halo_bytes == 0);
    // --recompute all: the same exchanges in training and evaluation (what it recomputes here
    // needs no exchange; the executor comparison below checks the recompute bytes).
    const planner::EpochPrediction r = planner::predict_graph_epoch(
        model.graph, Recompute::all, s, {.machine = &m, .network = m.shared_memory, .threads = 1});
    CHECK(r.halo_bytes == 240);
    // Compressed halos, priced when asked: bf16 2 bytes a value (120); int8 1 byte a value and
    // 4 per row: per rank 3 x (8 + 4) + 3 x (2 + 4) = 54, two ranks 108. Less bytes, less time.
    const auto at = [&](HaloPrecision precision) {
        return planner::predict_graph_epoch(
            model.graph, Recompute::none, s,
            {.machine = &m, .network = m.shared_memory, .threads = 1, .halo_precision = precision});
    };
    CHECK(at(HaloPrecision::bf16).halo_bytes == 120);
    CHECK(at(HaloPrecision::int8).halo_bytes == 108);
    CHECK(at(HaloPrecision::bf16).terms.exchange_s < p.terms.exchange_s);
}

TEST_CASE("ranks across nodes share their node's link: by hand", "[planner]") {
    // The path's exchanges over the flat machine's network (no latency) take E; the same bytes with
    // 2 ranks on the link take 2E; half of them crossing (the rest over shared memory, as fast)
    // take max(0.5 x 2, 0.5) E = E; a quarter crossing max(0.25 x 2, 0.75) E = 0.75 E.
    const PartitionStats s =
        planner::measure_partition(path_graph(16), "path", 2, Normalization::symmetric, 0);
    const BuiltModel model = path_gcn();
    const planner::MachineModel m = flat_machine();
    const auto exchange = [&](double cross_share, int link_ranks) {
        return planner::predict_graph_epoch(model.graph, Recompute::none, s,
                                            {.machine = &m,
                                             .network = m.inter_node,
                                             .threads = 1,
                                             .cross_share = cross_share,
                                             .link_ranks = link_ranks})
            .terms.exchange_s;
    };
    const double e = exchange(1.0, 1);
    REQUIRE(e > 0.0);
    CHECK(exchange(1.0, 2) == Approx(2.0 * e));
    CHECK(exchange(0.5, 2) == Approx(e));
    CHECK(exchange(0.25, 2) == Approx(0.75 * e));
    // link_share_time alone: 1 GB, a quarter across 4 ranks' 1 GB/s link (1 s), the rest over
    // shared memory at 0.5 GB/s (1.5 s).
    planner::MachineModel slow_memory = m;
    slow_memory.shared_memory.bandwidth_gbs = 0.5;
    CHECK(planner::link_share_time(1e9, {.machine = &slow_memory,
                                         .network = {0.0, 1.0},
                                         .cross_share = 0.25,
                                         .link_ranks = 4}) == Approx(1.5));
}

TEST_CASE("a grid's layout switch: by hand", "[planner]") {
    // 10 rows x 6 columns at F = 2, slice 0: r = 5 rows, c = 3 columns. Sent r (w - c) = 15
    // floats, received (n - r) c = 15; copies: the staged 15 and the own block r c = 15.
    // Network 1 us and 1 GB/s: 1 us + 60 B / 1 GB/s; copies at 2 GB/s: 120 B / 2 GB/s.
    const planner::Network net{1e-6, 1.0};
    CHECK(planner::switch_seconds(10, 6, 2, 0, net, 2.0) == Approx(1e-6 + 60e-9 + 60e-9));
    // F = 4 (slice 0 of 11 rows x 8 columns: r = 3, c = 2): sent 3 x 6 = 18, received 8 x 2 =
    // 16; 3 latencies + 72 B, copies 18 + 6 floats = 96 B at 1 GB/s.
    CHECK(planner::switch_seconds(11, 8, 4, 0, net, 1.0) == Approx(3e-6 + 72e-9 + 96e-9));
}

TEST_CASE("time of one linear layer: by hand", "[planner]") {
    // y = x W, x: 4 x 16 (a model input: no dx), W: 16 x 2; flat 1 GFLOP/s, 1 GB/s.
    ModelGraph graph;
    const TensorId x = graph.add_input("x", 16);
    graph.set_output(graph.add("linear", std::make_unique<LinearOp>(16, 2, 0.0f), {x}));
    const PartitionStats s =
        planner::measure_partition(path_graph(16), "path", 1, Normalization::symmetric, 0);
    const planner::MachineModel m = flat_machine();
    const planner::EpochPrediction p = planner::predict_graph_epoch(
        graph, Recompute::none, s, {.machine = &m, .network = m.shared_memory, .threads = 1});
    const double gemm = 2.0 * 4 * 16 * 2 / 1e9;  // 256 flops
    const double loss = 4.0 * 2 * 12 / 1e9;      // 96 bytes
    const double adam = 32.0 * 28 / 1e9;         // 32 parameters x 28 bytes
    // Training: forward GEMM, loss, dW only; evaluation: forward GEMM and the metrics pass.
    CHECK(p.compute_s == Approx(gemm + loss + gemm + adam));
    CHECK(p.eval_s == Approx(gemm + loss));
    CHECK(p.wait_s == 0.0);
    CHECK(p.epoch_s == Approx(p.compute_s + p.wait_s + p.eval_s));
    CHECK(p.halo_bytes == 0);
    // Three ranks of one thread on the flat machine's one core time-share it: each computes a
    // third of the time, so its compute and evaluation take 3 x as long (planner::time_share);
    // one rank of one thread, or ranks with a node each, as before.
    const auto shared = [&](int ranks_per_node) {
        return planner::predict_graph_epoch(graph, Recompute::none, s,
                                            {.machine = &m,
                                             .network = m.shared_memory,
                                             .threads = 1,
                                             .ranks_per_node = ranks_per_node});
    };
    CHECK(shared(3).compute_s == Approx(3.0 * p.compute_s));
    CHECK(shared(3).eval_s == Approx(3.0 * p.eval_s));
    CHECK(shared(1).epoch_s == Approx(p.epoch_s));
    planner::MachineModel four_cores = m;
    four_cores.cores = 4;
    CHECK(planner::time_share(
              {.machine = &four_cores, .network = {}, .threads = 2, .ranks_per_node = 2}) == 1.0);
    CHECK(planner::time_share(
              {.machine = &four_cores, .network = {}, .threads = 2, .ranks_per_node = 3}) == 1.5);
}

TEST_CASE("a threaded GEMM pays the BLAS hand-over: by hand", "[planner]") {
    // y = x W, W: 16 x 2 (no dx: x is the input). 10,000 rows: 10,000 x 16 x 2 = 320,000 >
    // blas_threading_flops, so each of the epoch's 3 GEMMs (forward, dW, evaluation) pays
    // blas_switch_s once; at 4 rows (128) none does.
    ModelGraph graph;
    const TensorId x = graph.add_input("x", 16);
    graph.set_output(graph.add("linear", std::make_unique<LinearOp>(16, 2, 0.0f), {x}));
    planner::MachineModel m = flat_machine();
    const auto epoch = [&](std::int64_t rows, double switch_s) {
        m.by_threads[0].blas_switch_s = switch_s;
        PartitionStats s;
        s.vertices = rows;
        s.features = 16;
        s.classes = 2;
        s.ranks.push_back({.owned = rows});
        return planner::predict_graph_epoch(
            graph, Recompute::none, s, {.machine = &m, .network = m.shared_memory, .threads = 1});
    };
    const planner::EpochPrediction with = epoch(10000, 1e-3);
    CHECK(with.epoch_s - epoch(10000, 0.0).epoch_s == Approx(3e-3));
    CHECK(with.terms.steps_s == Approx(3e-3));
    CHECK(epoch(4, 1e-3).epoch_s == Approx(epoch(4, 0.0).epoch_s));
}

TEST_CASE("a pipeline backward's recomputation is priced as the nodes' forward", "[planner]") {
    // y = x + x W over 1000 rows x 8 (flat 1 GB/s): the add's forward streams 3 x 4 bytes
    // per element; recomputing it costs the same, the linear is not priced there.
    ModelGraph graph;
    const TensorId x = graph.add_input("x", 8);
    const TensorId h = graph.add("linear", std::make_unique<LinearOp>(8, 8, 0.0f), {x});
    graph.set_output(graph.add("add", std::make_unique<AddOp>(), {x, h}));
    const planner::MachineModel m = flat_machine();
    const RankStats rank{.owned = 1000};
    const ExecutionPlan plan = planner::rank_plan(graph, rank, Recompute::none);
    const planner::RunShape shape{.machine = &m, .network = m.shared_memory, .threads = 1};
    planner::EpochTerms terms;
    CHECK(planner::price_recompute(graph, plan.training(), rank, shape, {1}, terms) ==
          Approx(1000.0 * 8 * 4 * 3 / 1e9));
    CHECK(terms.elementwise_s == Approx(1000.0 * 8 * 4 * 3 / 1e9));
    CHECK(terms.gemm_s == 0.0);
}

TEST_CASE("a sparse first layer is priced by its non-zeros: by hand", "[planner]") {
    // y = dropout(x) W with x sparse (100 non-zeros over 4 rows x 16), W: 16 x 2; flat
    // 1 G entries x cols/s, 1 GB/s, 1 ns per dropout hash. Training forward: 100 x 2 entries x
    // cols + per entry a hash and 8 bytes (copy); backward dW: 100 x 2 + per entry a hash and
    // 12 bytes (copy, gather into xᵀ); evaluation: the SpMM alone (no dropout).
    ModelGraph graph;
    const TensorId x = graph.add_input("x", 16);
    graph.set_output(graph.add("linear",
                               std::make_unique<SparseLinearOp>(
                                   16, 2, 0.0f, SparseLinearOptions{.dropout = 0.5f, .seed = 1}),
                               {x}));
    PartitionStats s;
    s.vertices = 4;
    s.features = 16;
    s.classes = 2;
    s.ranks.push_back({.owned = 4, .feature_nnz = 100});
    planner::MachineModel m = flat_machine();
    m.by_threads[0].dropout_entry_s = 1e-9;
    const planner::EpochPrediction p = planner::predict_graph_epoch(
        graph, Recompute::none, s, {.machine = &m, .network = m.shared_memory, .threads = 1});
    const double spmm = 100.0 * 2 / 1e9;
    const double forward = spmm + 100.0 * (1.0 + 8.0) / 1e9;
    const double backward = spmm + 100.0 * (1.0 + 12.0) / 1e9;
    const double loss = 4.0 * 2 * 12 / 1e9;
    const double adam = 32.0 * 28 / 1e9;
    CHECK(p.compute_s == Approx(forward + loss + backward + adam));
    CHECK(p.eval_s == Approx(spmm + loss));
    CHECK(p.terms.gemm_s == 0.0);
    CHECK(planner::feature_density(s) == Approx(100.0 / 64));
}

TEST_CASE("locality of the inner block: shares by distance, and its SpMM price", "[planner]") {
    // A 4 x 4 with entries (0,0) (0,1) (1,0) (2,3) (3,0): distances 0, 1, 1, 1, 3.
    HostCsr a;
    a.rows = a.cols = 4;
    a.row_ptr = {0, 2, 3, 4, 5};
    a.col_idx = {0, 1, 0, 3, 0};
    a.values.assign(5, 1.0f);
    const std::vector<double> near = planner::near_shares(a);
    REQUIRE(near.size() == 32);
    CHECK(near[0] == Approx(0.2));  // |i - j| < 1
    CHECK(near[1] == Approx(0.8));  // < 2
    CHECK(near[2] == Approx(1.0));  // < 4
    CHECK(near[31] == Approx(1.0));

    // One aggregation at width 1 over 1000 entries of 1000 rows, cache 64 bytes: 1 G/s in
    // cache, 0.25 G/s out. A random access hits with probability 32 / 8000 (half the cache
    // over x and y); all entries near their rows: every one hits.
    ModelGraph graph;
    const TensorId x = graph.add_input("x", 1);
    graph.set_output(graph.add("aggregate", std::make_unique<AggregateOp>(), {x}));
    planner::MachineModel m = flat_machine();
    m.cache_bytes = 64;
    m.by_threads[0].spmm_out_of_cache = {{1, 0.25}};
    const auto forward_spmm = [&](std::vector<double> shares) {
        PartitionStats s;
        s.vertices = 1000;
        s.features = 1;
        s.classes = 1;
        s.ranks.push_back({.owned = 1000, .inner_nnz = 1000, .inner_near = std::move(shares)});
        planner::EpochTerms terms;
        const ExecutionPlan plan = planner::rank_plan(graph, s.ranks[0], Recompute::none);
        (void)planner::price_evaluation(graph, plan, s.ranks[0],
                                        {.machine = &m, .network = m.shared_memory, .threads = 1},
                                        terms);
        return terms.spmm_s;
    };
    const double hit = 32.0 / 8000.0;
    const double random = 1000.0 * (hit / 1e9 + (1.0 - hit) / 0.25e9);
    CHECK(forward_spmm(std::vector<double>(32, 0.0)) == Approx(random));
    CHECK(forward_spmm(std::vector<double>(32, 1.0)) == Approx(1000.0 / 1e9));
    CHECK(forward_spmm({}) == Approx(random));  // unknown: by size alone
    // Half the entries near: they hit, the rest as random accesses.
    std::vector<double> half(32, 0.5);
    CHECK(forward_spmm(half) ==
          Approx(1000.0 * ((0.5 + 0.5 * hit) / 1e9 + 0.5 * (1.0 - hit) / 0.25e9)));
}

TEST_CASE("load-time and upload peaks: by hand", "[planner]") {
    // One rank of 4 vertices, hand-set bytes: host part (dense) 5000, sparse upload 1000.
    PartitionStats s =
        planner::measure_partition(path_graph(4), "path", 1, Normalization::symmetric, 0);
    s.ranks[0].input_bytes = 5000;
    s.ranks[0].sparse_input_bytes = 1000;
    s.load_bytes = 1000000;
    planner::MachineModel m = flat_machine();
    m.baseline_rss_bytes = 200000;
    const BuiltModel model = build_model(find_model("gcn").recipe.spec, 4, 2);
    // K = 1: baseline + the whole graph and A + the part built beside them.
    const planner::MemoryPrediction one =
        planner::predict_graph_memory(model.graph, Recompute::none, s, m, true);
    CHECK(one.load_peak_bytes == 200000 + 1000000 + 5000);
    CHECK(one.peak_bytes == std::max(one.load_peak_bytes, 200000 + one.planned_bytes));
    CHECK(
        planner::predict_graph_memory(model.graph, Recompute::none, s, m, false).load_peak_bytes ==
        0);
    // Sparse features: the plan's inputs are the sparse upload, the host part stays dense.
    const planner::MemoryPrediction sparse = planner::predict_graph_memory(
        model.graph, Recompute::none, s, m, false, FeatureStorage::sparse);
    CHECK(one.planned_bytes - sparse.planned_bytes == 4000);
    CHECK(sparse.peak_bytes ==
          std::max<std::int64_t>(200000 + sparse.planned_bytes, 200000 + 5000 + 1000));
    // K > 1: METIS beside the slice (load_bytes), or the slice, the part and a batch each way
    // (2 x 5000 + 2 x min(5000, 16 MiB) = 20000), whichever is larger.
    s.parts = 2;
    CHECK(planner::predict_graph_memory(model.graph, Recompute::none, s, m, true).load_peak_bytes ==
          200000 + 1000000);
    s.load_bytes = 1000;
    CHECK(planner::predict_graph_memory(model.graph, Recompute::none, s, m, true).load_peak_bytes ==
          200000 + 20000);
    // A grid's rank holds one column slice of the features: 4 rows x 4 columns, F = 2 -> the
    // host part is 5000 - 4 x 2 x 4 bytes; a 1 x F rank reads its slice of every row (no
    // whole-graph read, whatever load_bytes says): the slice, the part and a batch each way.
    s.features = 4;
    const std::int64_t host = 5000 - 4 * 2 * 4;
    planner::MemoryPrediction grid;
    planner::set_peaks(grid, s, m, true, FeatureStorage::dense, 2);
    CHECK(grid.load_peak_bytes == 200000 + 4 * host);
    s.parts = 1;
    s.load_bytes = 1000000;
    planner::set_peaks(grid, s, m, true, FeatureStorage::dense, 2);
    CHECK(grid.load_peak_bytes == 200000 + 4 * host);
    planner::set_peaks(grid, s, m, true, FeatureStorage::dense, 1);
    CHECK(grid.load_peak_bytes == 200000 + 1000000 + 5000);
}

TEST_CASE("GEMM and SpMM rates interpolate in log width", "[planner]") {
    const std::vector<planner::RatePoint> points{{16, 10.0}, {256, 50.0}};
    CHECK(planner::interpolate(points, 8) == 10.0);
    CHECK(planner::interpolate(points, 512) == 50.0);
    CHECK(planner::interpolate(points, 64) == Approx(30.0));  // halfway in log2: 4 -> 6 -> 8
}

TEST_CASE("machine.json round trip and version check", "[planner]") {
    const planner::MachineModel m = planner::default_machine();
    const planner::MachineModel back = planner::machine_from_json(planner::to_json(m), "m.json");
    CHECK(back.by_threads.size() == m.by_threads.size());
    CHECK(back.by_threads[0].gemm.size() == m.by_threads[0].gemm.size());
    CHECK(back.shared_memory.bandwidth_gbs == m.shared_memory.bandwidth_gbs);
    std::string text = planner::to_json(m);
    text.replace(text.find("\"version\": 4"), 12, "\"version\": 9");
    CHECK_THROWS_WITH(planner::machine_from_json(text, "m.json"),
                      Catch::Contains("m.json: machine model version 9 is not supported"));
}

TEST_CASE("extrapolated statistics scale the halo by the fitted power law", "[planner]") {
    PartitionStats a;
    a.parts = 2;
    a.vertices = 1000;
    a.nnz = 10000;
    a.ranks.assign(2, RankStats{.owned = 500,
                                .inner_nnz = 4900,
                                .halo_nnz = 100,
                                .send_rows = 50,
                                .recv_rows = 50,
                                .peers = 1,
                                .input_bytes = 5000});
    PartitionStats b = a;
    b.parts = 4;
    b.ranks.assign(4, RankStats{.owned = 250,
                                .inner_nnz = 2400,
                                .halo_nnz = 100,
                                .send_rows = 50,
                                .recv_rows = 50,
                                .peers = 2,
                                .input_bytes = 2500});
    // Volume 100 at K=2, 200 at K=4: exponent 1; at K=16: 800 rows, 50 per rank.
    const PartitionStats e = planner::extrapolate_partition({a, b}, 16);
    CHECK(e.extrapolated);
    CHECK(e.parts == 16);
    CHECK(e.ranks.size() == 16);
    CHECK(e.ranks[0].owned == 63);
    CHECK(e.ranks[0].send_rows == 50);
    CHECK(e.error_band == Approx(std::pow(4.0, 0.25) - 1.0));
}

TEST_CASE("predicted halo bytes and memory plan equal the executor's", "[planner][mpi]") {
    MpiCommunicator world;
    CpuBackend backend(1);
    const GraphDataset g = test::community_graph(300, 4, 4, 20, 12);
    ModelSpec spec = find_model("gcn").recipe.spec;
    spec.layers = 3;
    spec.hidden = 8;
    spec.dropout = 0.0f;
    for (const Recompute mode : {Recompute::none, Recompute::all}) {
        BuiltModel model = build_model(spec, 20, 4);
        const PartitionStats s = planner::measure_partition(g, "community", world.size(),
                                                            model.graph.normalization(), 0);
        LocalPart part =
            build_local_part(g, adjacency_matrix(g),
                             world.size() == 1 ? partition_block(g.num_vertices(), 1)
                                               : partition_metis(g, world.size(), MetisOptions{}),
                             world.rank());
        ModelInputs inputs(backend, world, part, model.graph);
        ModelParameters parameters(backend, model.graph, 1);
        CHECK(parameters.size() == ModelParameters::count(model.graph));
        FullGraphExecutor executor(backend, world, model.graph, parameters, *inputs.aggregation,
                                   inputs.uploaded->data(),
                                   inputs.executor_options({.recompute = mode}));
        const HaloBytes before = executor.halo_bytes();
        (void)executor.train_step(1);
        (void)executor.evaluate();
        const HaloBytes after = executor.halo_bytes();
        std::array<std::int64_t, 2> sent{
            after.forward + after.backward - before.forward - before.backward,
            after.recompute - before.recompute};
        world.allreduce_sum(sent);
        const planner::MachineModel m = flat_machine();
        const planner::EpochPrediction p = planner::predict_graph_epoch(
            model.graph, mode, s, {.machine = &m, .network = m.shared_memory, .threads = 1});
        CHECK(p.halo_bytes == sent[0]);
        CHECK(p.recompute_halo_bytes == sent[1]);
        // The run's memory plan (what strata train prints), max over ranks.
        std::array<std::int64_t, 1> planned{
            total_bytes(run_memory_lines(inputs.lines, executor.memory_plan(), parameters.size()))};
        world.allreduce_max(planned);
        const planner::MemoryPrediction mem =
            planner::predict_graph_memory(model.graph, mode, s, m, true);
        CHECK(mem.planned_bytes == planned[0]);
        REQUIRE(test::all_ranks(p.halo_bytes == sent[0]));
    }
}

TEST_CASE("pipeline wave: the GPipe bubble by hand", "[planner]") {
    // 2 stages, 4 chunks, forward 1 s and backward 2 s per chunk on each stage: (m + S - 1)
    // steps of 3 s = 15 s, busy 12 s, bubble 1/5 = (S - 1) / (m + S - 1).
    const std::vector<double> f{1.0, 1.0};
    const std::vector<double> b{2.0, 2.0};
    CHECK(planner::pipeline_wave_seconds(f, b, std::vector<double>{0.0, 0.0}, 4) == Approx(15.0));
    // A 0.5 s receive before stage 1: it delays stage 1's first forward chunk and stage 0's
    // first backward chunk once each (later ones arrive while the receiver still computes).
    CHECK(planner::pipeline_wave_seconds(f, b, std::vector<double>{0.0, 0.5}, 4) == Approx(16.0));
    // A 3 s transfer, longer than either stage's chunk: the link carries one chunk at a time
    // each way, so forward chunks reach stage 1 at 4, 7, 10, 13 (done 5, 8, 11, 14), stage 1's
    // backward ends at 16, 18, 20, 22 and its gradients reach stage 0 at 19, 22, 25, 28 (done
    // 21, 24, 27, 30). Transfers as independent delays (overlapping each other on one link)
    // would give 21.
    CHECK(planner::pipeline_wave_seconds(f, b, std::vector<double>{0.0, 3.0}, 4) == Approx(30.0));
    // Unequal stages: forward Σ t + (m - 1) max t = 4 + 2, backward 3 + 1.
    CHECK(planner::pipeline_wave_seconds(std::vector<double>{1.0, 2.0, 1.0},
                                         std::vector<double>{1.0, 1.0, 1.0},
                                         std::vector<double>{0.0, 0.0, 0.0}, 2) == Approx(10.0));
}

TEST_CASE("pipeline layouts planned: S = K, one way, C in 4, 8, 16 per stage, recompute all",
          "[planner]") {
    ModelSpec spec = find_model("gcnii").recipe.spec;
    spec.layers = 4;
    const BuiltModel model = build_model(spec, 20, 4);
    CHECK(planner::pipeline_layouts(model.graph, 1, 300).empty());
    const auto two = planner::pipeline_layouts(model.graph, 2, 300);
    REQUIRE(two.size() == 3);
    CHECK(two[0].stages == 2);
    CHECK(two[0].ways == 1);
    CHECK(two[0].chunks == 8);
    CHECK(two[2].chunks == 32);
    CHECK(two[0].recompute == Recompute::all);  // the least memory: what --plan runs
    CHECK(planner::pipeline_layouts(model.graph, 2, 20).size() == 2);  // C <= |V|
    CHECK(planner::pipeline_layouts(model.graph, max_stages(model.graph) + 1, 300).empty());
}

TEST_CASE(
    "pipeline: predicted split, stage bytes and memory plan equal the executor's, in every "
    "recompute mode",
    "[planner][mpi]") {
    MpiCommunicator world;
    MpiCommunicator self(MPI_COMM_SELF);
    CpuBackend backend(1);
    const GraphDataset g = test::community_graph(300, 4, 4, 20, 12);
    BuiltModel model = small_gcnii(20);
    const PartitionStats s =
        planner::measure_partition(g, "community", 1, model.graph.normalization(), 0);
    LocalPart part =
        build_local_part(g, adjacency_matrix(g), partition_block(g.num_vertices(), 1), 0);
    CHECK(part.graph.inner.nnz() == s.nnz);  // what strata train passes as the stage cost's nnz
    ModelInputs inputs(backend, self, part, model.graph);
    ModelParameters parameters(backend, model.graph, 1);
    const int chunks = 4 * world.size();
    std::vector<index_t> offsets;
    index_t largest = 0;
    for (int c = 0; c <= chunks; ++c) {
        offsets.push_back(static_cast<index_t>(part.graph.num_owned * c / chunks));
        if (c > 0) {
            largest = std::max(largest, offsets.back() - offsets[offsets.size() - 2]);
        }
    }
    // Every recompute mode: the stage storage the executor allocates is the one priced.
    for (const Recompute mode : {Recompute::none, Recompute::aggregation, Recompute::all}) {
        INFO("recompute " << to_string(mode));
        PipelineExecutor executor(backend, world, self, model.graph, parameters,
                                  *inputs.aggregation, inputs.uploaded->data(),
                                  PipelineOptions{.stages = world.size(),
                                                  .chunk_offsets = offsets,
                                                  .nnz = part.graph.inner.nnz(),
                                                  .recompute = mode});
        (void)executor.train_step(1);
        (void)executor.evaluate();
        const planner::MachineModel m = flat_machine();
        const planner::PipelineLayout layout{
            .stages = world.size(), .ways = 1, .chunks = chunks, .recompute = mode};
        const planner::PipelinePrediction p = planner::predict_pipeline_epoch(
            model.graph, s, layout, {.machine = &m, .network = m.shared_memory, .threads = 1});
        CHECK(p.split == executor.layout().describe(model.graph));
        REQUIRE(executor.pipeline_epoch().has_value());
        CHECK(p.stage_bytes == executor.pipeline_epoch()->stage_bytes);
        if (world.size() > 1) {
            CHECK(p.stage_bytes > 0);
        }
        // The largest rank's memory plan (strata train's per-rank lines), with the chunk size
        // known.
        const std::int64_t planned = largest_memory_plan(world, inputs, executor, parameters);
        const planner::MemoryPrediction mem =
            planner::predict_pipeline_memory(model.graph, s, layout, m, true, largest);
        CHECK(mem.planned_bytes == planned);
        // Without it (|V| / C x 1.03 rows of scratch): within the scratch's share.
        const planner::MemoryPrediction estimated =
            planner::predict_pipeline_memory(model.graph, s, layout, m, true);
        CHECK(std::abs(estimated.planned_bytes - planned) < planned / 20);
        REQUIRE(test::all_ranks(p.stage_bytes == executor.pipeline_epoch()->stage_bytes &&
                                mem.planned_bytes == planned));
        // The accuracy guard's check step (one chunk per way) grows the chunk arena for the
        // rest of the run: the plan then is the predicted plan + guard_bytes, and the step
        // holds a host copy of the history while it runs.
        (void)executor.staleness_losses(2);
        const std::int64_t checked =
            largest_memory_plan(world, inputs, executor, parameters, guard_history_bytes(executor));
        CHECK(mem.guard_bytes > 0);
        CHECK(mem.planned_bytes + mem.guard_bytes == checked);
        CHECK(mem.peak_bytes >= mem.planned_bytes + mem.guard_bytes);
        const planner::MemoryPrediction unguarded =
            planner::predict_pipeline_memory(model.graph, s, layout, m, true, largest, {}, false);
        CHECK(unguarded.guard_bytes == 0);
        CHECK(unguarded.planned_bytes == mem.planned_bytes);
    }
    // Compressed stage transfers: priced at the precision's record bytes, the executor's count:
    // 2 |V| x Σ over cut tensors of 2 cols (bf16) or cols + 4 (int8).
    for (const HaloPrecision precision : {HaloPrecision::bf16, HaloPrecision::int8}) {
        INFO(to_string(precision));
        PipelineExecutor executor(backend, world, self, model.graph, parameters,
                                  *inputs.aggregation, inputs.uploaded->data(),
                                  PipelineOptions{.stages = world.size(),
                                                  .chunk_offsets = offsets,
                                                  .nnz = part.graph.inner.nnz(),
                                                  .precision = precision});
        (void)executor.train_step(1);
        const planner::MachineModel m = flat_machine();
        const planner::PipelineLayout layout{.stages = world.size(), .ways = 1, .chunks = chunks};
        const planner::PipelinePrediction p = planner::predict_pipeline_epoch(
            model.graph, s, layout,
            {.machine = &m, .network = m.shared_memory, .threads = 1, .halo_precision = precision});
        std::int64_t row_bytes = 0;
        for (std::size_t k = 0; k + 1 < executor.layout().stages.size(); ++k) {
            for (const TensorId t : executor.layout().stages[k].outgoing) {
                const std::int64_t cols = model.graph.tensor(t).cols;  // 8: h or h0
                row_bytes += precision == HaloPrecision::bf16 ? 2 * cols : cols + 4;
            }
        }
        CHECK(p.stage_bytes == 2 * 300 * row_bytes);
        CHECK(p.stage_bytes == executor.pipeline_epoch()->stage_bytes);
        CHECK(p.stage_bytes ==
              planner::pipeline_stage_bytes(model.graph, executor.layout(), 300, precision));
        REQUIRE(test::all_ranks(p.stage_bytes == executor.pipeline_epoch()->stage_bytes));
    }
}

TEST_CASE("the hybrid's mirror bytes (W ways) equal the executor's way_bytes", "[planner][mpi]") {
    // A directed graph: the forward lists (rows another way reads) and the backward ones (rows
    // whose gradient another way's pull reads) differ, so a swapped direction shows.
    MpiCommunicator world;
    MpiCommunicator self(MPI_COMM_SELF);
    CpuBackend backend(1);
    const GraphDataset g = test::directed_graph(300, 4, 5, 12, 37);
    LocalPart part =
        build_local_part(g, adjacency_matrix(g), partition_block(g.num_vertices(), 1), 0);
    for (int ways = 2; ways <= world.size(); ++ways) {
        if (world.size() % ways != 0) {
            continue;
        }
        for (const std::string name : {"gcnii", "sage"}) {
            ModelSpec spec = find_model(name).recipe.spec;
            spec.layers = 4;
            spec.hidden = 8;
            spec.dropout = 0.0f;
            BuiltModel model = build_model(spec, 12, 4);
            ModelInputs inputs(backend, self, part, model.graph);
            ModelParameters parameters(backend, model.graph, 1);
            const int chunks = 4 * ways;
            std::vector<index_t> offsets;
            for (int c = 0; c <= chunks; ++c) {
                offsets.push_back(static_cast<index_t>(part.graph.num_owned * c / chunks));
            }
            for (const Recompute mode : {Recompute::none, Recompute::all}) {
                for (const HaloPrecision precision : {HaloPrecision::fp32, HaloPrecision::int8}) {
                    INFO(name << ", " << ways << " ways, recompute " << to_string(mode) << ", "
                              << to_string(precision));
                    PipelineExecutor executor(backend, world, self, model.graph, parameters,
                                              *inputs.aggregation, inputs.uploaded->data(),
                                              PipelineOptions{.stages = world.size() / ways,
                                                              .ways = ways,
                                                              .structure = &part.graph.inner,
                                                              .chunk_offsets = offsets,
                                                              .nnz = part.graph.inner.nnz(),
                                                              .recompute = mode,
                                                              .precision = precision});
                    (void)executor.train_step(1);
                    const std::int64_t priced = planner::pipeline_way_bytes(
                        model.graph, executor.layout(), part.graph.inner, offsets, ways, mode,
                        precision);
                    CHECK(priced > 0);
                    CHECK(priced == executor.pipeline_epoch()->way_bytes);
                    REQUIRE(test::all_ranks(priced == executor.pipeline_epoch()->way_bytes));
                }
            }
        }
    }
    // One way: no mirror exchange.
    BuiltModel model = build_model(find_model("gcn").recipe.spec, 12, 4);
    const std::vector<index_t> two{0, 150, 300};
    CHECK(planner::pipeline_way_bytes(model.graph, plan_stages(model.graph, 1, {.rows = 300}),
                                      part.graph.inner, two, 1, Recompute::none) == 0);
}

TEST_CASE(
    "the hybrid (W ways) on strata train's own chunks: the mirror statistics, way bytes and "
    "memory plan strata plan prices equal the executor's",
    "[planner][mpi]") {
    MpiCommunicator world;
    MpiCommunicator self(MPI_COMM_SELF);
    CpuBackend backend(1);
    const GraphDataset g = test::directed_graph(300, 4, 5, 12, 37);
    BuiltModel model = small_gcnii(12);
    const PartitionStats s =
        planner::measure_partition(g, "directed", 1, model.graph.normalization(), 0);
    const planner::MachineModel m = flat_machine();
    for (int ways = 2; ways <= world.size(); ++ways) {
        if (world.size() % ways != 0) {
            continue;
        }
        const int chunks = 4 * world.size();
        INFO(ways << " ways, " << chunks << " chunks");
        // The chunks strata train makes (METIS, seed 3) and strata plan's lean copy of them.
        ChunkedPart chunked =
            chunked_part_in_memory(g, self, {.chunks = chunks, .seed = 3}, 0, "directed");
        const planner::ChunkedStructure lean = planner::chunked_structure(g, chunks, 3);
        CHECK(lean.offsets == chunked.chunk_offsets);
        const planner::WayStats want =
            planner::way_stats(chunked.part.graph.inner, chunked.chunk_offsets, ways);
        const planner::WayStats got = planner::way_stats(lean.structure, lean.offsets, ways);
        CHECK(want.forward_rows > 0);
        CHECK(want.forward_rows != want.backward_rows);  // directed: the directions differ
        CHECK(got.forward_rows == want.forward_rows);
        CHECK(got.backward_rows == want.backward_rows);
        CHECK(got.list_rows == want.list_rows);
        CHECK(got.send_rows == want.send_rows);
        CHECK(got.recv_rows == want.recv_rows);
        CHECK(got.largest_chunk == want.largest_chunk);
        CHECK(got.largest_way == want.largest_way);
        CHECK(got.largest_way > got.largest_chunk);

        ModelInputs inputs(backend, self, chunked.part, model.graph);
        ModelParameters parameters(backend, model.graph, 1);
        PipelineExecutor executor(backend, world, self, model.graph, parameters,
                                  *inputs.aggregation, inputs.uploaded->data(),
                                  PipelineOptions{.stages = world.size() / ways,
                                                  .ways = ways,
                                                  .structure = &chunked.part.graph.inner,
                                                  .chunk_offsets = chunked.chunk_offsets,
                                                  .nnz = chunked.part.graph.inner.nnz(),
                                                  .recompute = Recompute::all});
        (void)executor.train_step(1);
        const planner::PipelineLayout layout{.stages = world.size() / ways,
                                             .ways = ways,
                                             .chunks = chunks,
                                             .recompute = Recompute::all};
        const planner::RunShape shape{.machine = &m, .network = m.shared_memory, .threads = 1};
        const planner::PipelinePrediction p =
            planner::predict_pipeline_epoch(model.graph, s, layout, shape, {}, nullptr, &got);
        REQUIRE(executor.pipeline_epoch().has_value());
        CHECK(p.way_bytes == executor.pipeline_epoch()->way_bytes);
        // The mirror exchange costs time: the same layout with no mirror rows is faster.
        planner::WayStats none = got;
        none.forward_rows = 0;
        none.backward_rows = 0;
        CHECK(p.time.epoch_s >
              planner::predict_pipeline_epoch(model.graph, s, layout, shape, {}, nullptr, &none)
                  .time.epoch_s);
        // The largest rank's memory plan, mirror buffers and real chunks included.
        const std::int64_t planned = largest_memory_plan(world, inputs, executor, parameters);
        const planner::MemoryPrediction mem =
            planner::predict_pipeline_memory(model.graph, s, layout, m, true, 0, {}, true, &got);
        CHECK(mem.planned_bytes == planned);
        // The accuracy guard's check step at one chunk per way: the arena grows to a way's rows.
        (void)executor.staleness_losses(2);
        const std::int64_t checked =
            largest_memory_plan(world, inputs, executor, parameters, guard_history_bytes(executor));
        CHECK(mem.planned_bytes + mem.guard_bytes == checked);
        REQUIRE(test::all_ranks(p.way_bytes == executor.pipeline_epoch()->way_bytes &&
                                mem.planned_bytes == planned &&
                                mem.planned_bytes + mem.guard_bytes == checked));
    }
    // W > 1 without the chunks' statistics: refused, not priced as one way.
    const planner::PipelineLayout two_ways{.stages = 1, .ways = 2, .chunks = 8};
    const planner::RunShape shape{.machine = &m, .network = m.shared_memory, .threads = 1};
    CHECK_THROWS_WITH(planner::predict_pipeline_epoch(model.graph, s, two_ways, shape),
                      Catch::Contains("WayStats"));
    CHECK_THROWS_WITH(planner::predict_pipeline_memory(model.graph, s, two_ways, m, true),
                      Catch::Contains("WayStats"));
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

TEST_CASE("Plexus's model: a grid by hand and the design note's worked example", "[planner]") {
    // P = 2 as 1 x 1 x 2, N = 10, E = 30, widths 4 -> 8 -> 2, 50 parameters. Layer 1 rotates to
    // (r, c, f) = (Y, X, Z) = (1, 1, 2): 2 N 8 / 2 (0 + 1 + 0) = 80 words; layer 2 to (Z, Y, X) =
    // (2, 1, 1): 2 N 2 / 2 (0 + 0 + 1) = 20; the input's all-gather (r = 1) nothing.
    const planner::PlexusGrid g = planner::plexus_grid(10, 30, {4, 8, 2}, 50, 1, 1, 2);
    CHECK(g.words == Approx(100.0));
    // Memory: features 4 N 4 / 2 = 80, weights 4 x 50 / 2 = 100; rotation 0 adjacency
    // 2 (3 x 30 / 1 + 2 x 10 / 1) = 220, layer 1 aggregation + activation 4 N 8 / 1 = 320;
    // rotation 1 adjacency 2 (90 / 2 + 20 / 2) = 110, layer 2 4 N 2 / 2 = 40: 870 words.
    CHECK(g.memory_bytes == Approx(4.0 * 870.0));
    CHECK_FALSE(g.meets_floor);  // 8 / 2 and 2 / 1 columns per rank, under 32
    // ../shared/docs/research/multidim.md section 4: 4.8M vertices, 241.6M entries, GCN
    // 100 -> 256 -> 256 -> 47, P = 64 as the 4 x 4 x 4 cube: 1.03e9 words per rank per step.
    const planner::PlexusGrid cube =
        planner::plexus_grid(4.8e6, 241.6e6, {100, 256, 256, 47}, 104e3, 4, 4, 4);
    CHECK(cube.words == Approx(1.03e9).epsilon(0.005));
    // The search runs powers of two only: 6 ranks are planned as 4.
    const planner::PlexusGrid best = planner::plexus_best_grid(10, 30, {4, 8, 2}, 50, 6);
    CHECK(best.x * best.y * best.z == 4);
}

TEST_CASE("CAGNET's 1.5D and 2D: words by hand and the design note's crossovers", "[planner]") {
    // P = 4, N = 8, u = 40 bytes a halo row per epoch: 1D at h(4) = 2 moves 2 x 8 x 40 / 4 = 160
    // bytes per rank; 1.5D at c = 2 with h(2) = 0.5 moves (0.5 + 2 (2 - 1)) x 80 = 200; 2D 2 x 2
    // moves (2 + 2 - 2) x 80 = 160 (a tie with 1D at h(4) = 2).
    CHECK(planner::oned_paper_bytes(4, 8, 40, 2.0) == Approx(160.0));
    const planner::PaperLayout l = planner::one_and_half_d(4, 2, 8, 40, 0.5);
    CHECK(l.factor == Approx(2.5));
    CHECK(l.bytes == Approx(200.0));
    CHECK(planner::stationary_2d(2, 2, 8, 40).bytes == Approx(160.0));
    // c divides P and c <= P / c; the grids have both sides >= 2.
    CHECK(planner::replication_factors(4) == std::vector<int>{2});
    CHECK(planner::replication_factors(12) == std::vector<int>{2, 3});
    CHECK(planner::replication_factors(16) == std::vector<int>{2, 4});
    CHECK(planner::replication_factors(7).empty());
    CHECK(planner::best_one_and_half_d(7, 8, 40, [](int) { return 0.0; }).a == 0);
    CHECK(planner::best_stationary_2d(7, 8, 40).a == 0);
    CHECK(planner::best_stationary_2d(1, 8, 40).a == 0);
    // The best c: at P = 16, h(8) = 5, h(4) = 0.5: c = 2 gives 5 + 2 = 7, c = 4 0.5 + 6 = 6.5.
    const auto h = [](int k) { return k == 8 ? 5.0 : 0.5; };
    CHECK(planner::best_one_and_half_d(16, 8, 40, h).a == 4);
    CHECK(planner::best_one_and_half_d(16, 8, 40, h).factor == Approx(6.5));
    // The best grid: 4 x 4 (6) over 2 x 8 (8); 3 x 4 (5) at P = 12.
    const planner::PaperLayout square = planner::best_stationary_2d(16, 8, 40);
    CHECK((square.a == 4 && square.b == 4 && square.factor == Approx(6.0)));
    CHECK(planner::best_stationary_2d(12, 8, 40).factor == Approx(5.0));
    // ../shared/docs/research/multidim.md section 4 (4.8M vertices, Σw = 706, 4 bytes a word):
    // 1.5D c = 2 at P = 4 (h(2) = 0.93) 2.48e9 words, at P = 64 (h(32) = 10) 6.35e8; 2D 2 x 2
    // 1.69e9, 8 x 8 7.41e8.
    const double u = 4.0 * 706.0;
    CHECK(planner::one_and_half_d(4, 2, 4.8e6, u, 0.93).bytes / 4 == Approx(2.48e9).epsilon(0.005));
    CHECK(planner::one_and_half_d(64, 2, 4.8e6, u, 10.0).bytes / 4 ==
          Approx(6.35e8).epsilon(0.005));
    CHECK(planner::stationary_2d(2, 2, 4.8e6, u).bytes / 4 == Approx(1.69e9).epsilon(0.005));
    CHECK(planner::stationary_2d(8, 8, 4.8e6, u).bytes / 4 == Approx(7.41e8).epsilon(0.005));
    // Section 3's crossovers as properties: 1.5D beats 1D iff h(P/c) + 2 (c - 1) < h(P); 2D
    // beats 1D iff Gr + Gc - 2 < h(P).
    const std::vector<double> hs{0.0, 0.3, 1.0, 2.0, 2.33, 4.08, 10.0, 14.4, 30.0, 48.8, 300.0};
    for (const int p : {4, 6, 8, 16, 64, 256, 1024}) {
        for (const double hp : hs) {
            const double oned = planner::oned_paper_bytes(p, 1e5, u, hp);
            for (const int c : planner::replication_factors(p)) {
                for (const double ht : hs) {
                    const bool beats = planner::one_and_half_d(p, c, 1e5, u, ht).bytes < oned;
                    CHECK(beats == (ht + 2.0 * (c - 1) < hp));
                }
            }
            for (int r = 1; r <= p; ++r) {
                if (p % r == 0) {
                    const bool beats = planner::stationary_2d(r, p / r, 1e5, u).bytes < oned;
                    CHECK(beats == (r + p / r - 2 < hp));
                }
            }
        }
    }
    // The memory model's ranks: a 1.5D rank receives 1/c of its team's halo rows; a 2D rank
    // gathers N / Gc rows of H and holds N / Gr rows of partial Z (8 vertices, 2 x 2: 4 - 2).
    PartitionStats four;
    four.vertices = 8;
    four.ranks.assign(4, RankStats{.owned = 2, .send_rows = 3, .recv_rows = 3});
    const PartitionStats team = planner::team_stats(four, 2);
    CHECK((team.ranks[0].send_rows == 2 && team.ranks[0].recv_rows == 2));
    const PartitionStats two = planner::stationary_2d_stats(four, 2, 2);
    CHECK((two.ranks[3].recv_rows == 2 && two.ranks[3].send_rows == 2));
    CHECK(planner::halo_factor(four) == Approx(12.0 / 8.0));
    CHECK_THROWS(planner::one_and_half_d(8, 4, 8, 40, 0.0));  // 4 > 8 / 4
}

}  // namespace
}  // namespace strata
