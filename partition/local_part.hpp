// LocalPart: a rank's LocalGraph plus its rows of features, labels and masks; building it in
// memory, writing a whole partition directory, and reading one rank's part file back.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "datasets/graph_dataset.hpp"
#include "datasets/graph_slice_io.hpp"
#include "partition/local_graph.hpp"
#include "partition/partition.hpp"
#include "partition/partition_report.hpp"
#include "src/comm/communicator.hpp"
#include "src/tensor/host_matrix.hpp"

namespace strata {

/// Rank `graph.rank`'s share of a dataset; rows in local order (new ids first_owned + i).
/// The masks hold all `num_splits` splits of the dataset, split-major (local row i is in split
/// s's training set when train_mask[s * num_owned + i] == 1); `split` is the one a run uses
/// (train_split() etc.), and global_train/val/test count that split over all parts.
struct LocalPart {
    LocalGraph graph;
    HostMatrix features;                   ///< num_owned x F
    std::vector<index_t> labels;           ///< num_owned, -1 = unlabeled
    int num_splits = 1;                    ///< S >= 1
    std::vector<std::uint8_t> train_mask;  ///< S x num_owned, 0/1
    std::vector<std::uint8_t> val_mask;
    std::vector<std::uint8_t> test_mask;
    int split = 0;  ///< the selected split, in [0, num_splits)
    std::int64_t num_classes = 0;
    std::int64_t global_train = 0;  ///< sizes of the selected split over all parts
    std::int64_t global_val = 0;
    std::int64_t global_test = 0;
    /// The chunk of every owned row in [0, chunks per part) when the partition has a chunk map
    /// (`strata partition --chunks`, PartitionReport::chunks_per_part), else empty.
    std::vector<std::int32_t> chunk{};

    /// The selected split's rows of a mask (num_owned entries).
    [[nodiscard]] std::span<const std::uint8_t> split_of(
        const std::vector<std::uint8_t>& mask) const {
        const auto n = static_cast<std::size_t>(graph.num_owned);
        return std::span<const std::uint8_t>(mask).subspan(static_cast<std::size_t>(split) * n, n);
    }
};

/// Makes split `index` the selected one: checks it is in [0, num_splits) (else throws
/// "<what>: --split-index 10 out of range: the file has 10 splits (0..9)") and sets
/// global_train/val/test to its sizes summed over the ranks of `comm` (a collective: every rank
/// calls it with the same index).
void select_split(LocalPart& part, int index, Communicator& comm, const std::string& what);

/// select_split without the sum over ranks: global_train/val/test are this part's own counts
/// (for a part that holds the whole graph on every rank, as in --parallel pipeline).
void select_split_locally(LocalPart& part, int index, const std::string& what);

/// The range check of select_split alone (to fail before expensive work).
void check_split_index(int num_splits, int index, const std::string& what);

/// The part of `rank`: its raw LocalGraph (adjacency = adjacency_matrix(graph)) and its vertex
/// data. O(nnz). Throws strata::Error if shapes disagree or the partition is invalid.
[[nodiscard]] LocalPart build_local_part(const GraphView& graph, const GlobalCsr& adjacency,
                                         const Partition& partition, int rank);

/// The vertex data of `graph_part.rank` (features, labels, all splits' masks, split 0's
/// counts) attached to an already built LocalGraph. `count_splits = false` leaves
/// global_train/val/test at 0 (they take O(N); callers attaching many parts count once).
[[nodiscard]] LocalPart attach_vertex_data(const GraphView& graph, LocalGraph graph_part,
                                           bool count_splits = true);

/// The current part file format (root attribute strata_format_version of part-NNNNN.h5, and
/// strata_format_version of partition.json). Version 2: parts carry the raw adjacency and the
/// degrees (version 1 carried Â's values and is refused with a re-partition command). Masks
/// are [S, num_owned] (S splits). Version 3: an optional chunk map (partition.json "chunks",
/// /owned/chunk in every part); version 2 directories are still read (no chunk map). Version 4:
/// /node/features in column-blocked chunks (feature_column_block columns x rows filling about
/// 1 MiB) instead of chunks of whole rows; versions 2 and 3 are still read (a column slice then
/// decompresses whole rows).
inline constexpr std::int64_t partition_format_version = 4;
/// Columns per chunk of a part file's /node/features (format 4; fewer features: all of them).
/// Small enough that a grid rank's column slice (layout C) decompresses at most 2 x 15 columns
/// beyond its own (products' 100 features over 4 slices: 25 + up to 30); rows fill ~1 MiB, so
/// deflate sees the same chunk size as before and a row range at full width decompresses the
/// same bytes as with whole-row chunks.
inline constexpr std::int64_t feature_column_block = 16;
/// The oldest partition format this build reads.
inline constexpr std::int64_t oldest_partition_format_version = 2;
/// Root attribute strata_format of a part file.
inline constexpr const char* part_format_name = "partition_part";

/// What read_part and load_local_part read of a part's vertex data, and what they report.
struct PartReadOptions {
    FeatureSlice features{};             ///< feature columns kept (all by default)
    std::int64_t* bytes_read = nullptr;  ///< if set: array bytes read from the file(s)
};

/// "part-00003.h5".
[[nodiscard]] std::string part_file_name(int rank);

/// Writes the partition directory `out_dir` (docs/partition-format.md): partition.json and one
/// part-NNNNN.h5 per part, built from one O(nnz) pass (LocalGraphBuilder), one part in memory
/// at a time, from `adjacency` = adjacency_matrix(graph). Everything is written under a temporary
/// name and renamed into place at the end, so on any error nothing is left at `out_dir`. Only
/// graph's vertex data and sizes are read (graph.indices may be empty). `chunks` (optional, owner
/// indexed by original id, C = chunks->num_parts a multiple of K) is the chunk map: every chunk
/// must lie inside one part, part p holding chunks [p C/K, (p+1) C/K), each non-empty; it is
/// stored as partition.json's "chunks" and /owned/chunk. Returns the report stored
/// in partition.json (info.phases plus "build" and "write"). Throws strata::Error if `out_dir`
/// exists and !force, its parent is not a writable directory, shapes disagree, or on any I/O
/// failure.
PartitionReport write_partition(const GraphDataset& graph, const GlobalCsr& adjacency,
                                const Partition& partition, const PartitionInfo& info,
                                const std::string& out_dir, bool force,
                                const Partition* chunks = nullptr);

/// The whole graph's sizes a partition.json records, for a writer that never holds the graph.
struct PartitionTotals {
    std::int64_t num_edges = 0;  ///< stored edges of the dataset
    index_t num_features = 0;
    std::int64_t num_classes = 0;
};

/// write_partition for parts built on several processes (distribute_parts: part p on rank
/// p % P), collective over `comm`: rank 0 creates the temporary directory, every rank writes the
/// part files of its `parts` into it (in parallel), rank 0 gathers each part's statistics, writes
/// partition.json and renames the directory into place. `partition` (every vertex's owner, the
/// same on every rank) gives the part-major renumbering and the partition id. On an error on any
/// rank nothing is left at `out_dir` and the temporary directory is removed before every rank
/// throws (the failing rank with its own message, the others "... failed on another rank").
/// Returns the report (complete on rank 0). The directory must be on a file system every rank
/// sees (as the part files are read back by every rank of a run).
PartitionReport write_partition_parallel(const std::vector<LocalPart>& parts,
                                         const Partition& partition, const PartitionInfo& info,
                                         const PartitionTotals& totals, const std::string& out_dir,
                                         bool force, Communicator& comm);

/// Reads and validates rank `rank`'s part of the partition directory `dir`: partition.json's
/// format and version, num_parts == expected_num_parts, the part file's attributes (format,
/// version, part index, num_parts, partition id equal to partition.json's, owned range), every
/// dataset's type and shape, and every LocalGraph invariant (validate_local_graph), plus the
/// exchange counts against the other parts' in partition.json. Throws strata::Error naming the
/// file and the first bad value.
/// `options.features`: the feature columns kept (column_block: the grid's layout C; all by
/// default), the only ones read from /node/features; `options.bytes_read` (if set) receives the
/// bytes of array data read from the part file (H5File::bytes_read: structure, the feature
/// columns, labels, masks, the chunk map).
[[nodiscard]] LocalPart read_part(const std::string& dir, int rank, int expected_num_parts,
                                  const PartReadOptions& options = {});

/// partition.json of `dir`, parsed and checked (report_from_json).
[[nodiscard]] PartitionReport read_partition_report(const std::string& dir);

}  // namespace strata
