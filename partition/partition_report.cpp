// PartitionReport: statistics from LocalGraphs, partition.json (nlohmann-json), the text table,
// and the source file checksum (zlib crc32).
#include "partition/partition_report.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <zlib.h>

#include <nlohmann/json.hpp>

#include "datasets/graph_io.hpp"
#include "partition/local_part.hpp"
#include "src/base/c_file.hpp"
#include "src/base/error.hpp"

namespace fs = std::filesystem;

namespace strata {
namespace {

using Json = nlohmann::ordered_json;

/// json[key] as T, or a clear error naming the file and the field.
template <class T>
T field(const Json& json, const char* key, const std::string& what) {
    STRATA_CHECK(json.is_object() && json.contains(key), what, ": missing field '", key, "'");
    try {
        return json.at(key).get<T>();
    } catch (const nlohmann::json::exception& e) {
        STRATA_FAIL(what, ": field '", key, "' has the wrong type (", e.what(), ")");
    }
}

double max_over_average(const std::vector<double>& values) {
    if (values.empty()) {
        return 1.0;
    }
    double sum = 0.0;
    double max = 0.0;
    for (double v : values) {
        sum += v;
        max = std::max(max, v);
    }
    return sum > 0.0 ? max * static_cast<double>(values.size()) / sum : 1.0;
}

}  // namespace

PartStats part_stats(const LocalGraph& graph) {
    PartStats s;
    s.first_owned = graph.first_owned;
    s.num_owned = graph.num_owned;
    s.edges = graph.inner.nnz();
    for (const HostDcsr& block : graph.halo) {
        s.halo_edges += block.nnz();
    }
    s.edges += s.halo_edges;
    s.halo = static_cast<std::int64_t>(graph.halo_original.size());
    s.rows_received = graph.pattern.num_recv_rows();
    s.rows_sent = graph.pattern.num_send_rows();
    std::vector<std::uint8_t> sent(static_cast<std::size_t>(graph.num_owned), 0);
    for (index_t row : graph.send_rows) {
        sent[static_cast<std::size_t>(row)] = 1;
    }
    s.boundary = std::count(sent.begin(), sent.end(), std::uint8_t{1});
    for (std::size_t i = 0; i < graph.pattern.peers.size(); ++i) {
        s.send.emplace_back(graph.pattern.peers[i],
                            graph.pattern.send_offsets[i + 1] - graph.pattern.send_offsets[i]);
    }
    return s;
}

void summarize(PartitionReport& report) {
    std::vector<double> owned;
    std::vector<double> edges;
    report.edge_cut = 0;
    report.communication_volume = 0;
    for (const PartStats& s : report.parts) {
        owned.push_back(static_cast<double>(s.num_owned));
        edges.push_back(static_cast<double>(s.edges));
        report.edge_cut += s.halo_edges;
        report.communication_volume += s.halo;
    }
    report.vertex_imbalance = max_over_average(owned);
    report.edge_imbalance = max_over_average(edges);
}

std::string report_to_json(const PartitionReport& r) {
    Json json;
    json["strata_format"] = "partition";
    json["strata_format_version"] = partition_format_version;
    json["partition_id"] = r.partition_id;
    json["source"] = {{"path", r.info.source_path}, {"checksum", r.info.source_checksum}};
    json["method"] = r.info.method;
    json["seed"] = r.info.seed;
    json["balance"] = r.info.balance;
    json["metis_edgecut"] = r.info.metis_edgecut >= 0 ? Json(r.info.metis_edgecut) : Json(nullptr);
    json["num_parts"] = r.num_parts;
    json["num_vertices"] = r.num_vertices;
    json["num_edges"] = r.num_edges;
    json["nnz"] = r.nnz;
    json["num_features"] = r.num_features;
    json["num_classes"] = r.num_classes;
    json["global_train"] = r.global_train;
    json["global_val"] = r.global_val;
    json["global_test"] = r.global_test;
    json["part_offsets"] = r.part_offsets;
    json["edge_cut"] = r.edge_cut;
    json["vertex_imbalance"] = r.vertex_imbalance;
    json["edge_imbalance"] = r.edge_imbalance;
    json["communication_volume"] = r.communication_volume;
    Json parts = Json::array();
    for (std::size_t p = 0; p < r.parts.size(); ++p) {
        const PartStats& s = r.parts[p];
        Json send = Json::array();
        for (const auto& [peer, rows] : s.send) {
            send.push_back({peer, rows});
        }
        parts.push_back({{"part", p},
                         {"first_owned", s.first_owned},
                         {"num_owned", s.num_owned},
                         {"edges", s.edges},
                         {"halo_edges", s.halo_edges},
                         {"halo", s.halo},
                         {"boundary", s.boundary},
                         {"rows_sent", s.rows_sent},
                         {"rows_received", s.rows_received},
                         {"send", send}});
    }
    json["parts"] = parts;
    if (r.chunks_per_part > 0) {
        json["chunks"] = {{"count", r.chunks_per_part * r.num_parts},
                          {"per_part", r.chunks_per_part},
                          {"sizes", r.chunk_sizes}};
    }
    Json phases = Json::array();
    for (const PhaseStat& phase : r.info.phases) {
        phases.push_back({{"name", phase.name},
                          {"seconds", phase.seconds},
                          {"peak_rss_bytes", phase.peak_rss_bytes}});
    }
    json["phases"] = phases;
    return json.dump(2) + "\n";
}

std::string unsupported_version_message(const std::string& file, std::int64_t version,
                                        const std::string& source, std::int64_t num_parts,
                                        const std::string& dir) {
    return file + ": partition format version " + std::to_string(version) +
           " is not supported (this strata reads versions " +
           std::to_string(oldest_partition_format_version) + " to " +
           std::to_string(partition_format_version) +
           "): re-partition with 'strata partition --data " +
           (source.empty() ? std::string("GRAPH.h5") : source) + " --parts " +
           (num_parts >= 1 ? std::to_string(num_parts) : std::string("K")) + " --out " +
           (dir.empty() ? std::string(".") : dir) + " --force'";
}

PartitionReport report_from_json(const std::string& text, const std::string& what) {
    Json json;
    try {
        json = Json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        STRATA_FAIL(what, ": not valid JSON (", e.what(), ")");
    }
    const auto format = field<std::string>(json, "strata_format", what);
    STRATA_CHECK(format == "partition", what, ": strata_format is '", format,
                 "', expected 'partition'");
    const auto version = field<std::int64_t>(json, "strata_format_version", what);
    if (version < oldest_partition_format_version || version > partition_format_version) {
        // Name the command that makes a readable directory from what this one says it came from.
        const std::string source = json.contains("source") && json["source"].is_object() &&
                                           json["source"].value("path", Json()).is_string()
                                       ? json["source"]["path"].get<std::string>()
                                       : std::string();
        const std::int64_t k = json.value("num_parts", Json()).is_number_integer()
                                   ? json["num_parts"].get<std::int64_t>()
                                   : -1;
        STRATA_FAIL(unsupported_version_message(what, version, source, k,
                                                fs::path(what).parent_path().string()));
    }
    PartitionReport r;
    r.partition_id = field<std::string>(json, "partition_id", what);
    const Json source = json.contains("source") ? json["source"] : Json::object();
    r.info.source_path = field<std::string>(source, "path", what + ": source");
    r.info.source_checksum = field<std::string>(source, "checksum", what + ": source");
    r.info.method = field<std::string>(json, "method", what);
    r.info.seed = field<std::uint64_t>(json, "seed", what);
    r.info.balance = field<std::vector<std::string>>(json, "balance", what);
    r.info.metis_edgecut = json.value("metis_edgecut", Json(nullptr)).is_null()
                               ? -1
                               : field<std::int64_t>(json, "metis_edgecut", what);
    r.num_parts = field<int>(json, "num_parts", what);
    r.num_vertices = field<global_id>(json, "num_vertices", what);
    r.num_edges = field<std::int64_t>(json, "num_edges", what);
    r.nnz = field<std::int64_t>(json, "nnz", what);
    r.num_features = field<std::int64_t>(json, "num_features", what);
    r.num_classes = field<std::int64_t>(json, "num_classes", what);
    r.global_train = field<std::int64_t>(json, "global_train", what);
    r.global_val = field<std::int64_t>(json, "global_val", what);
    r.global_test = field<std::int64_t>(json, "global_test", what);
    r.part_offsets = field<std::vector<global_id>>(json, "part_offsets", what);
    r.edge_cut = field<std::int64_t>(json, "edge_cut", what);
    r.vertex_imbalance = field<double>(json, "vertex_imbalance", what);
    r.edge_imbalance = field<double>(json, "edge_imbalance", what);
    r.communication_volume = field<std::int64_t>(json, "communication_volume", what);

    const int k = r.num_parts;
    STRATA_CHECK(k >= 1, what, ": num_parts ", k, " must be >= 1");
    STRATA_CHECK(r.part_offsets.size() == static_cast<std::size_t>(k) + 1, what,
                 ": part_offsets has ", r.part_offsets.size(),
                 " entries, expected num_parts+1 = ", k + 1);
    STRATA_CHECK(r.part_offsets.front() == 0 && r.part_offsets.back() == r.num_vertices, what,
                 ": part_offsets must run from 0 to num_vertices = ", r.num_vertices);
    for (std::size_t p = 0; p + 1 < r.part_offsets.size(); ++p) {
        STRATA_CHECK(r.part_offsets[p] <= r.part_offsets[p + 1], what,
                     ": part_offsets not monotone at part ", p);
    }
    const Json parts = json.contains("parts") ? json["parts"] : Json();
    STRATA_CHECK(parts.is_array() && parts.size() == static_cast<std::size_t>(k), what,
                 ": 'parts' must list num_parts = ", k, " parts");
    for (std::size_t p = 0; p < parts.size(); ++p) {
        const std::string where = what + ": parts[" + std::to_string(p) + "]";
        PartStats s;
        s.first_owned = field<global_id>(parts[p], "first_owned", where);
        s.num_owned = field<global_id>(parts[p], "num_owned", where);
        s.edges = field<std::int64_t>(parts[p], "edges", where);
        s.halo_edges = field<std::int64_t>(parts[p], "halo_edges", where);
        s.halo = field<std::int64_t>(parts[p], "halo", where);
        s.boundary = field<std::int64_t>(parts[p], "boundary", where);
        s.rows_sent = field<std::int64_t>(parts[p], "rows_sent", where);
        s.rows_received = field<std::int64_t>(parts[p], "rows_received", where);
        s.send = field<std::vector<std::pair<int, std::int64_t>>>(parts[p], "send", where);
        STRATA_CHECK(s.first_owned == r.part_offsets[p] &&
                         s.num_owned == r.part_offsets[p + 1] - r.part_offsets[p],
                     where, ": owned range [", s.first_owned, ", +", s.num_owned,
                     ") disagrees with part_offsets");
        for (const auto& [peer, rows] : s.send) {
            STRATA_CHECK(peer >= 0 && peer < k && peer != static_cast<int>(p) && rows >= 0, where,
                         ": send entry (", peer, ", ", rows, ") is invalid");
        }
        r.parts.push_back(std::move(s));
    }
    if (json.contains("chunks") && !json["chunks"].is_null()) {
        const std::string where = what + ": chunks";
        const Json& chunks = json["chunks"];
        r.chunks_per_part = field<int>(chunks, "per_part", where);
        const auto count = field<std::int64_t>(chunks, "count", where);
        STRATA_CHECK(r.chunks_per_part >= 1 && count == std::int64_t{r.chunks_per_part} * k, where,
                     ": count ", count, " and per_part ", r.chunks_per_part,
                     " disagree with num_parts ", k, " (count = per_part x num_parts >= 1)");
        r.chunk_sizes = field<std::vector<std::vector<global_id>>>(chunks, "sizes", where);
        STRATA_CHECK(r.chunk_sizes.size() == static_cast<std::size_t>(k), where, ": sizes lists ",
                     r.chunk_sizes.size(), " parts, expected ", k);
        for (std::size_t p = 0; p < r.chunk_sizes.size(); ++p) {
            const std::vector<global_id>& sizes = r.chunk_sizes[p];
            global_id sum = 0;
            for (global_id size : sizes) {
                STRATA_CHECK(size >= 1, where, ": sizes[", p, "] has an empty chunk");
                sum += size;
            }
            STRATA_CHECK(sizes.size() == static_cast<std::size_t>(r.chunks_per_part) &&
                             sum == r.parts[p].num_owned,
                         where, ": sizes[", p, "] lists ", sizes.size(), " chunks of ", sum,
                         " rows, expected ", r.chunks_per_part, " chunks of part ", p, "'s ",
                         r.parts[p].num_owned, " rows");
        }
    }
    if (json.contains("phases") && json["phases"].is_array()) {
        for (const Json& phase : json["phases"]) {
            r.info.phases.push_back(
                {field<std::string>(phase, "name", what + ": phases"),
                 field<double>(phase, "seconds", what + ": phases"),
                 field<std::int64_t>(phase, "peak_rss_bytes", what + ": phases")});
        }
    }
    return r;
}

std::string format_report(const PartitionReport& r) {
    std::string out;
    char line[256];
    auto add = [&](int written) {
        out.append(line, static_cast<std::size_t>(std::max(written, 0)));
    };
    std::string balance;
    for (const std::string& b : r.info.balance) {
        balance += (balance.empty() ? "" : ",") + b;
    }
    add(std::snprintf(
        line, sizeof(line),
        "partition %s: %d parts of %lld vertices, %lld A entries (method %s, seed %llu%s%s)\n",
        r.partition_id.c_str(), r.num_parts, static_cast<long long>(r.num_vertices),
        static_cast<long long>(r.nnz), r.info.method.c_str(),
        static_cast<unsigned long long>(r.info.seed), balance.empty() ? "" : ", balance ",
        balance.c_str()));
    add(std::snprintf(line, sizeof(line), "%6s %12s %14s %10s %10s %10s %10s %6s\n", "part",
                      "owned", "edges", "halo", "boundary", "sent", "received", "peers"));
    for (std::size_t p = 0; p < r.parts.size(); ++p) {
        const PartStats& s = r.parts[p];
        add(std::snprintf(line, sizeof(line),
                          "%6zu %12lld %14lld %10lld %10lld %10lld %10lld %6zu\n", p,
                          static_cast<long long>(s.num_owned), static_cast<long long>(s.edges),
                          static_cast<long long>(s.halo), static_cast<long long>(s.boundary),
                          static_cast<long long>(s.rows_sent),
                          static_cast<long long>(s.rows_received), s.send.size()));
    }
    const double cut_percent =
        r.nnz > 0 ? 100.0 * static_cast<double>(r.edge_cut) / static_cast<double>(r.nnz) : 0.0;
    add(std::snprintf(
        line, sizeof(line), "edge cut: %lld of %lld A entries (%.2f%%)%s\n",
        static_cast<long long>(r.edge_cut), static_cast<long long>(r.nnz), cut_percent,
        r.info.metis_edgecut >= 0
            ? (", METIS objective " + std::to_string(r.info.metis_edgecut) + " undirected edges")
                  .c_str()
            : ""));
    add(std::snprintf(line, sizeof(line), "imbalance (max/avg): vertices %.3f, edges %.3f\n",
                      r.vertex_imbalance, r.edge_imbalance));
    if (r.chunks_per_part > 0) {
        global_id smallest = r.num_vertices;
        global_id largest = 0;
        for (const std::vector<global_id>& sizes : r.chunk_sizes) {
            for (global_id size : sizes) {
                smallest = std::min(smallest, size);
                largest = std::max(largest, size);
            }
        }
        add(std::snprintf(line, sizeof(line),
                          "chunks (--parallel pipeline): %d, %d per part, %lld to %lld rows\n",
                          r.chunks_per_part * r.num_parts, r.chunks_per_part,
                          static_cast<long long>(smallest), static_cast<long long>(largest)));
    }
    add(std::snprintf(line, sizeof(line),
                      "communication volume: %lld rows per layer and direction = values per "
                      "feature column (sum of halo vertices; x width x 4 bytes)\n",
                      static_cast<long long>(r.communication_volume)));
    if (!r.info.phases.empty()) {
        add(std::snprintf(line, sizeof(line), "%-12s %10s %14s\n", "phase", "seconds",
                          "peak RSS MiB"));
        for (const PhaseStat& phase : r.info.phases) {
            add(std::snprintf(line, sizeof(line), "%-12s %10.3f %14.1f\n", phase.name.c_str(),
                              phase.seconds,
                              static_cast<double>(phase.peak_rss_bytes) / (1024.0 * 1024.0)));
        }
    }
    return out;
}

std::string file_checksum(const std::string& path) {
    const CFile file(std::fopen(path.c_str(), "rb"));
    STRATA_CHECK(file, path, ": cannot open for reading");
    std::vector<unsigned char> buffer(1 << 20);
    uLong crc = crc32(0L, Z_NULL, 0);
    while (true) {
        const std::size_t got = std::fread(buffer.data(), 1, buffer.size(), file.get());
        if (got > 0) {
            crc = crc32_z(crc, buffer.data(), got);
        }
        if (got < buffer.size()) {
            STRATA_CHECK(std::ferror(file.get()) == 0, path, ": read error");
            break;
        }
    }
    char text[32];
    std::snprintf(text, sizeof(text), "crc32:%08lx", static_cast<unsigned long>(crc));
    return text;
}

std::string source_identity(const std::string& path) {
    std::string id = read_graph_content_id(path);
    return id.empty() ? file_checksum(path) : id;
}

}  // namespace strata
