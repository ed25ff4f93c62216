// make_plan: candidates priced and checked against the memory limit.
#include "planner/layout_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "layers/grid_aggregation.hpp"
#include "layers/sparse_features.hpp"
#include "layers/sparse_input_graph.hpp"
#include "planner/cagnet_model.hpp"
#include "planner/grid_model.hpp"
#include "planner/machine_file.hpp"
#include "planner/partition_stats.hpp"
#include "planner/pipeline_model.hpp"
#include "planner/plexus_model.hpp"
#include "src/base/error.hpp"
#include "src/base/timer.hpp"

#include <unistd.h>

namespace strata::planner {
namespace {

using nlohmann::json;

double physical_memory_bytes() {
    return static_cast<double>(sysconf(_SC_PHYS_PAGES)) *
           static_cast<double>(sysconf(_SC_PAGESIZE));
}

std::string mb(double bytes) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.1f", bytes / 1e6);
    return text;
}

json terms_json(const EpochTerms& t) {
    return {{"gemm_s", t.gemm_s},
            {"spmm_s", t.spmm_s},
            {"elementwise_s", t.elementwise_s},
            {"steps_s", t.steps_s},
            {"optimizer_s", t.optimizer_s},
            {"exchange_s", t.exchange_s},
            {"exposed_exchange_s", t.exposed_s},
            {"allreduce_s", t.allreduce_s}};
}

std::string grid_name(int a, int b) {
    return std::to_string(a) + "x" + std::to_string(b);
}

/// What the comparisons on paper need of make_plan beyond the plan itself.
struct PaperInputs {
    const ModelGraph* graph = nullptr;  ///< graph parallelism's model (the 1D candidates')
    const MachineModel* machine = nullptr;
    bool whole = true;
    FeatureStorage features = FeatureStorage::dense;
    HaloPrecision precision = HaloPrecision::fp32;
    std::function<PartitionStats(int)> stats_at;  ///< make_plan's: measured or extrapolated
    bool plexus = false;
    bool cagnet = false;
};

/// Bytes one halo row costs per evaluated epoch (u of cagnet_model.hpp): rank 0's training and
/// evaluation schedules priced for one row each way.
double halo_row_bytes(const ModelGraph& graph, const PartitionStats& stats,
                      HaloPrecision precision) {
    const ExecutionPlan plan = rank_plan(graph, stats.ranks.front(), Recompute::none);
    const RankStats unit{.send_rows = 1, .recv_rows = 1};
    return static_cast<double>(schedule_halo_bytes(graph, plan.training(), unit, precision).sent +
                               schedule_halo_bytes(graph, plan.evaluation(), unit, precision).sent);
}

/// The layouts of a CAGNET comparison and their bytes per rank: 1D, the grid, 1.5D, 2D (those
/// the rank count has).
std::vector<std::pair<std::string, double>> paper_layouts(const PaperComparison& r) {
    std::vector<std::pair<std::string, double>> layouts{{"1D", r.oned_bytes}};
    if (!r.grid.empty()) {
        layouts.emplace_back("grid " + r.grid, r.grid_bytes);
    }
    if (r.replication > 0) {
        layouts.emplace_back("1.5D c=" + std::to_string(r.replication), r.one_and_half_d_bytes);
    }
    if (!r.two_d.empty()) {
        layouts.emplace_back("2D " + r.two_d, r.two_d_bytes);
    }
    return layouts;
}

/// CAGNET's 1.5D and 2D for `row` (cagnet_model.hpp), and the verdict.
void add_cagnet(PaperComparison& row, const PaperInputs& in) {
    const int p = row.ranks;
    const PartitionStats stats = in.stats_at(p);
    const auto vertices = static_cast<double>(stats.vertices);
    const double u = halo_row_bytes(*in.graph, stats, in.precision);
    const auto memory = [&](const PartitionStats& s) {
        return static_cast<double>(predict_graph_memory(*in.graph, Recompute::none, s, *in.machine,
                                                        in.whole, in.features, in.precision)
                                       .planned_bytes);
    };
    row.h = halo_factor(stats);
    row.extrapolated = stats.extrapolated;
    row.error_band = stats.error_band;
    const PaperLayout one_half =
        best_one_and_half_d(p, vertices, u, [&](int k) { return halo_factor(in.stats_at(k)); });
    if (one_half.a > 0) {
        const PartitionStats team = in.stats_at(p / one_half.a);
        row.replication = one_half.a;
        row.team_h = halo_factor(team);
        row.one_and_half_d_bytes = one_half.bytes;
        row.one_and_half_d_memory_bytes = memory(team_stats(team, one_half.a));
        row.extrapolated = row.extrapolated || team.extrapolated;
        row.error_band = std::max(row.error_band, team.error_band);
    }
    const PaperLayout two = best_stationary_2d(p, vertices, u);
    if (two.a > 0) {
        row.two_d = grid_name(two.a, two.b);
        row.two_d_bytes = two.bytes;
        row.two_d_memory_bytes = memory(stationary_2d_stats(stats, two.a, two.b));
    }
    // The verdict: the fewest bytes, ties to the simpler layout (listed first).
    const auto layouts = paper_layouts(row);
    row.fewest = std::min_element(layouts.begin(), layouts.end(), [](const auto& a, const auto& b) {
                     return a.second < b.second;
                 })->first;
}

/// Per rank count: Strata's 1D (recompute none) and its grid with the fewest bytes, from the
/// plan's own candidates, beside Plexus's model for a GCN of the plan's widths and/or CAGNET's
/// 1.5D and 2D.
std::vector<PaperComparison> compare_on_paper(const Plan& plan, const PartitionStats& one,
                                              const ModelSpec& spec, const PaperInputs& in) {
    std::vector<double> widths{static_cast<double>(one.features)};
    for (int l = 1; l < spec.layers; ++l) {
        widths.push_back(spec.hidden);
    }
    widths.push_back(static_cast<double>(one.classes));
    double parameters = 0.0;
    for (std::size_t l = 1; l < widths.size(); ++l) {
        parameters += widths[l - 1] * widths[l] + widths[l];
    }
    const auto vertices = static_cast<double>(one.vertices);
    const double entries = static_cast<double>(one.nnz) + vertices;  // Â's self loops
    std::vector<PaperComparison> rows;
    for (const Candidate& c : plan.candidates) {
        if (c.parallel != "graph" || c.recompute != "none") {
            continue;
        }
        const double k = c.ranks;
        if (rows.empty() || rows.back().ranks != c.ranks) {
            PaperComparison row;
            row.ranks = c.ranks;
            if (in.plexus) {
                const PlexusGrid p =
                    plexus_best_grid(vertices, entries, widths, parameters, c.ranks);
                row.plexus_grid = grid_name(p.x, p.y) + "x" + std::to_string(p.z);
                row.plexus_ranks = p.x * p.y * p.z;
                row.plexus_bytes = 4.0 * p.words;
                row.plexus_memory_bytes = p.memory_bytes;
            }
            rows.push_back(row);
        }
        PaperComparison& row = rows.back();
        const double bytes = static_cast<double>(c.time.halo_bytes + c.a2a_bytes) / k;
        if (c.feature_slices == 1) {
            row.oned_bytes = bytes;
            row.oned_memory_bytes = static_cast<double>(c.memory.planned_bytes);
        } else if (row.grid.empty() || bytes < row.grid_bytes) {
            row.grid = grid_name(c.ranks / c.feature_slices, c.feature_slices);
            row.grid_bytes = bytes;
            row.grid_memory_bytes = static_cast<double>(c.memory.planned_bytes);
        }
    }
    if (in.cagnet) {
        for (PaperComparison& row : rows) {
            add_cagnet(row, in);
        }
    }
    return rows;
}

}  // namespace

Plan make_plan(const PlanRequest& request) {
    const Stopwatch watch;
    STRATA_CHECK(!request.ranks.empty(), "--ranks: empty rank list (give e.g. --ranks 1,2,4)");
    for (int k : request.ranks) {
        STRATA_CHECK(k >= 1, "--ranks: every rank count must be at least 1, got ", k);
    }
    std::vector<int> ranks = request.ranks;
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());

    Plan plan;
    plan.data = request.data;
    plan.model = describe(request.spec);
    plan.machine_host = request.machine.host;
    PartitionStatsCache cache(request.data, request.cache_dir, request.seed);
    // Build the model once with the graph's widths (from the K = 1 statistics).
    const Normalization normalization = build_model(request.spec, 1, 2).graph.normalization();
    const PartitionStats one = cache.get(1, normalization);
    BuiltModel built = build_model(request.spec, static_cast<index_t>(one.features),
                                   static_cast<index_t>(one.classes));
    // Graph parallelism reads the features sparse where strata train's --sparse-features auto
    // would (the layer pipeline reads them dense).
    BuiltModel graph_model = build_model(request.spec, static_cast<index_t>(one.features),
                                         static_cast<index_t>(one.classes));
    const double density = feature_density(one);
    const bool sparse =
        density <= sparse_features_threshold && sparse_input_blocker(graph_model.graph).empty();
    if (sparse) {
        graph_model.graph = with_sparse_input(graph_model.graph);
        char note[160];
        std::snprintf(note, sizeof(note),
                      "graph parallelism: features %.2f %% non-zero, read sparse (as strata train "
                      "--sparse-features auto)",
                      100.0 * density);
        plan.notes.emplace_back(note);
    }
    const bool whole = !std::filesystem::is_directory(request.data);
    if (request.halo_precision != HaloPrecision::fp32) {
        plan.notes.push_back(std::string("graph parallelism priced with ") +
                             to_string(request.halo_precision) + " halos and the pipeline with " +
                             to_string(request.halo_precision) +
                             " stage transfers (--halo-precision; lossy, watched by the precision "
                             "guard)");
    }

    // The machine with every figure moved by its spread the slow way: each candidate's error
    // band grows by the epoch predicted with it over the epoch predicted (0 without spreads).
    const MachineModel slowed = slowed_by_spread(request.machine);
    const auto spread_band = [](const EpochPrediction& slow, const EpochPrediction& time) {
        return time.epoch_s > 0.0 ? std::max(0.0, slow.epoch_s / time.epoch_s - 1.0) : 0.0;
    };
    // Statistics of K parts: measured (cached) up to --max-partition-parts, else extrapolated
    // from the measured ones below K (noted once).
    std::map<int, PartitionStats> measured{{1, one}};
    std::map<int, PartitionStats> extrapolated;
    const auto stats_at = [&](int k) -> PartitionStats {
        if (const auto found = measured.find(k); found != measured.end()) {
            return found->second;
        }
        if (const auto found = extrapolated.find(k); found != extrapolated.end()) {
            return found->second;
        }
        if (k <= request.max_partition_parts && k <= one.vertices) {
            return measured[k] = cache.get(k, normalization);
        }
        std::vector<PartitionStats> below;
        for (const auto& [parts, m] : measured) {
            if (parts < k) {
                below.push_back(m);
            }
        }
        PartitionStats stats = extrapolate_partition(below, k);
        plan.notes.push_back(
            "K = " + std::to_string(k) + ": not partitioned here (above " +
            "--max-partition-parts " + std::to_string(request.max_partition_parts) +
            "); halo figures extrapolated from K = " + std::to_string(below.back().parts) +
            ", error band ±" + std::to_string(static_cast<int>(100 * stats.error_band)) + " %");
        return extrapolated[k] = stats;
    };
    const std::string grid_blocked = grid_blocker(built.graph, 2);
    if (!grid_blocked.empty() &&
        std::any_of(ranks.begin(), ranks.end(), [](int k) { return k > 1; })) {
        plan.notes.push_back("feature grid not planned: " + grid_blocked);
    }
    for (int k : ranks) {
        const PartitionStats stats = stats_at(k);
        const int per_node = request.ranks_per_node > 0 ? std::min(request.ranks_per_node, k) : k;
        const bool across = request.ranks_per_node > 0 && k > request.ranks_per_node;
        // Across nodes a rank's peers spread evenly over the other K - 1 ranks: K - per_node of
        // them on other nodes (one: the link as one flow a rank uses it, MachineModel::link).
        RunShape shape{
            .machine = &request.machine,
            .network = across ? request.machine.link(k - per_node) : request.machine.shared_memory,
            .threads = request.threads > 0 ? request.threads
                                           : std::max(1, request.machine.cores / per_node),
            .ranks_per_node = per_node};
        if (across) {
            shape.cross_share = static_cast<double>(k - per_node) / (k - 1);
            shape.link_ranks = per_node;
        }
        RunShape slow_shape = shape;
        slow_shape.machine = &slowed;
        slow_shape.network = across ? slowed.link(k - per_node) : slowed.shared_memory;
        const double limit = request.memory_per_rank_bytes > 0 ? request.memory_per_rank_bytes
                                                               : physical_memory_bytes() / per_node;
        plan.memory_per_rank_bytes = limit;
        for (const Recompute mode : {Recompute::none, Recompute::aggregation, Recompute::all}) {
            Candidate c;
            c.ranks = k;
            c.recompute = to_string(mode);
            c.threads = shape.threads;
            RunShape graph_shape = shape;
            graph_shape.halo_precision = request.halo_precision;
            c.time = predict_graph_epoch(graph_model.graph, mode, stats, graph_shape);
            c.memory = predict_graph_memory(graph_model.graph, mode, stats, request.machine, whole,
                                            sparse ? FeatureStorage::sparse : FeatureStorage::dense,
                                            request.halo_precision);
            c.fits = static_cast<double>(c.memory.peak_bytes) <= limit;
            c.extrapolated = stats.extrapolated;
            RunShape slow_graph_shape = slow_shape;
            slow_graph_shape.halo_precision = request.halo_precision;
            c.error_band =
                stats.error_band +
                spread_band(predict_graph_epoch(graph_model.graph, mode, stats, slow_graph_shape),
                            c.time);
            plan.candidates.push_back(std::move(c));
        }
        // The G x F grids: the feature group on F consecutive ranks (inside a node when the
        // ranks per node are a multiple of F), the graph group across them.
        for (int f = 2; f <= k && grid_blocked.empty(); ++f) {
            if (k % f != 0 || !grid_blocker(built.graph, f).empty()) {
                continue;
            }
            const PartitionStats parts = stats_at(k / f);
            const bool feature_inside = request.ranks_per_node == 0 || per_node % f == 0;
            const Network feature_network =
                feature_group_network(request.machine, feature_inside, f, per_node);
            for (const Recompute mode : {Recompute::none, Recompute::aggregation, Recompute::all}) {
                Candidate c;
                c.ranks = k;
                c.feature_slices = f;
                c.recompute = to_string(mode);
                c.threads = shape.threads;
                RunShape grid_shape = shape;
                grid_shape.halo_precision = request.halo_precision;
                RunShape slow_grid_shape = slow_shape;
                slow_grid_shape.halo_precision = request.halo_precision;
                if (across && feature_inside) {  // a node holds per_node / f of the G parts
                    const int groups = k / f;
                    const int parts_per_node = per_node / f;
                    const int partners_across = std::max(0, groups - parts_per_node);
                    grid_shape.cross_share =
                        groups > 1 ? static_cast<double>(partners_across) / (groups - 1) : 0.0;
                    grid_shape.network = request.machine.link(partners_across);
                    slow_grid_shape.network = slowed.link(partners_across);
                }
                slow_grid_shape.cross_share = grid_shape.cross_share;
                const Network slow_feature_network =
                    feature_group_network(slowed, feature_inside, f, per_node);
                // The asked column blocks; a grid that does not fit tries 2x as many (up to 8)
                // while that still shrinks it.
                bool priced = false;
                std::int64_t planned = 0;
                for (int b = std::max(1, request.column_blocks);
                     b <= std::max(8, request.column_blocks); b *= 2) {
                    if (priced && c.fits) {
                        break;
                    }
                    const MemoryPrediction memory =
                        predict_grid_memory(built.graph, mode, parts, f, request.machine, whole, b);
                    if (priced && memory.planned_bytes >= planned) {
                        break;  // no aggregation is wide enough for more blocks
                    }
                    planned = memory.planned_bytes;
                    const GridPrediction p = predict_grid_epoch(built.graph, mode, parts, f,
                                                                grid_shape, feature_network, b);
                    priced = true;
                    c.column_blocks = b;
                    c.time = p.time;
                    c.a2a_bytes = p.a2a_bytes;
                    c.recompute_a2a_bytes = p.recompute_a2a_bytes;
                    c.memory = memory;
                    c.fits = static_cast<double>(c.memory.peak_bytes) <= limit;
                    c.extrapolated = parts.extrapolated;
                    c.error_band =
                        parts.error_band +
                        spread_band(predict_grid_epoch(built.graph, mode, parts, f, slow_grid_shape,
                                                       slow_feature_network, b)
                                        .time,
                                    c.time);
                }
                plan.candidates.push_back(std::move(c));
            }
        }
        for (const PipelineLayout& layout : pipeline_layouts(built.graph, k, one.vertices)) {
            Candidate c;
            c.parallel = "pipeline";
            c.ranks = k;
            c.stages = layout.stages;
            c.ways = layout.ways;
            c.chunks = layout.chunks;
            c.feature_slices = layout.feature_slices;
            c.recompute = to_string(layout.recompute);
            c.threads = shape.threads;
            RunShape pipe_shape = shape;  // stage transfers at the run's precision
            pipe_shape.halo_precision = request.halo_precision;
            RunShape slow_pipe_shape = slow_shape;
            slow_pipe_shape.halo_precision = request.halo_precision;
            // Each cut, the ways' mirrors and the feature group's switches on the network their
            // ranks' placement gives them (inside a node or across; pipeline_networks); the
            // gradient all-reduce over every rank on shape.network.
            const int node_ranks = across ? per_node : 0;
            const PipelineNetworks networks =
                pipeline_networks(request.machine, layout, node_ranks);
            const PipelineNetworks slow_networks = pipeline_networks(slowed, layout, node_ranks);
            // W > 1: the mirror lists of the real graph's chunks (as strata train makes them).
            std::optional<WayStats> way_stats;
            if (layout.ways > 1) {
                way_stats = cache.way_stats(layout.chunks, layout.ways);
            }
            const WayStats* ways = way_stats ? &*way_stats : nullptr;
            const PipelinePrediction p =
                predict_pipeline_epoch(built.graph, one, layout, pipe_shape, {}, &networks, ways);
            c.time = p.time;
            c.error_band =
                spread_band(predict_pipeline_epoch(built.graph, one, layout, slow_pipe_shape, {},
                                                   &slow_networks, ways)
                                .time,
                            c.time);
            c.stage_bytes = p.stage_bytes;
            c.way_bytes = p.way_bytes;
            c.a2a_bytes = p.a2a_bytes;
            c.recompute_a2a_bytes = p.recompute_a2a_bytes;
            c.bubble = p.bubble;
            c.split = p.split;
            c.memory = predict_pipeline_memory(built.graph, one, layout, request.machine, whole, 0,
                                               {}, true, ways);
            c.fits = static_cast<double>(c.memory.peak_bytes) <= limit;
            plan.candidates.push_back(std::move(c));
        }
    }
    // The recommendation per rank count: the fastest that fits.
    bool any = false;
    for (int k : ranks) {
        Candidate* best = nullptr;
        for (Candidate& c : plan.candidates) {
            if (c.ranks == k && c.fits &&
                (best == nullptr || c.time.epoch_s < best->time.epoch_s)) {
                best = &c;
            }
        }
        if (best != nullptr) {
            best->recommended = true;
            any = true;
        }
    }
    if (!any) {
        std::int64_t least = INT64_MAX;
        for (const Candidate& c : plan.candidates) {
            least = std::min(least, c.memory.peak_bytes);
        }
        STRATA_FAIL("--memory-per-rank ", mb(plan.memory_per_rank_bytes),
                    " MB: no candidate fits (the smallest needs ", mb(static_cast<double>(least)),
                    " MB per rank; allow more memory or more ranks)");
    }
    if (request.machine.host.find("not calibrated") != std::string::npos) {
        plan.notes.push_back("machine model: " + MachineFile{}.describe());
    }
    if (request.ranks_per_node > 0 && std::any_of(ranks.begin(), ranks.end(), [&](int k) {
            return k > request.ranks_per_node;
        })) {
        const Network& link = request.machine.inter_node;
        const Network& paired = request.machine.inter_node_paired;
        char text[480];
        std::snprintf(text, sizeof(text),
                      "across nodes: a node's link %.1f MB/s each way, latency %.0f us, %s",
                      1e3 * link.bandwidth_gbs, 1e6 * link.latency_s,
                      request.machine.inter_node_measured
                          ? "measured by strata calibrate (every rank of one node with every rank "
                            "of another at once)"
                          : "given by hand or the default, not measured (strata calibrate under "
                            "mpirun across nodes measures it)");
        plan.notes.emplace_back(text);
        if (paired.bandwidth_gbs != link.bandwidth_gbs || paired.latency_s != link.latency_s) {
            std::snprintf(text, sizeof(text),
                          "across nodes with one partner a rank (a grid's graph group over two "
                          "nodes, or one rank a node): %.1f MB/s each way, latency %.0f us "
                          "(measured with the ranks of two nodes paired one to one)",
                          1e3 * paired.bandwidth_gbs, 1e6 * paired.latency_s);
            plan.notes.emplace_back(text);
        }
    }
    if (std::any_of(plan.candidates.begin(), plan.candidates.end(),
                    [](const Candidate& c) { return c.parallel == "pipeline"; })) {
        plan.notes.push_back(
            "pipeline rows are stale (chunks read last epoch's rows of unprocessed chunks): "
            "accuracy may differ from graph parallelism, and the accuracy guard may halve the "
            "chunks (more bubble) or fall back to exact; not priced. The guard's check step "
            "runs at one chunk per way: its larger chunk arena and the copy of the history it "
            "holds are in peak_MB (strata train --guard off runs without them)");
        plan.notes.push_back(
            "pipeline: W > 1 ways are priced with the mirror exchange of this graph's chunks "
            "(the average chunk's rows, blocking); S x F is planned with one way; the per-chunk "
            "history bookkeeping is not priced");
    }
    if (request.compare_plexus || request.compare_cagnet) {
        const PaperInputs in{.graph = &graph_model.graph,
                             .machine = &request.machine,
                             .whole = whole,
                             .features = sparse ? FeatureStorage::sparse : FeatureStorage::dense,
                             .precision = request.halo_precision,
                             .stats_at = stats_at,
                             .plexus = request.compare_plexus,
                             .cagnet = request.compare_cagnet};
        plan.paper = compare_on_paper(plan, one, request.spec, in);
    }
    plan.planning_s = watch.seconds();
    return plan;
}

std::string plan_to_json(const Plan& plan) {
    json candidates = json::array();
    for (const Candidate& c : plan.candidates) {
        candidates.push_back({{"parallel", c.parallel},
                              {"ranks", c.ranks},
                              {"recompute", c.recompute},
                              {"stages", c.stages},
                              {"ways", c.ways},
                              {"chunks", c.chunks},
                              {"stage_bytes", c.stage_bytes},
                              {"way_bytes", c.way_bytes},
                              {"bubble", c.bubble},
                              {"split", c.split},
                              {"feature_slices", c.feature_slices},
                              {"column_blocks", c.column_blocks},
                              {"a2a_bytes", c.a2a_bytes},
                              {"recompute_a2a_bytes", c.recompute_a2a_bytes},
                              {"threads", c.threads},
                              {"epoch_s", c.time.epoch_s},
                              {"compute_s", c.time.compute_s},
                              {"wait_s", c.time.wait_s},
                              {"eval_s", c.time.eval_s},
                              {"terms", terms_json(c.time.terms)},
                              {"train_terms", terms_json(c.time.train_terms)},
                              {"halo_bytes", c.time.halo_bytes},
                              {"recompute_halo_bytes", c.time.recompute_halo_bytes},
                              {"allreduce_bytes", c.time.allreduce_bytes},
                              {"planned_bytes", c.memory.planned_bytes},
                              {"load_peak_bytes", c.memory.load_peak_bytes},
                              {"peak_bytes", c.memory.peak_bytes},
                              {"fits", c.fits},
                              {"extrapolated", c.extrapolated},
                              {"error_band", c.error_band},
                              {"recommended", c.recommended}});
    }
    const json j = {{"format", "strata-plan"},
                    {"version", Plan::format_version},
                    {"data", plan.data},
                    {"model", plan.model},
                    {"machine", plan.machine_host},
                    {"memory_per_rank_bytes", plan.memory_per_rank_bytes},
                    {"planning_s", plan.planning_s},
                    {"candidates", candidates},
                    {"notes", plan.notes}};
    json out = j;
    const bool plexus = !plan.paper.empty() && !plan.paper.front().plexus_grid.empty();
    const bool cagnet = !plan.paper.empty() && !plan.paper.front().fewest.empty();
    if (plexus) {
        json paper = json::array();
        for (const PaperComparison& r : plan.paper) {
            paper.push_back({{"ranks", r.ranks},
                             {"plexus_grid", r.plexus_grid},
                             {"plexus_ranks", r.plexus_ranks},
                             {"plexus_bytes_per_rank", r.plexus_bytes},
                             {"plexus_memory_bytes", r.plexus_memory_bytes},
                             {"oned_bytes_per_rank", r.oned_bytes},
                             {"oned_planned_bytes", r.oned_memory_bytes},
                             {"grid", r.grid},
                             {"grid_bytes_per_rank", r.grid_bytes},
                             {"grid_planned_bytes", r.grid_memory_bytes}});
        }
        out["on_paper_plexus"] = paper;
    }
    if (cagnet) {
        json paper = json::array();
        for (const PaperComparison& r : plan.paper) {
            paper.push_back({{"ranks", r.ranks},
                             {"h", r.h},
                             {"oned_bytes_per_rank", r.oned_bytes},
                             {"oned_planned_bytes", r.oned_memory_bytes},
                             {"grid", r.grid},
                             {"grid_bytes_per_rank", r.grid_bytes},
                             {"grid_planned_bytes", r.grid_memory_bytes},
                             {"replication", r.replication},
                             {"team_h", r.team_h},
                             {"one_and_half_d_bytes_per_rank", r.one_and_half_d_bytes},
                             {"one_and_half_d_planned_bytes", r.one_and_half_d_memory_bytes},
                             {"two_d", r.two_d},
                             {"two_d_bytes_per_rank", r.two_d_bytes},
                             {"two_d_planned_bytes", r.two_d_memory_bytes},
                             {"extrapolated", r.extrapolated},
                             {"error_band", r.error_band},
                             {"fewest", r.fewest}});
        }
        out["on_paper_cagnet"] = paper;
    }
    return out.dump(2) + "\n";
}

namespace {

/// The verdict's figures: the fewest bytes per rank, and each other layout's bytes over them.
std::string verdict_ratios(const PaperComparison& r) {
    const auto layouts = paper_layouts(r);
    double least = 0.0;
    for (const auto& [name, bytes] : layouts) {
        if (name == r.fewest) {
            least = bytes;
        }
    }
    char text[64];
    std::snprintf(text, sizeof(text), " (%.4g MB per rank", least / 1e6);
    std::string out = text;
    for (const auto& [name, bytes] : layouts) {
        if (name != r.fewest) {
            std::snprintf(text, sizeof(text), "; %s x%.3g", name.c_str(),
                          least > 0.0 ? bytes / least : 0.0);
            out += text;
        }
    }
    return out + ")";
}

}  // namespace

std::string format_plan(const Plan& plan) {
    std::string out = "plan: " + plan.data + ", " + plan.model + ", machine " + plan.machine_host +
                      ", memory limit " + mb(plan.memory_per_rank_bytes) + " MB per rank\n";
    char line[256];
    std::snprintf(line, sizeof(line),
                  "%-8s %5s %-19s %3s %10s %6s %10s %9s %9s %12s %10s %10s %4s\n", "parallel",
                  "ranks", "layout", "thr", "epoch_ms", "band_%", "compute_ms", "wait_ms",
                  "eval_ms", "bytes_MB/ep", "plan_MB", "peak_MB", "fits");
    out += line;
    for (const Candidate& c : plan.candidates) {
        // Graph parallelism: the --recompute mode and halo bytes; the pipeline: S x W x C and
        // stage bytes (S x F: "S x W x C F=F", stage and all-to-all bytes together).
        // The grid: G x F and the recompute mode, halo and all-to-all bytes together.
        const bool pipeline = c.parallel == "pipeline";
        const bool sliced = c.feature_slices > 1;
        const bool grid = sliced && !pipeline;
        const std::string layout =
            pipeline ? std::to_string(c.stages) + "x" + std::to_string(c.ways) + "x" +
                           std::to_string(c.chunks) +
                           (sliced ? " F=" + std::to_string(c.feature_slices) : "")
            : grid ? std::to_string(c.ranks / c.feature_slices) + "x" +
                         std::to_string(c.feature_slices) +
                         (c.column_blocks > 1 ? " B=" + std::to_string(c.column_blocks) : "") +
                         " " + c.recompute
                   : c.recompute;
        const std::int64_t bytes = (pipeline ? c.stage_bytes + c.way_bytes : c.time.halo_bytes) +
                                   (sliced ? c.a2a_bytes : 0);
        std::snprintf(
            line, sizeof(line),
            "%-8s %5d %-19s %3d %10.2f %6.0f %10.2f %9.2f %9.2f %12.3f %10.1f %10.1f %4s%s%s\n",
            c.parallel.c_str(), c.ranks, layout.c_str(), c.threads, 1e3 * c.time.epoch_s,
            100.0 * c.error_band, 1e3 * c.time.compute_s, 1e3 * c.time.wait_s, 1e3 * c.time.eval_s,
            static_cast<double>(bytes) / 1e6, static_cast<double>(c.memory.planned_bytes) / 1e6,
            static_cast<double>(c.memory.peak_bytes) / 1e6, c.fits ? "yes" : "no",
            c.extrapolated ? "  (extrapolated)" : "", c.recommended ? "  <- recommended" : "");
        out += line;
        if (pipeline) {
            std::snprintf(line, sizeof(line), "%9sbubble %.0f %%, ", "", 100.0 * c.bubble);
            out += line + c.split + "\n";
            if (c.ways > 1) {
                std::snprintf(line, sizeof(line), "%9sstages %.3f MB + mirrors %.3f MB per epoch\n",
                              "", static_cast<double>(c.stage_bytes) / 1e6,
                              static_cast<double>(c.way_bytes) / 1e6);
                out += line;
            }
            if (sliced) {
                std::snprintf(line, sizeof(line),
                              "%9sstages %.3f MB + all-to-all %.3f MB per epoch\n", "",
                              static_cast<double>(c.stage_bytes) / 1e6,
                              static_cast<double>(c.a2a_bytes) / 1e6);
                out += line;
            }
        }
        if (grid) {
            std::snprintf(line, sizeof(line), "%9shalo %.3f MB + all-to-all %.3f MB per epoch\n",
                          "", static_cast<double>(c.time.halo_bytes) / 1e6,
                          static_cast<double>(c.a2a_bytes) / 1e6);
            out += line;
        }
    }
    const bool plexus = !plan.paper.empty() && !plan.paper.front().plexus_grid.empty();
    const bool cagnet = !plan.paper.empty() && !plan.paper.front().fewest.empty();
    if (plexus) {
        out +=
            "on paper (Plexus's published model for a GCN of these widths, not measured; "
            "Plexus: received per rank per training step; Strata: this plan's halo + "
            "all-to-all bytes per rank per evaluated epoch, and its memory plan):\n";
        std::snprintf(line, sizeof(line), "%6s %-10s %11s %12s %11s %12s %-7s %11s %12s\n", "ranks",
                      "plexus", "plexus_MB", "plexus_memMB", "1D_MB", "1D_memMB", "grid", "grid_MB",
                      "grid_memMB");
        out += line;
        for (const PaperComparison& r : plan.paper) {
            std::snprintf(line, sizeof(line),
                          "%6d %-10s %11.3f %12.3f %11.3f %12.3f %-7s %11.3f %12.3f%s\n", r.ranks,
                          r.plexus_grid.c_str(), r.plexus_bytes / 1e6, r.plexus_memory_bytes / 1e6,
                          r.oned_bytes / 1e6, r.oned_memory_bytes / 1e6,
                          r.grid.empty() ? "-" : r.grid.c_str(), r.grid_bytes / 1e6,
                          r.grid_memory_bytes / 1e6,
                          r.plexus_ranks != r.ranks ? "  (Plexus at the power of two below)" : "");
            out += line;
        }
    }
    if (cagnet) {
        out +=
            "on paper (CAGNET's 1.5D, sparsity-aware, and stationary 2D priced with this plan's "
            "h(K), not measured or run; bytes per rank per evaluated epoch, as the plan's 1D and "
            "grid; memory plan of the largest rank):\n";
        std::snprintf(line, sizeof(line),
                      "%6s %6s %9s %9s %-7s %9s %9s %4s %6s %9s %9s %-7s %9s %9s\n", "ranks",
                      "h(P)", "1D_MB", "1D_memMB", "grid", "grid_MB", "grid_mem", "c", "h(P/c)",
                      "1.5D_MB", "1.5D_mem", "2D", "2D_MB", "2D_memMB");
        out += line;
        const auto figure = [](bool present, double bytes) {
            char text[32];
            std::snprintf(text, sizeof(text), "%9.3f", bytes / 1e6);
            return present ? std::string(text) : std::string(8, ' ') + "-";
        };
        for (const PaperComparison& r : plan.paper) {
            const bool one_half = r.replication > 0;
            const std::string band =
                r.extrapolated ? "  (extrapolated, ±" +
                                     std::to_string(static_cast<int>(100 * r.error_band)) + " %)"
                               : "";
            std::snprintf(line, sizeof(line),
                          "%6d %6.2f %9.3f %9.3f %-7s %s %s %4d %6.2f %s %s %-7s %s %s%s\n",
                          r.ranks, r.h, r.oned_bytes / 1e6, r.oned_memory_bytes / 1e6,
                          r.grid.empty() ? "-" : r.grid.c_str(),
                          figure(!r.grid.empty(), r.grid_bytes).c_str(),
                          figure(!r.grid.empty(), r.grid_memory_bytes).c_str(), r.replication,
                          r.team_h, figure(one_half, r.one_and_half_d_bytes).c_str(),
                          figure(one_half, r.one_and_half_d_memory_bytes).c_str(),
                          r.two_d.empty() ? "-" : r.two_d.c_str(),
                          figure(!r.two_d.empty(), r.two_d_bytes).c_str(),
                          figure(!r.two_d.empty(), r.two_d_memory_bytes).c_str(), band.c_str());
            out += line;
        }
        for (const PaperComparison& r : plan.paper) {
            out += "verdict " + std::to_string(r.ranks) + " ranks: " + r.fewest +
                   " moves the fewest bytes" + verdict_ratios(r) + "\n";
        }
    }
    for (const std::string& note : plan.notes) {
        out += "note: " + note + "\n";
    }
    std::snprintf(line, sizeof(line), "planned in %.3f s\n", plan.planning_s);
    out += line;
    return out;
}

ChosenLayout chosen_layout(const std::string& json_text, const std::string& what, int ranks) {
    json j;
    try {
        j = json::parse(json_text);
    } catch (const json::exception& e) {
        STRATA_FAIL(what, ": not JSON (", e.what(), ")");
    }
    STRATA_CHECK(j.value("format", std::string()) == "strata-plan", what,
                 ": not a plan (make one with strata plan --json)");
    const int version = j.value("version", 0);
    STRATA_CHECK(version >= 1 && version <= Plan::format_version, what, ": plan version ", version,
                 " is not supported (expected 1 to ", Plan::format_version, ")");
    for (const json& c : j.at("candidates")) {
        if (c.at("ranks").get<int>() == ranks && c.at("recommended").get<bool>()) {
            ChosenLayout chosen{.parallel = c.at("parallel").get<std::string>(),
                                .recompute = c.at("recompute").get<std::string>(),
                                .stages = c.value("stages", 0),
                                .ways = c.value("ways", 0),
                                .chunks = c.value("chunks", 0),
                                .feature_slices = c.value("feature_slices", 1),
                                .column_blocks = c.value("column_blocks", 1)};
            STRATA_CHECK(chosen.parallel == "graph" || chosen.parallel == "pipeline", what,
                         ": candidate for ", ranks, " ranks: parallel '", chosen.parallel,
                         "' is not graph or pipeline");
            STRATA_CHECK(chosen.feature_slices >= 1 && ranks % chosen.feature_slices == 0, what,
                         ": candidate for ", ranks, " ranks: feature_slices ",
                         chosen.feature_slices, " does not divide ", ranks, " ranks");
            STRATA_CHECK(chosen.column_blocks >= 1, what, ": candidate for ", ranks,
                         " ranks: column_blocks ", chosen.column_blocks, " is under 1");
            if (chosen.parallel == "pipeline") {  // S x W x C, with F feature slices each
                STRATA_CHECK(chosen.stages >= 1 && chosen.ways >= 1 &&
                                 chosen.stages * chosen.ways * chosen.feature_slices == ranks &&
                                 chosen.chunks >= 1 && chosen.chunks % chosen.ways == 0,
                             what, ": pipeline candidate for ", ranks, " ranks: stages ",
                             chosen.stages, " x ways ", chosen.ways,
                             chosen.feature_slices > 1
                                 ? " x feature_slices " + std::to_string(chosen.feature_slices)
                                 : std::string(),
                             " with chunks ", chosen.chunks, " does not fit ", ranks, " ranks");
            }
            return chosen;
        }
    }
    STRATA_FAIL(what, ": no recommended layout for ", ranks,
                " ranks (plan again with --ranks including ", ranks, ")");
}

}  // namespace strata::planner
