// PartitionReport: what `strata partition` measured (per-part sizes, halo and exchange counts,
// edge cut, imbalance, phase times and memory) — printed as a table, stored as partition.json.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "partition/local_graph.hpp"

namespace strata {

/// One phase of the partitioning pipeline (read, metis, normalize, build, write).
struct PhaseStat {
    std::string name;
    double seconds = 0.0;
    std::int64_t peak_rss_bytes = 0;  ///< process peak RSS at the end of the phase
};

/// What the caller of write_partition knows about the run (the writer adds the rest).
struct PartitionInfo {
    std::string source_path;      ///< dataset file the partition was made from ("" if none)
    std::string source_checksum;  ///< source_identity(): "content64:..." or "crc32:...", "" if none
    std::string method;           ///< metis | random | block
    std::uint64_t seed = 0;
    std::vector<std::string> balance;  ///< METIS constraints actually used (empty otherwise)
    std::int64_t metis_edgecut = -1;   ///< METIS's objective (undirected edges cut); -1 if n/a
    std::vector<PhaseStat> phases;     ///< phases before writing; write_partition appends its own
    bool progress = false;             ///< print progress lines while building and writing
};

/// Per-part counts for one forward exchange of one layer (rows = vertices' feature rows).
struct PartStats {
    global_id first_owned = 0;
    global_id num_owned = 0;
    std::int64_t edges = 0;          ///< nnz of the part's rows of A (inner + halo blocks)
    std::int64_t halo_edges = 0;     ///< of which in halo blocks (column owned elsewhere)
    std::int64_t halo = 0;           ///< halo vertices = rows received per exchange
    std::int64_t boundary = 0;       ///< owned rows sent to >= 1 peer
    std::int64_t rows_sent = 0;      ///< rows sent per exchange (a row counts once per peer)
    std::int64_t rows_received = 0;  ///< = halo
    std::vector<std::pair<int, std::int64_t>> send;  ///< (peer, rows sent to it), peers ascending
};

/// The whole report; stored as partition.json (docs/partition-format.md).
struct PartitionReport {
    PartitionInfo info;
    std::string partition_id;  ///< 16 hex digits, also stored in every part file
    int num_parts = 0;
    global_id num_vertices = 0;
    std::int64_t num_edges = 0;  ///< stored (directed) edges of the source graph
    std::int64_t nnz = 0;        ///< entries of A (duplicates merged, no diagonal added)
    std::int64_t num_features = 0;
    std::int64_t num_classes = 0;
    std::int64_t global_train = 0;
    std::int64_t global_val = 0;
    std::int64_t global_test = 0;
    std::vector<global_id> part_offsets;  ///< K+1: part r owns new ids [offsets[r], offsets[r+1])
    std::vector<PartStats> parts;
    std::int64_t edge_cut = 0;      ///< A entries whose row and column lie in different parts
    double vertex_imbalance = 1.0;  ///< max owned / average owned
    double edge_imbalance = 1.0;    ///< max edges / average edges
    std::int64_t communication_volume = 0;  ///< Σ halo: rows moved per layer per exchange
    /// The chunk map for --parallel pipeline (`strata partition --chunks C`): every part is cut
    /// into chunks_per_part = C / K chunks (0: no chunk map); chunk_sizes[p][c] = owned rows of
    /// part p in its chunk c (each >= 1, a part's sizes sum to its num_owned). Global chunk id =
    /// p * chunks_per_part + c. The part files hold the chunk of every owned row (/owned/chunk).
    int chunks_per_part = 0;
    std::vector<std::vector<global_id>> chunk_sizes{};
};

/// The statistics of one part, read off its LocalGraph.
[[nodiscard]] PartStats part_stats(const LocalGraph& graph);

/// Fills edge_cut, imbalances and communication_volume from `parts`.
void summarize(PartitionReport& report);

/// partition.json text (pretty-printed JSON, format "partition", partition_format_version).
[[nodiscard]] std::string report_to_json(const PartitionReport& report);

/// Parses partition.json; checks the format name and version (another version: the
/// unsupported_version_message with the directory `what` lies in) and the fields read_part
/// relies on. Throws strata::Error whose message starts with `what` (the file path).
[[nodiscard]] PartitionReport report_from_json(const std::string& text, const std::string& what);

/// "FILE: partition format version 1 is not supported (this strata reads versions 2 to 4):
/// re-partition with 'strata partition --data SOURCE --parts K --out DIR --force'" (GRAPH.h5 for
/// an empty source, K for num_parts < 1).
[[nodiscard]] std::string unsupported_version_message(const std::string& file, std::int64_t version,
                                                      const std::string& source,
                                                      std::int64_t num_parts,
                                                      const std::string& dir);

/// The human-readable report: one row per part, the summary and the phases.
[[nodiscard]] std::string format_report(const PartitionReport& report);

/// "crc32:xxxxxxxx" of the file's bytes (zlib crc32). Throws strata::Error naming the file if it
/// cannot be read.
[[nodiscard]] std::string file_checksum(const std::string& path);

/// Identity of a graph file's data: its stored content id ("content64:...", format version 3,
/// read without reading any array) or, for a version 1 or 2 file, file_checksum(path) (reads
/// the whole file). Throws strata::Error naming the file if it cannot be read.
[[nodiscard]] std::string source_identity(const std::string& path);

}  // namespace strata
