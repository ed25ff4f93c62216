// make_plan: candidates priced and checked against the memory limit.
#include "planner/layout_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "layers/sparse_features.hpp"
#include "layers/sparse_input_graph.hpp"
#include "planner/machine_file.hpp"
#include "planner/partition_stats.hpp"
#include "planner/pipeline_model.hpp"
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
                             to_string(request.halo_precision) +
                             " halos (--halo-precision; lossy, watched by the precision guard); "
                             "the pipeline with fp32");
    }

    // The machine with every figure moved by its spread the slow way: each candidate's error
    // band grows by the epoch predicted with it over the epoch predicted (0 without spreads).
    const MachineModel slowed = slowed_by_spread(request.machine);
    const auto spread_band = [](const EpochPrediction& slow, const EpochPrediction& time) {
        return time.epoch_s > 0.0 ? std::max(0.0, slow.epoch_s / time.epoch_s - 1.0) : 0.0;
    };
    std::vector<PartitionStats> measured{one};
    for (int k : ranks) {
        PartitionStats stats;
        if (k == 1) {
            stats = one;
        } else if (k <= request.max_partition_parts && k <= one.vertices) {
            stats = cache.get(k, normalization);
            measured.push_back(stats);
            std::sort(
                measured.begin(), measured.end(),
                [](const PartitionStats& a, const PartitionStats& b) { return a.parts < b.parts; });
        } else {
            std::vector<PartitionStats> below;
            for (const PartitionStats& m : measured) {
                if (m.parts < k) {
                    below.push_back(m);
                }
            }
            stats = extrapolate_partition(below, k);
            plan.notes.push_back(
                "K = " + std::to_string(k) + ": not partitioned here (above " +
                "--max-partition-parts " + std::to_string(request.max_partition_parts) +
                "); halo figures extrapolated from K = " + std::to_string(below.back().parts) +
                ", error band ±" + std::to_string(static_cast<int>(100 * stats.error_band)) + " %");
        }
        const int per_node = request.ranks_per_node > 0 ? std::min(request.ranks_per_node, k) : k;
        const bool across = request.ranks_per_node > 0 && k > request.ranks_per_node;
        RunShape shape{
            .machine = &request.machine,
            .network = across ? request.machine.inter_node : request.machine.shared_memory,
            .threads = request.threads > 0 ? request.threads
                                           : std::max(1, request.machine.cores / per_node),
            .ranks_per_node = per_node};
        RunShape slow_shape = shape;
        slow_shape.machine = &slowed;
        slow_shape.network = across ? slowed.inter_node : slowed.shared_memory;
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
            c.memory =
                predict_graph_memory(graph_model.graph, mode, stats, request.machine, whole,
                                     sparse ? FeatureStorage::sparse : FeatureStorage::dense);
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
        for (const PipelineLayout& layout : pipeline_layouts(built.graph, k, one.vertices)) {
            Candidate c;
            c.parallel = "pipeline";
            c.ranks = k;
            c.stages = layout.stages;
            c.ways = layout.ways;
            c.chunks = layout.chunks;
            c.recompute = to_string(layout.recompute);
            c.threads = shape.threads;
            const PipelinePrediction p = predict_pipeline_epoch(built.graph, one, layout, shape);
            c.time = p.time;
            c.error_band = spread_band(
                predict_pipeline_epoch(built.graph, one, layout, slow_shape).time, c.time);
            c.stage_bytes = p.stage_bytes;
            c.bubble = p.bubble;
            c.split = p.split;
            c.memory = predict_pipeline_memory(built.graph, one, layout, request.machine, whole);
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
    if (std::any_of(plan.candidates.begin(), plan.candidates.end(),
                    [](const Candidate& c) { return c.parallel == "pipeline"; })) {
        plan.notes.push_back(
            "pipeline rows are stale (chunks read last epoch's rows of unprocessed chunks): "
            "accuracy may differ from graph parallelism, and the accuracy guard may halve the "
            "chunks (more bubble) or fall back to exact; not priced");
        plan.notes.push_back(
            "pipeline: only one way per stage is planned (the W-way hybrid's mirror exchange is "
            "not modelled); the per-chunk history bookkeeping is not priced");
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
                              {"bubble", c.bubble},
                              {"split", c.split},
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
    return j.dump(2) + "\n";
}

std::string format_plan(const Plan& plan) {
    std::string out = "plan: " + plan.data + ", " + plan.model + ", machine " + plan.machine_host +
                      ", memory limit " + mb(plan.memory_per_rank_bytes) + " MB per rank\n";
    char line[256];
    std::snprintf(line, sizeof(line),
                  "%-8s %5s %-11s %3s %10s %6s %10s %9s %9s %12s %10s %10s %4s\n", "parallel",
                  "ranks", "layout", "thr", "epoch_ms", "band_%", "compute_ms", "wait_ms",
                  "eval_ms", "bytes_MB/ep", "plan_MB", "peak_MB", "fits");
    out += line;
    for (const Candidate& c : plan.candidates) {
        // Graph parallelism: the --recompute mode and halo bytes; the pipeline: S x W x C and
        // stage bytes.
        const bool pipeline = c.parallel == "pipeline";
        const std::string layout = pipeline
                                       ? std::to_string(c.stages) + "x" + std::to_string(c.ways) +
                                             "x" + std::to_string(c.chunks)
                                       : c.recompute;
        const std::int64_t bytes = pipeline ? c.stage_bytes : c.time.halo_bytes;
        std::snprintf(
            line, sizeof(line),
            "%-8s %5d %-11s %3d %10.2f %6.0f %10.2f %9.2f %9.2f %12.3f %10.1f %10.1f %4s%s%s\n",
            c.parallel.c_str(), c.ranks, layout.c_str(), c.threads, 1e3 * c.time.epoch_s,
            100.0 * c.error_band, 1e3 * c.time.compute_s, 1e3 * c.time.wait_s, 1e3 * c.time.eval_s,
            static_cast<double>(bytes) / 1e6, static_cast<double>(c.memory.planned_bytes) / 1e6,
            static_cast<double>(c.memory.peak_bytes) / 1e6, c.fits ? "yes" : "no",
            c.extrapolated ? "  (extrapolated)" : "", c.recommended ? "  <- recommended" : "");
        out += line;
        if (pipeline) {
            std::snprintf(line, sizeof(line), "%9sbubble %.0f %%, ", "", 100.0 * c.bubble);
            out += line + c.split + "\n";
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
    STRATA_CHECK(version == 1 || version == Plan::format_version, what, ": plan version ", version,
                 " is not supported (expected 1 or ", Plan::format_version, ")");
    for (const json& c : j.at("candidates")) {
        if (c.at("ranks").get<int>() == ranks && c.at("recommended").get<bool>()) {
            ChosenLayout chosen{.parallel = c.at("parallel").get<std::string>(),
                                .recompute = c.at("recompute").get<std::string>(),
                                .stages = c.value("stages", 0),
                                .ways = c.value("ways", 0),
                                .chunks = c.value("chunks", 0)};
            STRATA_CHECK(chosen.parallel == "graph" || chosen.parallel == "pipeline", what,
                         ": candidate for ", ranks, " ranks: parallel '", chosen.parallel,
                         "' is not graph or pipeline");
            if (chosen.parallel == "pipeline") {
                STRATA_CHECK(chosen.stages >= 1 && chosen.ways >= 1 &&
                                 chosen.stages * chosen.ways == ranks && chosen.chunks >= 1 &&
                                 chosen.chunks % chosen.ways == 0,
                             what, ": pipeline candidate for ", ranks, " ranks: stages ",
                             chosen.stages, " x ways ", chosen.ways, " with chunks ", chosen.chunks,
                             " does not fit ", ranks, " ranks");
            }
            return chosen;
        }
    }
    STRATA_FAIL(what, ": no recommended layout for ", ranks,
                " ranks (plan again with --ranks including ", ranks, ")");
}

}  // namespace strata::planner
