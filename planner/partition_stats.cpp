// PartitionStats: measured from real METIS runs, scaled beyond them, cached as JSON.
#include "planner/partition_stats.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "datasets/adjacency.hpp"
#include "layers/sparse_features.hpp"
#include "layers/training_inputs.hpp"
#include "partition/distributed_load.hpp"
#include "partition/local_part.hpp"
#include "partition/metis_partitioner.hpp"
#include "partition/partition_report.hpp"
#include "partition/whole_partition.hpp"
#include "planner/load_memory.hpp"
#include "planner/machine_model.hpp"
#include "src/base/error.hpp"
#include "src/base/log.hpp"
#include "src/base/timer.hpp"

namespace strata::planner {
namespace {

using nlohmann::json;

std::int64_t lines_total(const std::vector<MemoryLine>& lines) {
    std::int64_t total = 0;
    for (const MemoryLine& line : lines) {
        total += line.bytes;
    }
    return total;
}

/// `path` absolute and lexically normal, without a trailing separator ("d/" -> "/cwd/d").
std::filesystem::path absolute_path(const std::string& path) {
    std::filesystem::path p = std::filesystem::absolute(path).lexically_normal();
    if (!p.has_filename() && p.has_parent_path()) {
        p = p.parent_path();
    }
    return p;
}

}  // namespace

std::int64_t total_send_rows(const PartitionStats& stats) {
    std::int64_t rows = 0;
    for (const RankStats& r : stats.ranks) {
        rows += r.send_rows;
    }
    return rows;
}

double feature_density(const PartitionStats& stats) {
    std::int64_t nnz = 0;
    for (const RankStats& r : stats.ranks) {
        nnz += r.feature_nnz;
    }
    const double entries =
        static_cast<double>(stats.vertices) * static_cast<double>(stats.features);
    return entries > 0.0 ? static_cast<double>(nnz) / entries : 1.0;
}

std::vector<double> near_shares(const HostCsr& a) {
    constexpr int buckets = 32;
    std::vector<double> near(buckets, 0.0);
    if (a.nnz() == 0) {
        return near;
    }
    // count[b]: entries with 2^(b-1) <= |i - j| < 2^b (b = 0: i == j).
    std::vector<std::int64_t> count(buckets + 1, 0);
    for (index_t i = 0; i < a.rows; ++i) {
        for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            const auto d = static_cast<std::uint64_t>(
                std::abs(static_cast<std::int64_t>(a.col_idx[k]) - static_cast<std::int64_t>(i)));
            ++count[static_cast<std::size_t>(std::bit_width(d))];
        }
    }
    std::int64_t within = 0;
    for (int b = 0; b < buckets; ++b) {
        within += count[static_cast<std::size_t>(b)];
        near[static_cast<std::size_t>(b)] =
            static_cast<double>(within) / static_cast<double>(a.nnz());
    }
    return near;
}

PartitionStats measure_partition(const GraphDataset& graph, const std::string& identity, int parts,
                                 Normalization normalization, std::uint64_t seed) {
    const Stopwatch watch;
    PartitionStats s;
    s.identity = identity;
    s.parts = parts;
    s.normalization = normalization;
    s.seed = seed;
    s.vertices = graph.num_vertices();
    s.features = graph.num_features();
    s.classes = graph.num_classes;
    const GlobalCsr adjacency = adjacency_matrix(graph);
    s.nnz = static_cast<std::int64_t>(adjacency.indices.size());
    // As strata train's in-memory load (partition/distributed_load.cpp).
    const Partition partition = parts == 1
                                    ? partition_block(graph.num_vertices(), 1)
                                    : partition_metis(graph, parts, MetisOptions{.seed = seed});
    for (int r = 0; r < parts; ++r) {
        const LocalPart part = build_local_part(graph, adjacency, partition, r);
        const TrainingInputs::Plan plan = TrainingInputs::plan(part, normalization);
        RankStats rank;
        const LocalGraph& op = plan.graph_operator;
        rank.owned = op.num_owned;
        rank.inner_nnz = op.inner.nnz();
        for (const HostDcsr& block : op.halo) {
            rank.halo_nnz += block.nnz();
        }
        rank.send_rows = op.pattern.num_send_rows();
        rank.recv_rows = op.pattern.num_recv_rows();
        rank.peers = static_cast<int>(op.pattern.peers.size());
        rank.input_bytes = lines_total(plan.lines);
        rank.feature_nnz = count_nonzeros(part.features);
        rank.sparse_input_bytes =
            lines_total(TrainingInputs::plan(part, normalization, FeatureStorage::sparse).lines);
        rank.inner_near = near_shares(op.inner);
        s.ranks.push_back(rank);
    }
    s.partition_s = watch.seconds();
    return s;
}

PartitionStats extrapolate_partition(const std::vector<PartitionStats>& measured, int parts) {
    STRATA_CHECK(!measured.empty(), "plan: no measured partition to extrapolate from");
    const PartitionStats& last = measured.back();
    PartitionStats s = last;
    s.parts = parts;
    s.extrapolated = true;
    s.partition_s = 0.0;
    // Halo rows per exchange, summed over ranks, as a K^b power law through the two largest
    // measured K (b = 0.5 for a planar-like cut when only one K > 1 is known).
    const double volume = static_cast<double>(std::max<std::int64_t>(1, total_send_rows(last)));
    double exponent = 0.5;
    if (measured.size() >= 2 && measured[measured.size() - 2].parts > 1) {
        const PartitionStats& prev = measured[measured.size() - 2];
        const double v0 = static_cast<double>(std::max<std::int64_t>(1, total_send_rows(prev)));
        exponent = std::log(volume / v0) /
                   std::log(static_cast<double>(last.parts) / static_cast<double>(prev.parts));
    }
    const double scale = static_cast<double>(parts) / static_cast<double>(last.parts);
    const double new_volume =
        std::min(volume * std::pow(scale, exponent), static_cast<double>(last.nnz));
    // The band: the fit's exponent could be off by 0.25 either way over the extrapolated range.
    s.error_band = std::pow(scale, 0.25) - 1.0;
    const RankStats& worst =
        *std::max_element(last.ranks.begin(), last.ranks.end(),
                          [](const RankStats& a, const RankStats& b) { return a.owned < b.owned; });
    RankStats r;
    const auto per = [&](double total) {
        return static_cast<std::int64_t>(std::ceil(total / static_cast<double>(parts)));
    };
    r.owned = per(static_cast<double>(s.vertices));
    const double ratio_nnz = static_cast<double>(worst.inner_nnz + worst.halo_nnz) /
                             static_cast<double>(std::max<std::int64_t>(1, worst.owned));
    const double halo_share = new_volume / static_cast<double>(std::max<std::int64_t>(1, last.nnz));
    const auto entries = static_cast<double>(r.owned) * ratio_nnz;
    r.halo_nnz = static_cast<std::int64_t>(std::min(entries, entries * halo_share * 2.0));
    r.inner_nnz = static_cast<std::int64_t>(entries) - r.halo_nnz;
    r.send_rows = per(new_volume);
    r.recv_rows = r.send_rows;
    r.peers = std::min(
        parts - 1,
        std::max(worst.peers, static_cast<int>(std::ceil(worst.peers * std::sqrt(scale)))));
    const auto scaled = [&](std::int64_t bytes) {
        return static_cast<std::int64_t>(static_cast<double>(bytes) * static_cast<double>(r.owned) /
                                         static_cast<double>(worst.owned));
    };
    r.input_bytes = scaled(worst.input_bytes);
    r.feature_nnz = scaled(worst.feature_nnz);
    r.sparse_input_bytes = scaled(worst.sparse_input_bytes);
    r.inner_near = worst.inner_near;  // the order's locality does not depend on K
    s.ranks.assign(static_cast<std::size_t>(parts), r);
    return s;
}

std::string to_json(const PartitionStats& s) {
    json ranks = json::array();
    for (const RankStats& r : s.ranks) {
        ranks.push_back({r.owned, r.inner_nnz, r.halo_nnz, r.send_rows, r.recv_rows, r.peers,
                         r.input_bytes, r.feature_nnz, r.sparse_input_bytes, r.inner_near});
    }
    const json j = {{"format", "strata-partition-stats"},
                    {"version", PartitionStats::format_version},
                    {"identity", s.identity},
                    {"parts", s.parts},
                    {"normalization", std::string(to_string(s.normalization))},
                    {"seed", s.seed},
                    {"vertices", s.vertices},
                    {"nnz", s.nnz},
                    {"features", s.features},
                    {"classes", s.classes},
                    {"partition_s", s.partition_s},
                    {"load_bytes", s.load_bytes},
                    {"rank_fields",
                     {"owned", "inner_nnz", "halo_nnz", "send_rows", "recv_rows", "peers",
                      "input_bytes", "feature_nnz", "sparse_input_bytes", "inner_near"}},
                    {"ranks", ranks}};
    return j.dump() + "\n";
}

PartitionStats partition_stats_from_json(const std::string& text, const std::string& what) {
    try {
        const json j = json::parse(text);
        STRATA_CHECK(j.value("format", std::string()) == "strata-partition-stats", what,
                     ": not partition statistics");
        STRATA_CHECK(j.value("version", 0) == PartitionStats::format_version, what,
                     ": partition statistics version ", j.value("version", 0),
                     " is not supported (expected ", PartitionStats::format_version,
                     "): remove it and plan again");
        PartitionStats s;
        s.identity = j.at("identity").get<std::string>();
        s.parts = j.at("parts").get<int>();
        const auto n = parse_normalization(j.at("normalization").get<std::string>());
        STRATA_CHECK(n.has_value(), what, ": unknown normalization");
        s.normalization = *n;
        s.seed = j.at("seed").get<std::uint64_t>();
        s.vertices = j.at("vertices").get<global_id>();
        s.nnz = j.at("nnz").get<std::int64_t>();
        s.features = j.at("features").get<std::int64_t>();
        s.classes = j.at("classes").get<std::int64_t>();
        s.partition_s = j.at("partition_s").get<double>();
        s.load_bytes = j.at("load_bytes").get<std::int64_t>();
        for (const json& r : j.at("ranks")) {
            s.ranks.push_back({.owned = r.at(0).get<std::int64_t>(),
                               .inner_nnz = r.at(1).get<std::int64_t>(),
                               .halo_nnz = r.at(2).get<std::int64_t>(),
                               .send_rows = r.at(3).get<std::int64_t>(),
                               .recv_rows = r.at(4).get<std::int64_t>(),
                               .peers = r.at(5).get<int>(),
                               .input_bytes = r.at(6).get<std::int64_t>(),
                               .feature_nnz = r.at(7).get<std::int64_t>(),
                               .sparse_input_bytes = r.at(8).get<std::int64_t>(),
                               .inner_near = r.at(9).get<std::vector<double>>()});
        }
        STRATA_CHECK(static_cast<int>(s.ranks.size()) == s.parts, what, ": ", s.ranks.size(),
                     " ranks for ", s.parts, " parts");
        return s;
    } catch (const nlohmann::json::exception& e) {
        STRATA_FAIL(what, ": ", e.what());
    }
}

PartitionStatsCache::PartitionStatsCache(std::string data, std::string cache_dir,
                                         std::uint64_t seed)
    : data_(std::move(data)), cache_dir_(std::move(cache_dir)), seed_(seed) {
    namespace fs = std::filesystem;
    STRATA_CHECK(fs::exists(data_), data_, ": no such file or directory");
    STRATA_CHECK(!cache_dir_.empty(), "partition statistics of ", data_, ": no cache directory");
    // Absolute first: a bare file name ("g.h5") has an empty parent path, and fs::absolute("")
    // throws ("cannot make absolute path").
    const fs::path data_path = absolute_path(data_);
    const fs::path cache_path = absolute_path(cache_dir_);
    const fs::path source_dir = fs::is_directory(data_) ? data_path : data_path.parent_path();
    std::error_code ec;
    STRATA_CHECK(!fs::equivalent(source_dir, cache_path, ec) &&
                     (cache_path.string() + "/").rfind(data_path.string() + "/", 0) != 0,
                 "--cache-dir ", cache_dir_, ": must not be beside or inside the input data ",
                 data_);
    fs::create_directories(cache_dir_, ec);
    STRATA_CHECK(!ec, "--cache-dir ", cache_dir_, ": cannot create (", ec.message(), ")");
    if (fs::is_directory(data_)) {
        identity_ = read_partition_report(data_).info.source_checksum;
        if (identity_.empty()) {
            identity_ = read_partition_report(data_).partition_id;
        }
    } else {
        identity_ = source_identity(data_);
    }
}

std::string PartitionStatsCache::path_for(int parts, Normalization normalization) const {
    std::string id = identity_;
    std::replace(id.begin(), id.end(), ':', '-');
    return (std::filesystem::path(cache_dir_) /
            (id + "-k" + std::to_string(parts) + "-" + std::string(to_string(normalization)) +
             "-s" + std::to_string(seed_) + ".json"))
        .string();
}

const GraphDataset& PartitionStatsCache::graph() {
    if (!graph_) {
        graph_ = std::filesystem::is_directory(data_) ? read_whole_partition(data_).graph
                                                      : read_whole_graph(data_, 0);
    }
    return *graph_;
}

PartitionStats PartitionStatsCache::get(int parts, Normalization normalization) {
    const std::string path = path_for(parts, normalization);
    if (std::ifstream in(path); in.good()) {
        std::stringstream text;
        text << in.rdbuf();
        // An older version's statistics are measured again (it is a cache).
        const json j = json::parse(text.str(), nullptr, false);
        if (j.is_object() && j.value("version", 0) == PartitionStats::format_version) {
            return partition_stats_from_json(text.str(), path);
        }
    }
    // The load first, before this process holds the whole graph for the statistics.
    const std::int64_t load =
        std::filesystem::is_directory(data_) ? 0 : measure_load_bytes(data_, parts, seed_);
    PartitionStats s = measure_partition(graph(), identity_, parts, normalization, seed_);
    s.load_bytes = load;
    write_text_atomically(path, to_json(s));
    return s;
}

WayStats PartitionStatsCache::way_stats(int chunks, int ways) {
    const auto key = std::make_pair(chunks, ways);
    if (const auto found = way_stats_.find(key); found != way_stats_.end()) {
        return found->second;
    }
    if (!chunked_ || chunked_count_ != chunks) {
        chunked_.reset();  // one chunked copy of the structure at a time
        chunked_ = chunked_structure(graph(), chunks, seed_);
        chunked_count_ = chunks;
    }
    const WayStats stats = planner::way_stats(chunked_->structure, chunked_->offsets, ways);
    way_stats_.emplace(key, stats);
    return stats;
}

}  // namespace strata::planner
