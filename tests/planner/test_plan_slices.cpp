// strata plan's S x F pipeline (feature slices inside each stage) against the executor it
// predicts: the layouts listed at 4 and 8 ranks, a plan file's S x F recommendation, and on 4
// ranks (2 stages x 2 slices) the stage bytes, the layout switches' bytes (a2a and its recomputed
// part) and the largest rank's memory plan equal the run's exactly, at an odd width and uneven
// chunks (300 rows in 8 chunks of 37 and 38: row blocks 19/18 and 19/19; hidden 7: column slices
// 4 and 3), in recompute modes none and all; likewise S x W x F (1 x 2 x 2), with the mirror
// bytes and the guard's grown plan.
#include <algorithm>
#include <array>
#include <iterator>

#include <catch2/catch.hpp>

#include "datasets/adjacency.hpp"
#include "layers/model_inputs.hpp"
#include "layers/model_zoo.hpp"
#include "layers/pipeline_slices.hpp"
#include "partition/local_part.hpp"
#include "planner/layout_plan.hpp"
#include "planner/machine_model.hpp"
#include "planner/memory_model.hpp"
#include "planner/partition_stats.hpp"
#include "planner/pipeline_model.hpp"
#include "planner/way_stats.hpp"
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

using test::flat_machine;

ModelSpec small(const std::string& name, int layers, index_t hidden) {
    ModelSpec spec = find_model(name).recipe.spec;
    spec.layers = layers;
    spec.hidden = hidden;
    spec.dropout = 0.0f;
    return spec;
}

/// C even chunks of `rows` rows: the offsets (C + 1) and each chunk's rows.
std::pair<std::vector<index_t>, std::vector<index_t>> even_chunks(index_t rows, int chunks) {
    std::vector<index_t> offsets;
    std::vector<index_t> sizes;
    for (int c = 0; c <= chunks; ++c) {
        offsets.push_back(static_cast<index_t>(rows * c / chunks));
        if (c > 0) {
            sizes.push_back(offsets.back() - offsets[offsets.size() - 2]);
        }
    }
    return {offsets, sizes};
}

/// The largest rank's memory plan (strata train's per-rank lines); `history`: with the host copy
/// of the rank's history the accuracy guard's check holds (every aggregation input's rows and
/// their snapshot, priced as present: 2 x the embeddings' floats).
std::int64_t largest_plan(Communicator& world, const ModelInputs& inputs,
                          const PipelineExecutor& executor, const ModelParameters& parameters,
                          bool history = false) {
    std::int64_t bytes =
        total_bytes(run_memory_lines(inputs.lines, executor.memory_plan(), parameters.size()));
    if (history) {
        for (const HistoryTensor& t : executor.history().embeddings) {
            bytes += 2 * static_cast<std::int64_t>(t.values.size() * sizeof(float));
        }
    }
    std::array<std::int64_t, 1> largest{bytes};
    world.allreduce_max(largest);
    return largest[0];
}

TEST_CASE("pipeline layouts at 4 ranks: S = 4, then 2 stages x 2 ways, then 2 x 2 (S x F)",
          "[planner]") {
    const BuiltModel model = build_model(small("gcnii", 4, 8), 20, 4);
    REQUIRE(max_stages(model.graph) >= 4);
    const auto four = planner::pipeline_layouts(model.graph, 4, 300);
    REQUIRE(four.size() == 9);
    for (std::size_t i = 0; i < 3; ++i) {  // one way and F = 1 first, as before
        CHECK(four[i].stages == 4);
        CHECK(four[i].ways == 1);
        CHECK(four[i].feature_slices == 1);
    }
    for (std::size_t i = 3; i < 6; ++i) {  // the hybrid: S = 2, W = 2, C = 16, 32, 64
        CHECK(four[i].stages == 2);
        CHECK(four[i].ways == 2);
        CHECK(four[i].feature_slices == 1);
        CHECK(four[i].chunks == 16 << (i - 3));
        CHECK(four[i].recompute == Recompute::all);
    }
    for (std::size_t i = 6; i < 9; ++i) {  // S x F: S = 2, F = 2, C = 8, 16, 32
        CHECK(four[i].stages == 2);
        CHECK(four[i].ways == 1);
        CHECK(four[i].feature_slices == 2);
        CHECK(four[i].chunks == 8 << (i - 6));
        CHECK(four[i].recompute == Recompute::all);
    }
    // A chunk needs a row per slice: of 40 rows, 32 chunks have 1 (refused), 16 have 2.
    const auto few = planner::pipeline_layouts(model.graph, 4, 40);
    CHECK(std::count_if(few.begin(), few.end(), [](const planner::PipelineLayout& l) {
              return l.feature_slices == 2;
          }) == 2);
    // F = 4 would leave one stage; 8 ranks: 4 x 2 and 2 x 4 (hidden 8: a column per slice).
    const auto eight = planner::pipeline_layouts(model.graph, 8, 3000);
    CHECK(std::count_if(eight.begin(), eight.end(), [](const planner::PipelineLayout& l) {
              return l.feature_slices == 4 && l.stages == 2;
          }) == 3);
    // ... and S x W x F: 2 stages x 2 ways x 2 slices, C = 16, 32, 64, after S x F's F = 2.
    const auto swf = std::find_if(eight.begin(), eight.end(), [](const planner::PipelineLayout& l) {
        return l.feature_slices == 2 && l.ways == 2;
    });
    REQUIRE(eight.end() - swf >= 3);
    for (int i = 0; i < 3; ++i) {
        CHECK(swf[i].stages == 2);
        CHECK(swf[i].ways == 2);
        CHECK(swf[i].chunks == 16 << i);
        CHECK(std::prev(swf)->feature_slices == 2);
        CHECK(std::prev(swf)->ways == 1);
    }
    // A width below F (hidden 1 at F = 2) blocks S x F, as the executor refuses it.
    const BuiltModel narrow = build_model(small("gcnii", 4, 1), 20, 4);
    const auto blocked = planner::pipeline_layouts(narrow.graph, 4, 300);
    CHECK(std::none_of(blocked.begin(), blocked.end(),
                       [](const planner::PipelineLayout& l) { return l.feature_slices > 1; }));
}

TEST_CASE("a plan file's S x F (and S x W x F) recommendation is the layout --plan applies",
          "[planner]") {
    const auto plan = [](int stages, int ways, int slices) {
        return R"({"format": "strata-plan", "version": 3, "candidates": [{"parallel": "pipeline",
            "ranks": 4, "recompute": "all", "stages": )" +
               std::to_string(stages) + R"(, "ways": )" + std::to_string(ways) +
               R"(, "chunks": 8, "feature_slices": )" + std::to_string(slices) +
               R"(, "recommended": true}]})";
    };
    const planner::ChosenLayout sf = planner::chosen_layout(plan(2, 1, 2), "p.json", 4);
    CHECK(sf.parallel == "pipeline");
    CHECK(sf.stages == 2);
    CHECK(sf.ways == 1);
    CHECK(sf.chunks == 8);
    CHECK(sf.feature_slices == 2);
    CHECK(sf.recompute == "all");
    // A version-2 file (no feature_slices) still reads as F = 1.
    const std::string old = R"({"format": "strata-plan", "version": 2, "candidates": [{"parallel":
        "pipeline", "ranks": 4, "recompute": "all", "stages": 4, "ways": 1, "chunks": 16,
        "recommended": true}]})";
    CHECK(planner::chosen_layout(old, "old.json", 4).feature_slices == 1);
    const planner::ChosenLayout swf = planner::chosen_layout(plan(1, 2, 2), "p.json", 4);
    CHECK(swf.ways == 2);  // S x W x F
    CHECK(swf.feature_slices == 2);
    CHECK_THROWS_WITH(planner::chosen_layout(plan(2, 2, 2), "p.json", 4),
                      Catch::Contains("p.json: pipeline candidate for 4 ranks: stages 2 x ways 2 x "
                                      "feature_slices 2 with chunks 8 does not fit 4 ranks"));
    CHECK_THROWS_WITH(
        planner::chosen_layout(plan(2, 1, 3), "p.json", 4),
        Catch::Contains("p.json: candidate for 4 ranks: feature_slices 3 does not divide 4 ranks"));
}

TEST_CASE("S x F: predicted stage bytes, a2a bytes and memory plan equal the executor's",
          "[planner][mpi]") {
    MpiCommunicator world;
    MpiCommunicator self(MPI_COMM_SELF);
    if (world.size() != 4) {
        return;
    }
    constexpr int slices = 2;
    CpuBackend backend(1);
    const GraphDataset g = test::community_graph(300, 4, 4, 20, 12);
    const auto group = world.split(world.rank() / slices, world.rank() % slices);
    for (const std::string name : {"gcnii", "sage"}) {
        BuiltModel model = build_model(small(name, 4, 7), 20, 4);
        const planner::PartitionStats s =
            planner::measure_partition(g, "community", 1, model.graph.normalization(), 0);
        LocalPart part =
            build_local_part(g, adjacency_matrix(g), partition_block(g.num_vertices(), 1), 0);
        ModelInputs inputs(backend, self, part, model.graph);
        ModelParameters parameters(backend, model.graph, 1);
        const int chunks = 8;
        const auto [offsets, chunk_rows] = even_chunks(part.graph.num_owned, chunks);
        REQUIRE(std::find(chunk_rows.begin(), chunk_rows.end(), 37) != chunk_rows.end());
        for (const Recompute mode : {Recompute::none, Recompute::all}) {
            INFO(name << ", recompute " << to_string(mode));
            SlicedStageAggregation sliced(backend, *inputs.aggregation, *group, offsets);
            PipelineExecutor executor(backend, world, self, model.graph, parameters,
                                      *inputs.aggregation, inputs.uploaded->data(),
                                      PipelineOptions{.stages = world.size() / slices,
                                                      .chunk_offsets = offsets,
                                                      .nnz = part.graph.inner.nnz(),
                                                      .recompute = mode,
                                                      .slices = &sliced});
            const HaloBytes before = executor.switch_bytes();
            (void)executor.train_step(1);
            const HaloBytes after = executor.switch_bytes();
            (void)executor.evaluate();
            std::array<std::int64_t, 2> a2a{
                (after.forward - before.forward) + (after.backward - before.backward),
                after.recompute - before.recompute};
            world.allreduce_sum(a2a);
            const planner::MachineModel m = flat_machine();
            const planner::PipelineLayout layout{.stages = world.size() / slices,
                                                 .ways = 1,
                                                 .chunks = chunks,
                                                 .recompute = mode,
                                                 .feature_slices = slices};
            const planner::PipelinePrediction p = planner::predict_pipeline_epoch(
                model.graph, s, layout, {.machine = &m, .network = m.shared_memory, .threads = 1},
                chunk_rows);
            CHECK(p.split == executor.layout().describe(model.graph));
            REQUIRE(executor.pipeline_epoch().has_value());
            CHECK(p.stage_bytes == executor.pipeline_epoch()->stage_bytes);
            CHECK(p.stage_bytes > 0);
            CHECK(p.a2a_bytes == a2a[0]);
            CHECK(p.recompute_a2a_bytes == a2a[1]);
            CHECK(p.a2a_bytes > 0);
            CHECK(p.time.epoch_s > 0.0);
            // Without the run's chunks (even blocks): the same bytes here (300 rows in 8 even
            // blocks are these chunks).
            const planner::PipelinePrediction even = planner::predict_pipeline_epoch(
                model.graph, s, layout, {.machine = &m, .network = m.shared_memory, .threads = 1});
            CHECK(even.a2a_bytes == p.a2a_bytes);
            // The largest rank's memory plan (strata train's per-rank lines).
            const std::vector<MemoryLine> mine =
                run_memory_lines(inputs.lines, executor.memory_plan(), parameters.size());
            std::array<std::int64_t, 1> planned{total_bytes(mine)};
            world.allreduce_max(planned);
            const planner::MemoryPrediction mem =
                planner::predict_pipeline_memory(model.graph, s, layout, m, true, 0, chunk_rows);
            CHECK(mem.planned_bytes == planned[0]);
            if (total_bytes(mine) == planned[0] && mem.planned_bytes != planned[0]) {
                for (std::size_t i = 0; i < std::max(mine.size(), mem.lines.size()); ++i) {
                    UNSCOPED_INFO((i < mine.size() ? mine[i].what : "-")
                                  << " " << (i < mine.size() ? mine[i].bytes : 0) << " | "
                                  << (i < mem.lines.size() ? mem.lines[i].what : "-") << " "
                                  << (i < mem.lines.size() ? mem.lines[i].bytes : 0));
                }
                CHECK(false);
            }
            // Without them: within the chunk scratch's share.
            const planner::MemoryPrediction estimated =
                planner::predict_pipeline_memory(model.graph, s, layout, m, true);
            CHECK(std::abs(estimated.planned_bytes - planned[0]) < planned[0] / 20);
            REQUIRE(test::all_ranks(p.stage_bytes == executor.pipeline_epoch()->stage_bytes &&
                                    p.a2a_bytes == a2a[0] && mem.planned_bytes == planned[0]));
            // The accuracy guard's check step (one chunk per way): the grown plan is the
            // predicted plan + guard_bytes.
            (void)executor.staleness_losses(2);
            // ... and holds a host copy of the history while it runs (largest_plan).
            const std::int64_t checked = largest_plan(world, inputs, executor, parameters, true);
            CHECK(mem.guard_bytes > 0);
            CHECK(mem.planned_bytes + mem.guard_bytes == checked);
        }
    }
}

TEST_CASE("S x W x F: predicted way bytes, a2a bytes and memory plan equal the executor's",
          "[planner][mpi]") {
    // 1 stage x 2 ways x 2 slices on 4 ranks (rank = way x 2 + slice), 8 chunks of 37-38 rows,
    // hidden 7 (column slices 4 and 3): the mirror rows at each slice's width.
    MpiCommunicator world;
    MpiCommunicator self(MPI_COMM_SELF);
    if (world.size() != 4) {
        return;
    }
    constexpr int slices = 2;
    constexpr int ways = 2;
    constexpr int chunks = 8;
    CpuBackend backend(1);
    const GraphDataset g = test::community_graph(300, 4, 4, 20, 12);
    const auto group = world.split(world.rank() / slices, world.rank() % slices);
    for (const std::string name : {"gcnii", "sage"}) {
        INFO(name);
        BuiltModel model = build_model(small(name, 4, 7), 20, 4);
        const planner::PartitionStats s =
            planner::measure_partition(g, "community", 1, model.graph.normalization(), 0);
        LocalPart part =
            build_local_part(g, adjacency_matrix(g), partition_block(g.num_vertices(), 1), 0);
        ModelInputs inputs(backend, self, part, model.graph);
        ModelParameters parameters(backend, model.graph, 1);
        const auto [offsets, chunk_rows] = even_chunks(part.graph.num_owned, chunks);
        SlicedStageAggregation sliced(backend, *inputs.aggregation, *group, offsets);
        PipelineExecutor executor(backend, world, self, model.graph, parameters,
                                  *inputs.aggregation, inputs.uploaded->data(),
                                  PipelineOptions{.stages = 1,
                                                  .ways = ways,
                                                  .structure = &part.graph.inner,
                                                  .chunk_offsets = offsets,
                                                  .nnz = part.graph.inner.nnz(),
                                                  .recompute = Recompute::all,
                                                  .slices = &sliced});
        const HaloBytes before = executor.switch_bytes();
        (void)executor.train_step(1);
        const HaloBytes after = executor.switch_bytes();
        std::array<std::int64_t, 1> a2a{(after.forward - before.forward) +
                                        (after.backward - before.backward)};
        world.allreduce_sum(a2a);
        const planner::WayStats stats = planner::way_stats(part.graph.inner, offsets, ways);
        const planner::MachineModel m = flat_machine();
        const planner::PipelineLayout layout{.stages = 1,
                                             .ways = ways,
                                             .chunks = chunks,
                                             .recompute = Recompute::all,
                                             .feature_slices = slices};
        const planner::PipelinePrediction p = planner::predict_pipeline_epoch(
            model.graph, s, layout, {.machine = &m, .network = m.shared_memory, .threads = 1},
            chunk_rows, nullptr, &stats);
        REQUIRE(executor.pipeline_epoch().has_value());
        CHECK(p.way_bytes == executor.pipeline_epoch()->way_bytes);
        CHECK(p.way_bytes > 0);
        CHECK(p.a2a_bytes == a2a[0]);
        CHECK(p.time.epoch_s > 0.0);
        // The largest rank's memory plan (mirror buffers at the slice's width), and with the
        // accuracy guard's check step at one chunk per way.
        const std::int64_t planned = largest_plan(world, inputs, executor, parameters);
        const planner::MemoryPrediction mem = planner::predict_pipeline_memory(
            model.graph, s, layout, m, true, 0, chunk_rows, true, &stats);
        CHECK(mem.planned_bytes == planned);
        (void)executor.staleness_losses(2);
        const std::int64_t checked = largest_plan(world, inputs, executor, parameters, true);
        CHECK(mem.planned_bytes + mem.guard_bytes == checked);
        REQUIRE(test::all_ranks(p.way_bytes == executor.pipeline_epoch()->way_bytes &&
                                p.a2a_bytes == a2a[0] && mem.planned_bytes == planned &&
                                mem.planned_bytes + mem.guard_bytes == checked));
    }
}

}  // namespace
}  // namespace strata
