// The layer pipeline's cost and memory: the executor's stage split and storage, the cost
// model's per-op prices, and the GPipe wave simulated in the executor's order.
#include "planner/pipeline_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <tuple>

#include "layers/grid_aggregation.hpp"
#include "layers/layout_switch.hpp"
#include "layers/pipeline_slices.hpp"
#include "planner/grid_model.hpp"
#include "planner/pipeline_slices_model.hpp"
#include "planner/shape_operator.hpp"
#include "src/base/error.hpp"
#include "src/nn/execution_plan.hpp"
#include "src/nn/model_parameters.hpp"
#include "src/nn/stage_storage.hpp"
#include "src/nn/way_mirrors.hpp"
#include "src/tensor/grid_blocks.hpp"
#include "training/run_memory.hpp"

namespace strata::planner {
namespace {

/// Bytes of the host copy the accuracy guard's check takes of a stage's history (the executor's
/// PipelineExecutor::history, put back after the check): every aggregation input of the stage
/// (`storage`) at the rank's `rows`, and its T3 snapshot (the default period keeps one); T2's
/// default (on) copies no gradients. S x F: the rank's rows are its share of every chunk.
std::int64_t history_copy_bytes(const ModelGraph& graph, const StageStorage& storage,
                                index_t rows) {
    std::int64_t floats = 0;
    for (const TensorId t : storage.snapshot) {
        floats += static_cast<std::int64_t>(rows) * graph.tensor(t).cols;
    }
    return 2 * floats * static_cast<std::int64_t>(sizeof(float));
}

/// The METIS chunks' balance: the largest of C chunks holds at most this x |V| / C rows.
constexpr double chunk_balance = 1.03;

/// The rows and entries one way holds (a 1/W share of the whole graph; no halo).
RankStats way_share(const PartitionStats& whole, int ways) {
    const RankStats& all = whole.ranks.at(0);
    RankStats r = all;
    r.owned = all.owned / ways;
    r.inner_nnz = (all.inner_nnz + all.halo_nnz) / ways;
    r.halo_nnz = 0;
    r.send_rows = 0;
    r.recv_rows = 0;
    r.peers = 0;
    return r;
}

/// Columns crossing each cut s -> s + 1 (the outgoing tensors of stage s).
/// Per cut, the bytes one row of its crossing tensors takes on the wire (packed_row_bytes).
std::vector<double> cut_row_bytes(const ModelGraph& graph, const StageLayout& layout,
                                  HaloPrecision precision) {
    std::vector<double> bytes;
    for (std::size_t s = 0; s + 1 < layout.stages.size(); ++s) {
        double b = 0.0;
        for (const TensorId t : layout.stages[s].outgoing) {
            b += static_cast<double>(packed_row_bytes(precision, graph.tensor(t).cols));
        }
        bytes.push_back(b);
    }
    return bytes;
}

/// One stage's mirror exchanges (W > 1 ways) per chunk step: one exchange per slot that
/// way_mirror_slots lists, with every other way, and the record bytes of a row summed over
/// them, forward (before steps below the schedule's boundary) and backward. S x W x F: the
/// row's columns of slice `slice` of `slices` (the mirrors' width).
struct StageWayExchange {
    int forward_exchanges = 0;
    int backward_exchanges = 0;
    std::int64_t forward_row_bytes = 0;
    std::int64_t backward_row_bytes = 0;
};

StageWayExchange stage_way_exchange(const ModelGraph& graph, const StageStorage& storage,
                                    HaloPrecision precision, int slices = 1, int slice = 0) {
    StageWayExchange out;
    const std::vector<std::vector<int>> exchanged = way_mirror_slots(graph, storage);
    for (std::size_t k = 0; k < exchanged.size(); ++k) {
        const bool forward = static_cast<int>(k) < storage.schedule.boundary;
        for (const int slot : exchanged[k]) {
            const index_t cols = storage.slots[static_cast<std::size_t>(slot)].cols;
            const auto bytes = static_cast<std::int64_t>(
                packed_row_bytes(precision, grid_block(cols, slices, slice).count));
            (forward ? out.forward_exchanges : out.backward_exchanges) += 1;
            (forward ? out.forward_row_bytes : out.backward_row_bytes) += bytes;
        }
    }
    return out;
}

/// PipelineExecutor's mirror_bytes for W > 1 ways: the send and receive buffers at
/// way_mirror_width and the packed lists.
std::int64_t mirror_buffer_bytes(const ModelGraph& graph, const StageStorage& storage,
                                 const WayStats& ways, int slices = 1, int slice = 0) {
    const index_t widest = way_mirror_width(graph, storage, slices, slice);
    return (ways.send_rows * widest + ways.recv_rows * (ways.ways - 1) * widest) *
               static_cast<std::int64_t>(sizeof(float)) +
           ways.list_rows * static_cast<std::int64_t>(sizeof(index_t));
}

}  // namespace

std::vector<PipelineLayout> pipeline_layouts(const ModelGraph& graph, int ranks,
                                             global_id vertices) {
    std::vector<PipelineLayout> out;
    // One way and F = 1 first (S = ranks), then W > 1 ways (S = ranks / W), then S x F and
    // S x W x F for every F > 1 (S = ranks / (W F)).
    for (int ways = 1; ways <= ranks; ++ways) {
        for (int slices = 1; slices <= ranks / ways; ++slices) {
            if (ranks % (ways * slices) != 0) {
                continue;
            }
            const int stages = ranks / (ways * slices);
            if (stages < 2 || stages > max_stages(graph) ||
                (slices > 1 && !grid_blocker(graph, slices).empty())) {
                continue;
            }
            for (const int per : {4, 8, 16}) {
                const int chunks = per * stages * ways;
                // Every chunk keeps a row per slice (C even chunks; the executor refuses fewer).
                if (chunks <= vertices && vertices / chunks >= slices) {
                    out.push_back({.stages = stages,
                                   .ways = ways,
                                   .chunks = chunks,
                                   .recompute = Recompute::all,
                                   .feature_slices = slices});
                }
            }
        }
    }
    // The order above puts W > 1 before S x F; keep the documented order (F = 1 with its ways
    // ascending, then each F > 1 with its ways ascending).
    std::stable_sort(out.begin(), out.end(), [](const PipelineLayout& a, const PipelineLayout& b) {
        return a.feature_slices < b.feature_slices;
    });
    return out;
}

StageLayout pipeline_stage_layout(const ModelGraph& graph, int stages,
                                  const PartitionStats& whole) {
    // As strata train: the whole graph's rows and the entries of its adjacency (LocalPart's
    // inner block, the raw A).
    return plan_stages(
        graph, stages,
        StageCostInputs{.rows = static_cast<index_t>(whole.vertices), .nnz = whole.nnz});
}

std::int64_t pipeline_stage_bytes(const ModelGraph& graph, const StageLayout& layout,
                                  global_id vertices, HaloPrecision precision) {
    std::int64_t row_bytes = 0;
    for (const double b : cut_row_bytes(graph, layout, precision)) {
        row_bytes += static_cast<std::int64_t>(b);
    }
    return 2 * static_cast<std::int64_t>(vertices) * row_bytes;
}

std::int64_t pipeline_way_bytes(const ModelGraph& graph, const StageLayout& layout,
                                const HostCsr& structure, std::span<const index_t> chunk_offsets,
                                int ways, Recompute recompute, HaloPrecision precision) {
    if (ways <= 1) {
        return 0;
    }
    return pipeline_way_bytes(graph, layout, structure.rows,
                              way_stats(structure, chunk_offsets, ways), recompute, precision);
}

std::int64_t pipeline_way_bytes(const ModelGraph& graph, const StageLayout& layout, index_t rows,
                                const WayStats& ways, Recompute recompute, HaloPrecision precision,
                                int slices) {
    if (ways.ways <= 1) {
        return 0;
    }
    // Each chunk's lists go once per epoch for every tensor exchanged (a chunk's list for its
    // own way is empty); S x W x F: by every slice, at its columns.
    std::int64_t bytes = 0;
    for (int s = 0; s < static_cast<int>(layout.stages.size()); ++s) {
        const StageStorage storage =
            plan_stage_storage(graph, layout, s, rows, recompute, slices > 1);
        for (int f = 0; f < slices; ++f) {
            const StageWayExchange e = stage_way_exchange(graph, storage, precision, slices, f);
            bytes +=
                ways.forward_rows * e.forward_row_bytes + ways.backward_rows * e.backward_row_bytes;
        }
    }
    return bytes;
}

double pipeline_wave_seconds(std::span<const double> forward, std::span<const double> backward,
                             std::span<const double> transfer, int steps) {
    const std::size_t stages = forward.size();
    STRATA_ASSERT(backward.size() == stages && transfer.size() == stages && steps >= 1);
    // done[s]: when stage s finished its latest chunk; a stage's step k starts when its step
    // k - 1 is done and the neighbour's step k has arrived (blocking receive; sends are
    // asynchronous, so the sender does not wait). The link between stages s - 1 and s carries
    // one chunk at a time each way: a send starts when the sender is done and the link has
    // delivered the one before (free[s], per direction), so transfers longer than the
    // receiver's compute queue up instead of overlapping each other.
    std::vector<double> done(stages, 0.0);
    std::vector<double> free(stages, 0.0);
    for (int k = 0; k < steps; ++k) {  // forward, stage 0 first
        for (std::size_t s = 0; s < stages; ++s) {
            double ready = done[s];
            if (s > 0) {
                free[s] = std::max(done[s - 1], free[s]) + transfer[s];
                ready = std::max(ready, free[s]);
            }
            done[s] = ready + forward[s];
        }
    }
    std::fill(free.begin(), free.end(), 0.0);  // the other direction's links
    for (int k = 0; k < steps; ++k) {          // backward, last stage first
        for (std::size_t s = stages; s-- > 0;) {
            double ready = done[s];
            if (s + 1 < stages) {
                free[s + 1] = std::max(done[s + 1], free[s + 1]) + transfer[s + 1];
                ready = std::max(ready, free[s + 1]);
            }
            done[s] = ready + backward[s];
        }
    }
    return *std::max_element(done.begin(), done.end());
}

PipelineNetworks pipeline_networks(const MachineModel& machine, const PipelineLayout& layout,
                                   int per_node) {
    const int f = layout.feature_slices;
    const int block = layout.ways * f;  // a stage's ranks
    const bool one_node = per_node <= 0;
    PipelineNetworks out;
    out.features = feature_group_network(machine, one_node || per_node % f == 0, f, per_node);
    out.mirrors = one_node || per_node % block == 0 ? machine.shared_memory
                                                    : group_link(machine, layout.ways, f, per_node);
    for (int s = 0; s + 1 < layout.stages; ++s) {
        std::map<int, int> across;  // node -> its ranks of stage s whose partner is elsewhere
        int senders = 0;
        for (int r = s * block; !one_node && r < (s + 1) * block; ++r) {
            if (r / per_node != (r + block) / per_node) {
                senders = std::max(senders, ++across[r / per_node]);
            }
        }
        Network cut = senders == 0 ? machine.shared_memory : machine.link(1);
        cut.bandwidth_gbs /= std::max(1, senders);
        out.cuts.push_back(cut);
    }
    return out;
}

PipelinePrediction predict_pipeline_epoch(const ModelGraph& graph, const PartitionStats& whole,
                                          const PipelineLayout& layout, const RunShape& shape,
                                          std::span<const index_t> chunk_rows,
                                          const PipelineNetworks* networks,
                                          const WayStats* way_stats) {
    PipelinePrediction out;
    const int slices = layout.feature_slices;
    STRATA_CHECK(slices >= 1, "pipeline: ", slices, " feature slices");
    STRATA_CHECK(layout.ways == 1 || (way_stats != nullptr && way_stats->ways == layout.ways &&
                                      way_stats->chunks == layout.chunks),
                 "pipeline: ", layout.ways, " ways x ", layout.chunks,
                 " chunks are priced with the mirror lists of those chunks (WayStats)");
    const StageLayout stages = pipeline_stage_layout(graph, layout.stages, whole);
    out.split = stages.describe(graph);
    // S x F: each rank sends its row block of every chunk, |V| rows over the F ranks in all.
    out.stage_bytes = pipeline_stage_bytes(graph, stages, whole.vertices, shape.halo_precision);
    RankStats way = way_share(whole, layout.ways);
    std::vector<index_t> chunks;
    int priced = 0;  // the slice priced: the largest share of rows
    if (slices > 1) {
        chunks = chunk_rows.empty() ? even_chunk_rows(whole.vertices, layout.chunks)
                                    : std::vector<index_t>(chunk_rows.begin(), chunk_rows.end());
        for (int f = 1; f < slices; ++f) {
            if (SlicedStageAggregation::share_rows(chunks, slices, f) >
                SlicedStageAggregation::share_rows(chunks, slices, priced)) {
                priced = f;
            }
        }
        // That slice's share (its row block of every chunk; with W ways, of its way's chunks:
        // 1/W of it), the aggregation's entries / F (way_share took 1/W): the grid's pricing of
        // a row chunk with its column slice.
        way.owned = SlicedStageAggregation::share_rows(chunks, slices, priced) / layout.ways;
        way.inner_nnz =
            static_cast<std::int64_t>(std::llround(static_cast<double>(way.inner_nnz) / slices));
        const SliceBytes a2a = pipeline_a2a_bytes(graph, stages, chunks, slices, layout.recompute);
        out.a2a_bytes = a2a.a2a;
        out.recompute_a2a_bytes = a2a.recompute_a2a;
    }
    STRATA_CHECK(
        networks == nullptr || networks->cuts.size() == static_cast<std::size_t>(layout.stages - 1),
        "pipeline: ", networks == nullptr ? 0 : networks->cuts.size(), " cut networks for ",
        layout.stages, " stages");
    const Network& switch_network = networks != nullptr ? networks->features : shape.network;
    const Network& mirror_network = networks != nullptr ? networks->mirrors : shape.network;
    const ExecutionPlan plan = rank_plan(graph, way, Recompute::none);
    const ThreadRates& rates = shape.machine->rates(shape.threads);
    const double scale = rates.time_scale * time_share(shape);
    const int steps = layout.chunks / layout.ways;
    const std::vector<double> cuts = cut_row_bytes(graph, stages, shape.halo_precision);
    std::vector<double> forward;
    std::vector<double> backward;
    std::vector<double> transfer;
    EpochTerms slowest;
    double busiest = 0.0;       // the busiest stage's compute and switches
    double busiest_work = 0.0;  // of which compute
    double switches = 0.0;      // its switches
    double mirrors = 0.0;       // its mirror exchanges (W > 1)
    for (std::size_t s = 0; s < stages.stages.size(); ++s) {
        const Stage& stage = stages.stages[s];
        EpochTerms terms;
        std::array<double, 2> per_chunk{};  // forward, backward
        std::size_t i = 0;
        // Backward also recomputes what the stage's plan does not keep from the chunk's
        // forward (its recompute steps, stage_storage.hpp).
        const StageStorage storage =
            plan_stage_storage(graph, stages, static_cast<int>(s), static_cast<index_t>(way.owned),
                               layout.recompute, slices > 1);
        const std::vector<int>& recompute = storage.recompute;
        for (const Phase phase : {Phase::forward, Phase::backward}) {
            const double fixed_before = terms.steps_s;
            double busy = price_stage(graph, plan.training(), way, shape, stage.first, stage.end,
                                      phase, terms);
            if (phase == Phase::backward) {
                busy += price_recompute(graph, plan.training(), way, shape, recompute, terms);
            }
            const double fixed = terms.steps_s - fixed_before;  // paid once per chunk
            per_chunk[i++] = scale * ((busy - fixed) / steps + fixed);
        }
        // S x F: the chunk's layout switches, blocking, not overlapped (none at F = 1).
        const StageSwitchSeconds switched =
            stage_switch_seconds(graph, storage, chunks, slices, priced, switch_network,
                                 shape.machine->shared_memory.bandwidth_gbs);
        // W > 1: the chunk's mirror exchanges, blocking: one latency each, and the rows a way
        // sends for its chunk (the epoch's lists over the C chunks: the average chunk).
        std::array<double, 2> mirrored{};  // forward, backward
        if (layout.ways > 1) {
            const StageWayExchange e =
                stage_way_exchange(graph, storage, shape.halo_precision, slices, priced);
            const double per_chunk_rows = 1.0 / static_cast<double>(layout.chunks);
            const double bandwidth = mirror_network.bandwidth_gbs * giga;
            mirrored[0] = e.forward_exchanges * mirror_network.latency_s +
                          static_cast<double>(way_stats->forward_rows) * per_chunk_rows *
                              static_cast<double>(e.forward_row_bytes) / bandwidth;
            mirrored[1] = e.backward_exchanges * mirror_network.latency_s +
                          static_cast<double>(way_stats->backward_rows) * per_chunk_rows *
                              static_cast<double>(e.backward_row_bytes) / bandwidth;
        }
        forward.push_back(per_chunk[0] + switched.forward + mirrored[0]);
        backward.push_back(per_chunk[1] + switched.backward + mirrored[1]);
        // The receive before stage s: its cut's rows of one chunk, one message per tensor.
        const double rows = static_cast<double>(way.owned) / steps;
        const Network& cut = s == 0 || networks == nullptr ? shape.network : networks->cuts[s - 1];
        transfer.push_back(s == 0 ? 0.0
                                  : static_cast<double>(stages.stages[s].incoming.size()) *
                                            cut.latency_s +
                                        rows * cuts[s - 1] / (cut.bandwidth_gbs * giga));
        const double stage_busy = steps * (forward.back() + backward.back());
        if (stage_busy >= busiest) {
            busiest = stage_busy;
            busiest_work = steps * (per_chunk[0] + per_chunk[1]);
            switches = steps * (switched.forward + switched.backward);
            mirrors = steps * (mirrored[0] + mirrored[1]);
            slowest = terms;
        }
    }
    const double wave = pipeline_wave_seconds(forward, backward, transfer, steps);
    out.bubble = wave > 0.0 ? 1.0 - busiest / wave : 0.0;
    const double params = static_cast<double>(ModelParameters::count(graph));
    const int ranks = layout.stages * layout.ways * slices;
    slowest.optimizer_s = optimizer_seconds(params, shape);
    slowest.allreduce_s = allreduce_seconds(params, ranks, shape.network);
    for (const double t : transfer) {
        slowest.exchange_s += steps * 2.0 * t;
    }
    slowest.exchange_s += switches + mirrors;
    if (layout.ways > 1) {
        out.way_bytes =
            pipeline_way_bytes(graph, stages, static_cast<index_t>(whole.vertices), *way_stats,
                               layout.recompute, shape.halo_precision, slices);
    }
    // Evaluation: rank 0 runs the whole graph's evaluation schedule alone.
    const RankStats& all = whole.ranks.at(0);
    const ExecutionPlan whole_plan = rank_plan(graph, all, Recompute::none);
    EpochTerms eval_terms;
    const double eval = scale * price_evaluation(graph, whole_plan, all, shape, eval_terms);
    EpochPrediction& p = out.time;
    p.compute_s = busiest_work + scale * slowest.optimizer_s;
    p.wait_s = (wave - busiest_work) + slowest.allreduce_s;
    p.eval_s = eval;
    p.epoch_s = p.compute_s + p.wait_s + p.eval_s;
    p.terms = slowest;
    p.terms.exposed_s = wave - busiest_work;
    p.allreduce_bytes = static_cast<std::int64_t>(params * 4.0);
    return out;
}

MemoryPrediction predict_pipeline_memory(const ModelGraph& graph, const PartitionStats& whole,
                                         const PipelineLayout& layout, const MachineModel& machine,
                                         bool whole_graph_input, index_t largest_chunk,
                                         std::span<const index_t> run_chunks, bool guard,
                                         const WayStats* way_stats) {
    MemoryPrediction out;
    STRATA_CHECK(layout.ways == 1 || (way_stats != nullptr && way_stats->ways == layout.ways &&
                                      way_stats->chunks == layout.chunks),
                 "pipeline memory: ", layout.ways, " ways x ", layout.chunks,
                 " chunks need the mirror lists of those chunks (WayStats)");
    const StageLayout stages = pipeline_stage_layout(graph, layout.stages, whole);
    const auto rows = static_cast<index_t>(whole.vertices);
    const RankStats& all = whole.ranks.at(0);
    const ShapeOperator aggregation(rows, 0, 0);
    const std::size_t params = ModelParameters::count(graph);
    PlanOptions eval_options;
    eval_options.rows = rows;
    eval_options.graph = &aggregation;
    eval_options.training = false;
    const std::size_t eval_floats = plan_execution(graph, eval_options).arena_floats();
    const int slices = layout.feature_slices;
    std::vector<index_t> input_cols;
    for (const TensorId t : graph.inputs()) {
        input_cols.push_back(graph.tensor(t).cols);
    }
    const index_t chunk_rows =
        largest_chunk > 0 ? largest_chunk
        : way_stats != nullptr && layout.ways > 1
            ? way_stats->largest_chunk
            : static_cast<index_t>(std::min<double>(
                  static_cast<double>(rows),
                  std::ceil(chunk_balance * static_cast<double>(rows) / layout.chunks)));
    // S x F: the chunks' rows, the run's or even blocks (then the chunk arena sized for a share
    // of chunk_rows rows, as F = 1's).
    std::vector<index_t> chunks;
    if (slices > 1) {
        chunks = !run_chunks.empty() ? std::vector<index_t>(run_chunks.begin(), run_chunks.end())
                                     : even_chunk_rows(whole.vertices, layout.chunks);
    }
    const bool exact = !run_chunks.empty();
    // The largest rank's plan with the chunk arena sized for the largest chunk, or for a way's
    // rows (`whole_way`: the accuracy guard's check step at one chunk per way; storage as
    // before: it is sized for the rank's rows, the same at any chunk count).
    const auto largest_plan = [&](bool whole_way) {
        std::pair<std::int64_t, std::vector<MemoryLine>> best{0, {}};
        for (int rank = 0; rank < layout.stages * layout.ways * slices; ++rank) {
            const int s = rank / (layout.ways * slices);
            StageMemory memory{.stage = s,
                               .mirror_bytes = 0,
                               .parameters = params,
                               .evaluation_floats = rank == 0 ? eval_floats : 0,
                               .evaluates = rank == 0};
            std::int64_t history = 0;  // the guard's copy of the stage's history
            if (slices == 1) {
                const StageStorage storage =
                    plan_stage_storage(graph, stages, s, rows, layout.recompute);
                memory.kept_floats = storage.kept_floats;
                memory.kept_grad_floats = storage.kept_grad_floats;
                // The check step's one chunk per way: the way's rows (all of them: one way).
                const index_t largest = !whole_way        ? chunk_rows
                                        : layout.ways > 1 ? way_stats->largest_way
                                                          : rows;
                memory.scratch_floats =
                    storage.scratch_per_row * static_cast<std::size_t>(largest) +
                    stage_workspace_floats(graph, storage, largest, aggregation);
                // --snapshot-period's default (23 > 0): the snapshot buffer exists.
                memory.snapshot_floats = storage.snapshot_floats;
                if (layout.ways > 1) {
                    memory.mirror_bytes = mirror_buffer_bytes(graph, storage, *way_stats);
                }
                history = history_copy_bytes(graph, storage, rows);
            } else {  // rank (s, f): its share of every chunk, the slices' mirrors, its data rows
                const SlicedShapeOperator sliced({chunks.begin(), chunks.end()}, slices,
                                                 rank % slices);
                // The check step's one chunk per way: the largest way's share (W = 1: all).
                index_t way_rows = 0;
                const std::size_t per_way = chunks.size() / static_cast<std::size_t>(layout.ways);
                for (std::size_t w = 0; w < chunks.size(); w += per_way) {
                    way_rows =
                        std::max(way_rows, SlicedStageAggregation::share_rows(
                                               std::span<const index_t>(chunks).subspan(w, per_way),
                                               slices, rank % slices));
                }
                const index_t largest = whole_way ? way_rows
                                        : exact   ? sliced.largest_share()
                                                  : std::max(sliced.largest_share(),
                                                             longest_grid_rows(chunk_rows, slices));
                const StageStorage storage =
                    plan_stage_storage(graph, stages, s, sliced.num_rows(), layout.recompute, true);
                memory.kept_floats = storage.kept_floats;
                memory.kept_grad_floats = storage.kept_grad_floats;
                memory.scratch_floats = (storage.scratch_per_row + storage.chunk_per_row) *
                                            static_cast<std::size_t>(largest) +
                                        stage_workspace_floats(graph, storage, largest, sliced);
                memory.snapshot_floats = storage.snapshot_floats;
                // The snapshot period's default (23 > 0): the stage keeps a snapshot when it
                // has aggregation inputs (StageBuffers::has_snapshot).
                memory.slice_mirror_floats = slice_mirror_floats(
                    graph, storage, !storage.snapshot.empty(), rows, slices, rank % slices);
                memory.share_bytes = slice_share_bytes(sliced.num_rows(), input_cols);
                if (layout.ways > 1) {
                    memory.mirror_bytes =
                        mirror_buffer_bytes(graph, storage, *way_stats, slices, rank % slices);
                }
                history = history_copy_bytes(graph, storage, sliced.num_rows());
            }
            std::vector<MemoryLine> lines = run_memory_lines(
                {{"inputs (graph blocks, features, labels, masks)", all.input_bytes}},
                stage_memory_lines(memory), params);
            std::int64_t total = total_bytes(lines);
            if (whole_way) {
                total += history;
            }
            if (total > best.first) {
                best = {total, std::move(lines)};
            }
        }
        return best;
    };
    std::tie(out.planned_bytes, out.lines) = largest_plan(false);
    // The accuracy guard's check step runs at one chunk per way (nothing stale: the executor's
    // staleness_losses) and grows the chunk arena to a way's rows for the rest of the run.
    if (guard && layout.chunks > layout.ways) {
        out.guard_bytes = std::max<std::int64_t>(0, largest_plan(true).first - out.planned_bytes);
    }
    const auto baseline = static_cast<std::int64_t>(machine.baseline_rss_bytes);
    out.load_peak_bytes = whole_graph_input ? baseline + whole.load_bytes + all.input_bytes : 0;
    out.peak_bytes = std::max({baseline + out.planned_bytes + out.guard_bytes,
                               baseline + 2 * all.input_bytes, out.load_peak_bytes});
    return out;
}

}  // namespace strata::planner
