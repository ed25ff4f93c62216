// Reading a partition directory (docs/partition-format.md): partition.json and one rank's
// part-NNNNN.h5, with every invariant the trainer relies on checked.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "datasets/h5_file.hpp"
#include "partition/local_blocks.hpp"
#include "partition/local_limits.hpp"
#include "partition/local_part.hpp"
#include "src/base/error.hpp"

namespace fs = std::filesystem;

namespace strata {
namespace {

/// Reads a 1-D dataset of `length` elements of type T.
template <class T>
std::vector<T> read_vector(const H5File& file, const std::string& dataset, std::int64_t length) {
    H5Shape shape;
    std::vector<T> data = file.read<T>(dataset, &shape, 1);
    STRATA_CHECK(shape[0] == length, file.path(), ": ", dataset, ": ", shape[0],
                 " elements, expected ", length);
    return data;
}

std::int64_t int_attribute(const H5File& file, const char* name) {
    STRATA_CHECK(file.has_attribute("/", name), file.path(), ": missing root attribute ", name);
    return file.read_int_attribute("/", name);
}

void check_attribute(const H5File& file, const char* name, std::int64_t expected,
                     const char* meaning) {
    const std::int64_t value = int_attribute(file, name);
    STRATA_CHECK(value == expected, file.path(), ": attribute ", name, " = ", value, ", expected ",
                 expected, " (", meaning, ")");
}

std::vector<index_t> to_index(const std::vector<std::int32_t>& v) {
    return {v.begin(), v.end()};
}

}  // namespace

LocalPart read_part(const std::string& dir, int rank, int expected_num_parts,
                    const PartReadOptions& options) {
    const PartitionReport report = read_partition_report(dir);
    const int k = report.num_parts;
    STRATA_CHECK(k == expected_num_parts, dir, ": this partition has ", k, " parts but ",
                 expected_num_parts,
                 " were expected (run with as many ranks as parts, or repartition)");
    STRATA_CHECK(rank >= 0 && rank < k, dir, ": rank ", rank, " outside [0, ", k, ")");
    const std::string path = (fs::path(dir) / part_file_name(rank)).string();
    std::error_code ec;
    STRATA_CHECK(fs::exists(path, ec), path, ": missing part file");
    const H5File file = H5File::open(path);

    // Attributes: this file is part `rank` of exactly this partition.
    STRATA_CHECK(file.has_attribute("/", "strata_format"), path,
                 ": missing root attribute strata_format (not a strata part file)");
    const std::string format = file.read_string_attribute("/", "strata_format");
    STRATA_CHECK(format == part_format_name, path, ": strata_format is '", format, "', expected '",
                 part_format_name, "'");
    const std::int64_t version = int_attribute(file, "strata_format_version");
    STRATA_CHECK(version >= oldest_partition_format_version && version <= partition_format_version,
                 unsupported_version_message(path, version, report.info.source_path, k, dir));
    STRATA_CHECK(file.has_attribute("/", "partition_id"), path,
                 ": missing root attribute partition_id");
    const std::string id = file.read_string_attribute("/", "partition_id");
    STRATA_CHECK(id == report.partition_id, path, ": partition_id ", id,
                 " differs from partition.json's ", report.partition_id,
                 " (the file belongs to another partition)");
    check_attribute(file, "part", rank, "the part index");
    check_attribute(file, "num_parts", k, "partition.json's num_parts");
    check_attribute(file, "num_global_vertices", report.num_vertices, "partition.json");
    const global_id first = report.part_offsets[static_cast<std::size_t>(rank)];
    const global_id owned = report.part_offsets[static_cast<std::size_t>(rank) + 1] - first;
    check_attribute(file, "first_owned", first, "partition.json's part_offsets");
    check_attribute(file, "num_owned", owned, "partition.json's part_offsets");
    const PartStats& stats = report.parts[static_cast<std::size_t>(rank)];
    check_attribute(file, "num_halo", stats.halo, "partition.json's halo");
    check_attribute(file, "num_classes", report.num_classes, "partition.json");
    check_attribute(file, "global_train", report.global_train, "partition.json");
    check_attribute(file, "global_val", report.global_val, "partition.json");
    check_attribute(file, "global_test", report.global_test, "partition.json");
    check_local_limits(
        {.owned = owned, .halo = stats.halo, .entries = stats.edges, .rows_sent = stats.rows_sent},
        rank, k);

    LocalPart part;
    LocalGraph& g = part.graph;
    g.rank = rank;
    g.num_parts = k;
    g.num_global_vertices = report.num_vertices;
    g.first_owned = first;
    g.num_owned = static_cast<index_t>(owned);
    const auto n = static_cast<std::size_t>(owned);
    g.owned_original = read_vector<global_id>(file, "/owned/original_ids", owned);

    // Exchange pattern and halo.
    const std::vector<std::int32_t> peers = file.read<std::int32_t>("/exchange/peers", nullptr, 1);
    const auto num_peers = static_cast<std::int64_t>(peers.size());
    g.pattern.peers.assign(peers.begin(), peers.end());
    g.pattern.send_offsets =
        to_index(read_vector<std::int32_t>(file, "/exchange/send_offsets", num_peers + 1));
    g.pattern.recv_offsets =
        to_index(read_vector<std::int32_t>(file, "/exchange/recv_offsets", num_peers + 1));
    STRATA_CHECK(g.pattern.recv_offsets.back() == stats.halo, path,
                 ": /exchange/recv_offsets ends at ", g.pattern.recv_offsets.back(),
                 ", expected num_halo = ", stats.halo);
    g.send_rows = to_index(
        read_vector<std::int32_t>(file, "/exchange/send_rows", g.pattern.send_offsets.back()));
    g.halo_original = read_vector<global_id>(file, "/halo/original_ids", stats.halo);
    const std::vector<global_id> halo_global =
        read_vector<global_id>(file, "/halo/global_ids", stats.halo);
    g.owned_degree = read_vector<double>(file, "/degrees/owned", owned);
    g.halo_degree = read_vector<double>(file, "/degrees/halo", stats.halo);
    // Exchange counts agree with the peers' (as recorded in partition.json).
    std::vector<std::int64_t> sends_to(static_cast<std::size_t>(k), 0);
    for (const auto& [peer, rows] : stats.send) {
        sends_to[static_cast<std::size_t>(peer)] = rows;
    }
    std::size_t listed = 0;
    for (std::size_t i = 0; i < peers.size(); ++i) {
        const int p = peers[i];
        STRATA_CHECK(p >= 0 && p < k && p != rank, path, ": /exchange/peers: peer ", p,
                     " is out of range or this rank");
        const auto span_of = [](const std::vector<index_t>& offsets, std::size_t at) {
            return std::int64_t{offsets[at + 1]} - std::int64_t{offsets[at]};  // may be < 0
        };
        const std::int64_t send = span_of(g.pattern.send_offsets, i);
        const std::int64_t recv = span_of(g.pattern.recv_offsets, i);
        STRATA_CHECK(send == sends_to[static_cast<std::size_t>(p)], path, ": sends ", send,
                     " rows to part ", p, ", partition.json says ",
                     sends_to[static_cast<std::size_t>(p)]);
        listed += send > 0 ? 1 : 0;
        std::int64_t peer_sends = 0;
        for (const auto& [q, rows] : report.parts[static_cast<std::size_t>(p)].send) {
            peer_sends = q == rank ? rows : peer_sends;
        }
        STRATA_CHECK(recv == peer_sends, path, ": receives ", recv, " rows from part ", p,
                     " but part ", p, " sends ", peer_sends, " (partition.json)");
        for (index_t j = g.pattern.recv_offsets[i]; j < g.pattern.recv_offsets[i + 1]; ++j) {
            const global_id gid = halo_global[static_cast<std::size_t>(j)];
            const global_id lo = report.part_offsets[static_cast<std::size_t>(p)];
            const global_id hi = report.part_offsets[static_cast<std::size_t>(p) + 1];
            STRATA_CHECK(gid >= lo && gid < hi, path, ": /halo/global_ids[", j, "] = ", gid,
                         " is not owned by peer ", p, " ([", lo, ", ", hi, "))");
        }
    }
    std::size_t nonzero_sends = 0;
    for (const auto& entry : stats.send) {
        nonzero_sends += entry.second > 0 ? 1 : 0;
    }
    STRATA_CHECK(listed == nonzero_sends, path, ": sends to ", listed,
                 " peers, partition.json lists ", nonzero_sends);

    // Adjacency: split the local-column CSR into the inner block and one block per peer.
    const std::vector<std::int64_t> row_ptr =
        read_vector<std::int64_t>(file, "/adjacency/row_ptr", owned + 1);
    STRATA_CHECK(row_ptr.front() == 0, path, ": /adjacency/row_ptr[0] = ", row_ptr.front());
    for (std::size_t r = 0; r < n; ++r) {
        STRATA_CHECK(row_ptr[r] <= row_ptr[r + 1], path,
                     ": /adjacency/row_ptr: not monotone at index ", r, " (", row_ptr[r], " > ",
                     row_ptr[r + 1], ")");
    }
    const std::int64_t nnz = row_ptr.back();
    STRATA_CHECK(nnz == stats.edges, path, ": ", nnz, " adjacency entries, partition.json says ",
                 stats.edges);
    const std::vector<std::int32_t> col_idx =
        read_vector<std::int32_t>(file, "/adjacency/col_idx", nnz);
    const std::vector<float> values = read_vector<float>(file, "/adjacency/values", nnz);
    const std::int64_t num_cols = owned + stats.halo;
    for (std::size_t e = 0; e < col_idx.size(); ++e) {
        const std::int64_t c = col_idx[e];
        STRATA_CHECK(c >= 0 && c < num_cols, path, ": /adjacency/col_idx[", e, "] = ", c,
                     " outside [0, ", num_cols, ")");
        STRATA_CHECK(std::isfinite(values[e]), path, ": /adjacency/values[", e, "] is not finite");
    }
    LocalBlocks blocks = split_local_rows(g.num_owned, g.pattern.recv_offsets, row_ptr,
                                          col_idx.data(), values.data(), {});
    g.inner = std::move(blocks.inner);
    g.halo = std::move(blocks.halo);
    g.boundary_rows = std::move(blocks.boundary_rows);
    g.interior_rows = std::move(blocks.interior_rows);
    validate_local_graph(g, path);

    // Vertex data.
    const H5Shape shape = file.shape("/node/features");
    STRATA_CHECK(shape.size() == 2, path, ": /node/features: expected rank 2, found rank ",
                 shape.size());
    STRATA_CHECK(shape[0] == owned && shape[1] == report.num_features, path,
                 ": /node/features has shape [", shape[0], ", ", shape[1], "], expected [", owned,
                 ", ", report.num_features, "]");
    // Only the columns kept (the grid's layout C): column-blocked chunks (format 4) decompress
    // only those (docs/partition-format.md).
    const ColumnBlock columns = column_block(shape[1], options.features);
    if (owned > 0 && columns.count > 0) {
        part.features.values =
            file.read_block<float>("/node/features", {0, columns.first}, {owned, columns.count});
    }
    part.features.rows = g.num_owned;
    part.features.cols = static_cast<index_t>(columns.count);
    for (std::size_t i = 0; i < part.features.values.size(); ++i) {
        STRATA_CHECK(std::isfinite(part.features.values[i]), path,
                     ": /node/features: non-finite value at row ",
                     i / static_cast<std::size_t>(std::max<index_t>(part.features.cols, 1)));
    }
    const std::vector<std::int64_t> labels = read_vector<std::int64_t>(file, "/node/labels", owned);
    part.labels.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        STRATA_CHECK(labels[i] >= -1 && labels[i] < report.num_classes, path, ": /node/labels[", i,
                     "] = ", labels[i], " outside [-1, ", report.num_classes, ")");
        part.labels[i] = static_cast<index_t>(labels[i]);
    }
    // Masks [S, n]: S splits, the same S for all three.
    std::int64_t splits = 0;
    for (auto [name, mask] : {std::pair{"/node/train_mask", &part.train_mask},
                              std::pair{"/node/val_mask", &part.val_mask},
                              std::pair{"/node/test_mask", &part.test_mask}}) {
        H5Shape mask_shape;
        *mask = file.read<std::uint8_t>(name, &mask_shape, 2);
        STRATA_CHECK(
            mask_shape[1] == owned && mask_shape[0] >= 1 &&
                mask_shape[0] <= std::numeric_limits<int>::max() &&
                (splits == 0 || mask_shape[0] == splits),
            path, ": ", name, " has shape [", mask_shape[0], ", ", mask_shape[1],
            "], expected [S, ", owned, "] with S >= 1",
            splits == 0 ? "" : " (S = " + std::to_string(splits) + " as /node/train_mask)");
        splits = mask_shape[0];
        for (std::size_t i = 0; i < mask->size(); ++i) {
            STRATA_CHECK((*mask)[i] <= 1, path, ": ", name, "[", i / std::max<std::size_t>(n, 1),
                         ", ", i % std::max<std::size_t>(n, 1), "] = ", int{(*mask)[i]},
                         ", expected 0 or 1");
        }
    }
    // The chunk map: every row's chunk in range, chunk sizes as partition.json says.
    if (report.chunks_per_part > 0) {
        part.chunk = read_vector<std::int32_t>(file, "/owned/chunk", owned);
        std::vector<global_id> sizes(static_cast<std::size_t>(report.chunks_per_part), 0);
        for (std::size_t i = 0; i < n; ++i) {
            const std::int32_t c = part.chunk[i];
            STRATA_CHECK(c >= 0 && c < report.chunks_per_part, path, ": /owned/chunk[", i,
                         "] = ", c, " outside [0, ", report.chunks_per_part, ")");
            ++sizes[static_cast<std::size_t>(c)];
        }
        STRATA_CHECK(sizes == report.chunk_sizes[static_cast<std::size_t>(rank)], path,
                     ": /owned/chunk's chunk sizes differ from partition.json's chunks.sizes[",
                     rank, "]");
    }
    part.num_splits = static_cast<int>(splits);
    part.num_classes = report.num_classes;
    part.global_train = report.global_train;
    part.global_val = report.global_val;
    part.global_test = report.global_test;
    if (options.bytes_read != nullptr) {
        *options.bytes_read = file.bytes_read();
    }
    return part;
}

PartitionReport read_partition_report(const std::string& dir) {
    const fs::path path = fs::path(dir) / "partition.json";
    std::error_code ec;
    STRATA_CHECK(fs::is_directory(dir, ec), dir, ": not a directory");
    STRATA_CHECK(fs::exists(path, ec), dir,
                 ": not a partition directory (no partition.json; make one with strata partition)");
    std::ifstream in(path);
    STRATA_CHECK(in.good(), path.string(), ": cannot open for reading");
    std::stringstream text;
    text << in.rdbuf();
    return report_from_json(text.str(), path.string());
}

}  // namespace strata
