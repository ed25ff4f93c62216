// Writing a partition directory (docs/partition-format.md): partition.json and one
// part-NNNNN.h5 per rank, built in one pass and renamed into place at the end.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <span>

#include "datasets/h5_file.hpp"
#include "partition/local_part.hpp"
#include "partition/partition.hpp"
#include "src/base/atomic_output.hpp"
#include "src/base/error.hpp"
#include "src/base/log.hpp"
#include "src/base/timer.hpp"
#include "src/comm/broadcast_string.hpp"

namespace fs = std::filesystem;

namespace strata {
namespace {

/// FNV-1a 64 over a byte range, chained through `hash`.
std::uint64_t fnv1a(std::uint64_t hash, const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) {
        hash ^= p[i];
        hash *= 0x100000001b3ULL;
    }
    return hash;
}

/// Identifies a partition: the source identity (content id or crc32), method, seed, K and every
/// owner.
std::string make_partition_id(const PartitionInfo& info, const Partition& partition,
                              const Partition* chunks) {
    std::uint64_t hash = 0xcbf29ce484222325ULL;
    hash = fnv1a(hash, info.source_checksum.data(), info.source_checksum.size());
    hash = fnv1a(hash, info.method.data(), info.method.size());
    hash = fnv1a(hash, &info.seed, sizeof(info.seed));
    hash = fnv1a(hash, &partition.num_parts, sizeof(partition.num_parts));
    hash = fnv1a(hash, partition.owner.data(), partition.owner.size() * sizeof(int));
    if (chunks != nullptr) {
        hash = fnv1a(hash, &chunks->num_parts, sizeof(chunks->num_parts));
        hash = fnv1a(hash, chunks->owner.data(), chunks->owner.size() * sizeof(int));
    }
    char text[20];
    std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(hash));
    return text;
}

template <class T>
std::span<const T> as_span(const std::vector<T>& v) {
    return {v.data(), v.size()};
}

std::int64_t size_of(std::size_t n) {
    return static_cast<std::int64_t>(n);
}

void write_part_file(const std::string& path, const LocalPart& part,
                     const std::vector<global_id>& halo_global, const PartitionReport& report) {
    const LocalGraph& g = part.graph;
    const auto n = static_cast<std::size_t>(g.num_owned);
    // One CSR with local column ids: owned columns [0, n), then the halo, peer after peer
    // (row lengths first, then the inner block and each peer's listed rows at a row cursor).
    std::vector<std::int64_t> row_ptr(n + 1, 0);
    for (std::size_t r = 0; r < n; ++r) {
        row_ptr[r + 1] = g.inner.row_ptr[r + 1] - g.inner.row_ptr[r];
    }
    for (const HostDcsr& block : g.halo) {
        for (std::size_t r = 0; r < block.row_ids.size(); ++r) {
            row_ptr[static_cast<std::size_t>(block.row_ids[r]) + 1] +=
                block.block.row_ptr[r + 1] - block.block.row_ptr[r];
        }
    }
    for (std::size_t r = 0; r < n; ++r) {
        row_ptr[r + 1] += row_ptr[r];
    }
    std::vector<std::int32_t> col_idx(static_cast<std::size_t>(row_ptr[n]));
    std::vector<float> values(col_idx.size());
    std::vector<std::int64_t> next(row_ptr.begin(), row_ptr.end() - 1);
    for (std::size_t r = 0; r < n; ++r) {
        for (index_t k = g.inner.row_ptr[r]; k < g.inner.row_ptr[r + 1]; ++k) {
            const auto slot = static_cast<std::size_t>(next[r]++);
            col_idx[slot] = g.inner.col_idx[static_cast<std::size_t>(k)];
            values[slot] = g.inner.values[static_cast<std::size_t>(k)];
        }
    }
    for (std::size_t p = 0; p < g.halo.size(); ++p) {
        const HostDcsr& block = g.halo[p];
        const index_t base = g.num_owned + g.pattern.recv_offsets[p];
        for (std::size_t r = 0; r < block.row_ids.size(); ++r) {
            auto& cursor = next[static_cast<std::size_t>(block.row_ids[r])];
            for (index_t k = block.block.row_ptr[r]; k < block.block.row_ptr[r + 1]; ++k) {
                const auto slot = static_cast<std::size_t>(cursor++);
                col_idx[slot] = base + block.block.col_idx[static_cast<std::size_t>(k)];
                values[slot] = block.block.values[static_cast<std::size_t>(k)];
            }
        }
    }
    std::vector<std::int32_t> peers(g.pattern.peers.begin(), g.pattern.peers.end());

    H5File file = H5File::create(path);
    file.write_attribute("/", "strata_format", part_format_name);
    file.write_attribute("/", "strata_format_version", partition_format_version);
    file.write_attribute("/", "partition_id", report.partition_id);
    file.write_attribute("/", "part", std::int64_t{g.rank});
    file.write_attribute("/", "num_parts", std::int64_t{g.num_parts});
    file.write_attribute("/", "num_global_vertices", g.num_global_vertices);
    file.write_attribute("/", "first_owned", g.first_owned);
    file.write_attribute("/", "num_owned", std::int64_t{g.num_owned});
    file.write_attribute("/", "num_halo", size_of(g.halo_original.size()));
    file.write_attribute("/", "num_classes", part.num_classes);
    file.write_attribute("/", "global_train", part.global_train);
    file.write_attribute("/", "global_val", part.global_val);
    file.write_attribute("/", "global_test", part.global_test);
    const std::int64_t rows = g.num_owned;
    file.write(std::string("/owned/original_ids"), as_span(g.owned_original), {rows});
    if (!part.chunk.empty()) {
        file.write(std::string("/owned/chunk"), as_span(part.chunk), {rows});
    }
    file.write(std::string("/adjacency/row_ptr"), as_span(row_ptr), {rows + 1});
    file.write(std::string("/adjacency/col_idx"), as_span(col_idx), {size_of(col_idx.size())});
    file.write(std::string("/adjacency/values"), as_span(values), {size_of(values.size())});
    const std::int64_t halo = size_of(g.halo_original.size());
    file.write(std::string("/halo/original_ids"), as_span(g.halo_original), {halo});
    file.write(std::string("/halo/global_ids"), as_span(halo_global), {halo});
    file.write(std::string("/degrees/owned"), as_span(g.owned_degree), {rows});
    file.write(std::string("/degrees/halo"), as_span(g.halo_degree), {halo});
    file.write(std::string("/exchange/peers"), as_span(peers), {size_of(peers.size())});
    file.write(std::string("/exchange/send_offsets"), as_span(g.pattern.send_offsets),
               {size_of(g.pattern.send_offsets.size())});
    file.write(std::string("/exchange/recv_offsets"), as_span(g.pattern.recv_offsets),
               {size_of(g.pattern.recv_offsets.size())});
    file.write(std::string("/exchange/send_rows"), as_span(g.send_rows),
               {size_of(g.send_rows.size())});
    // Compressed (shuffle + deflate level 1: Cora's 2 parts take 0.59 MB, not 15.7 MB) in
    // column-blocked chunks (format 4): a grid rank's column slice decompresses only its blocks
    // (docs/partition-format.md).
    file.write(std::string("/node/features"), as_span(part.features.values),
               {rows, part.features.cols}, /*compress=*/true, feature_column_block);
    const std::vector<std::int64_t> labels(part.labels.begin(), part.labels.end());
    file.write(std::string("/node/labels"), as_span(labels), {rows});
    const std::int64_t splits = part.num_splits;
    file.write(std::string("/node/train_mask"), as_span(part.train_mask), {splits, rows});
    file.write(std::string("/node/val_mask"), as_span(part.val_mask), {splits, rows});
    file.write(std::string("/node/test_mask"), as_span(part.test_mask), {splits, rows});
    file.close();  // checked: a full disk fails here, naming the part file
}

/// Sets part.chunk (the chunk of each owned row within its part) from the global chunk map and
/// returns the part's chunk sizes. Throws if a row's chunk lies in another part or a chunk of
/// the part is empty.
std::vector<global_id> local_chunks(LocalPart& part, const Partition& chunks, int per_part,
                                    const std::string& what) {
    const int first = part.graph.rank * per_part;
    std::vector<global_id> sizes(static_cast<std::size_t>(per_part), 0);
    part.chunk.resize(part.graph.owned_original.size());
    for (std::size_t i = 0; i < part.chunk.size(); ++i) {
        const global_id v = part.graph.owned_original[i];
        const int c = chunks.owner[static_cast<std::size_t>(v)] - first;
        STRATA_CHECK(c >= 0 && c < per_part, what, ": vertex ", v, " of part ", part.graph.rank,
                     " is in chunk ", c + first, ", outside the part's chunks [", first, ", ",
                     first + per_part, ")");
        part.chunk[i] = c;
        ++sizes[static_cast<std::size_t>(c)];
    }
    for (std::size_t c = 0; c < sizes.size(); ++c) {
        STRATA_CHECK(sizes[c] > 0, what, ": chunk ", first + static_cast<int>(c), " of part ",
                     part.graph.rank, " is empty");
    }
    return sizes;
}

}  // namespace

std::string part_file_name(int rank) {
    char name[32];
    std::snprintf(name, sizeof(name), "part-%05d.h5", rank);
    return name;
}

PartitionReport write_partition(const GraphDataset& graph, const GlobalCsr& adjacency,
                                const Partition& partition, const PartitionInfo& info,
                                const std::string& out_dir, bool force, const Partition* chunks) {
    AtomicOutput output(out_dir, force);
    const global_id n = graph.num_vertices();
    STRATA_CHECK(adjacency.num_rows() == n, out_dir, ": the adjacency has ", adjacency.num_rows(),
                 " rows but the graph has ", n, " vertices");
    validate_partition(partition, n, out_dir + ": partition");
    int per_part = 0;
    if (chunks != nullptr) {
        validate_partition(*chunks, n, out_dir + ": chunks");
        STRATA_CHECK(chunks->num_parts % partition.num_parts == 0, out_dir, ": ", chunks->num_parts,
                     " chunks are not a multiple of ", partition.num_parts, " parts");
        per_part = chunks->num_parts / partition.num_parts;
    }
    std::error_code ec;
    fs::create_directory(output.temp_path(), ec);
    STRATA_CHECK(!ec, output.temp_path().string(), ": cannot create directory: ", ec.message());

    PartitionReport report;
    report.info = info;
    report.partition_id = make_partition_id(info, partition, chunks);
    report.num_parts = partition.num_parts;
    report.num_vertices = n;
    report.num_edges = graph.num_edges();
    report.nnz = adjacency.nnz();
    report.num_features = graph.features.cols;
    report.num_classes = graph.num_classes;
    report.chunks_per_part = per_part;

    double build_seconds = 0.0;
    double write_seconds = 0.0;
    std::int64_t build_peak = 0;
    std::unique_ptr<LocalGraphBuilder> builder;
    {
        const ScopedTimer timer(build_seconds);
        builder = std::make_unique<LocalGraphBuilder>(adjacency, partition);
    }
    report.part_offsets = builder->numbering().part_offsets;
    Progress progress("writing parts", partition.num_parts, info.progress);
    for (int rank = 0; rank < partition.num_parts; ++rank) {
        LocalPart part;
        std::vector<global_id> halo_global;
        {
            const ScopedTimer timer(build_seconds);
            part = attach_vertex_data(graph, builder->build(rank), rank == 0);
            if (rank == 0) {
                report.global_train = part.global_train;
                report.global_val = part.global_val;
                report.global_test = part.global_test;
            } else {
                part.global_train = report.global_train;
                part.global_val = report.global_val;
                part.global_test = report.global_test;
            }
            for (global_id original : part.graph.halo_original) {
                halo_global.push_back(
                    builder->numbering().new_id[static_cast<std::size_t>(original)]);
            }
            report.parts.push_back(part_stats(part.graph));
            if (chunks != nullptr) {
                report.chunk_sizes.push_back(local_chunks(part, *chunks, per_part, out_dir));
            }
            build_peak = std::max(build_peak, peak_rss_bytes());
        }
        const ScopedTimer timer(write_seconds);
        write_part_file((output.temp_path() / part_file_name(rank)).string(), part, halo_global,
                        report);
        progress.update(rank + 1);
    }
    progress.finish();
    builder.reset();
    summarize(report);
    // partition.json records the phases, so "write" ends just before it (a few KiB).
    report.info.phases.push_back({"build", build_seconds, build_peak});
    report.info.phases.push_back({"write", write_seconds, peak_rss_bytes()});
    {
        const std::string path = (output.temp_path() / "partition.json").string();
        std::ofstream json(path);
        json << report_to_json(report);
        json.close();
        STRATA_CHECK(json.good(), path, ": write failed (disk full?)");
    }
    output.commit();
    return report;
}

}  // namespace strata

namespace strata {
namespace {

/// PartStats as int64 values: the eight counts, the number of peers, then (peer, rows) pairs.
void encode_stats(const PartStats& s, std::vector<std::int64_t>& out) {
    out.insert(out.end(), {s.first_owned, s.num_owned, s.edges, s.halo_edges, s.halo, s.boundary,
                           s.rows_sent, s.rows_received, size_of(s.send.size())});
    for (const auto& [peer, rows] : s.send) {
        out.insert(out.end(), {std::int64_t{peer}, rows});
    }
}

/// One encoded PartStats from values[at], advancing `at`.
PartStats decode_stats(std::span<const std::int64_t> values, std::size_t& at) {
    PartStats s;
    s.first_owned = values[at++];
    s.num_owned = values[at++];
    s.edges = values[at++];
    s.halo_edges = values[at++];
    s.halo = values[at++];
    s.boundary = values[at++];
    s.rows_sent = values[at++];
    s.rows_received = values[at++];
    const std::int64_t peers = values[at++];
    for (std::int64_t i = 0; i < peers; ++i) {
        const auto peer = static_cast<int>(values[at++]);
        s.send.emplace_back(peer, values[at++]);
    }
    return s;
}

/// Every rank learns whether any failed (`error` non-empty on that rank); a failing rank's
/// message wins on that rank, the others name the stage.
void agree_on_failure(const std::string& error, const std::string& stage, Communicator& comm) {
    std::vector<std::int64_t> failed{error.empty() ? 0 : 1};
    comm.allreduce_max(failed);
    STRATA_CHECK(error.empty(), error);
    STRATA_CHECK(failed[0] == 0, stage, " failed on another rank");
}

}  // namespace

PartitionReport write_partition_parallel(const std::vector<LocalPart>& parts,
                                         const Partition& partition, const PartitionInfo& info,
                                         const PartitionTotals& totals, const std::string& out_dir,
                                         bool force, Communicator& comm) {
    const Renumbering numbering = renumber(partition);
    PartitionReport report;
    report.info = info;
    report.partition_id = make_partition_id(info, partition, nullptr);
    report.num_parts = partition.num_parts;
    report.num_vertices = static_cast<global_id>(partition.owner.size());
    report.num_edges = totals.num_edges;
    report.num_features = totals.num_features;
    report.num_classes = totals.num_classes;
    report.part_offsets = numbering.part_offsets;

    // Rank 0 creates the temporary directory; every rank writes its parts into it.
    std::optional<AtomicOutput> output;
    std::string error;
    std::string temp;
    if (comm.rank() == 0) {
        try {
            output.emplace(out_dir, force);
            std::error_code ec;
            fs::create_directory(output->temp_path(), ec);
            STRATA_CHECK(!ec, output->temp_path().string(),
                         ": cannot create directory: ", ec.message());
            temp = output->temp_path().string();
        } catch (const Error& e) {
            error = e.message();
        }
    }
    agree_on_failure(error, "creating " + out_dir, comm);
    broadcast_string(comm, temp, 0);

    double write_seconds = 0.0;
    std::vector<std::int64_t> encoded;
    std::array<std::int64_t, 4> sums{0, 0, 0, 0};  // nnz, train, val, test
    try {
        const ScopedTimer timer(write_seconds);
        for (const LocalPart& part : parts) {
            std::vector<global_id> halo_global;
            halo_global.reserve(part.graph.halo_original.size());
            for (global_id original : part.graph.halo_original) {
                halo_global.push_back(numbering.new_id[static_cast<std::size_t>(original)]);
            }
            write_part_file((fs::path(temp) / part_file_name(part.graph.rank)).string(), part,
                            halo_global, report);
            const PartStats stats = part_stats(part.graph);
            encoded.push_back(part.graph.rank);
            encode_stats(stats, encoded);
            sums[0] += stats.edges;
            sums[1] = part.global_train;  // split 0's totals, the same on every part
            sums[2] = part.global_val;
            sums[3] = part.global_test;
        }
    } catch (const Error& e) {
        error = e.message();
    }
    std::vector<std::int64_t> failed{error.empty() ? 0 : 1};
    comm.allreduce_max(failed);
    if (failed[0] != 0) {
        output.reset();  // rank 0 removes the temporary directory before anyone throws
        comm.barrier();
        STRATA_CHECK(error.empty(), error);
        STRATA_FAIL("writing the parts of ", out_dir, " failed on another rank");
    }
    std::array<std::int64_t, 1> nnz{sums[0]};
    comm.allreduce_sum(nnz);
    std::array<std::int64_t, 3> split{sums[1], sums[2], sums[3]};
    comm.allreduce_max(split);
    std::array<double, 1> seconds{write_seconds};
    comm.allreduce_max(seconds);
    const std::vector<std::byte> gathered =
        comm.gather(std::as_bytes(std::span<const std::int64_t>(encoded)), 0);

    if (comm.rank() == 0) {
        try {
            report.nnz = nnz[0];
            report.global_train = split[0];
            report.global_val = split[1];
            report.global_test = split[2];
            std::vector<std::int64_t> values(gathered.size() / sizeof(std::int64_t));
            std::memcpy(values.data(), gathered.data(), values.size() * sizeof(std::int64_t));
            std::vector<PartStats> by_part(static_cast<std::size_t>(partition.num_parts));
            for (std::size_t at = 0; at < values.size();) {
                const auto part = static_cast<std::size_t>(values[at++]);
                by_part[part] = decode_stats(values, at);
            }
            report.parts = std::move(by_part);
            summarize(report);
            report.info.phases.push_back({"write", seconds[0], peak_rss_bytes()});
            const std::string path = (output->temp_path() / "partition.json").string();
            std::ofstream json(path);
            json << report_to_json(report);
            json.close();
            STRATA_CHECK(json.good(), path, ": write failed (disk full?)");
            output->commit();
        } catch (const Error& e) {
            error = e.message();
            output.reset();
        }
    }
    agree_on_failure(error, "writing " + out_dir + "/partition.json", comm);
    return report;
}

}  // namespace strata
