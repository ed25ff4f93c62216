// PartitionStats: what the planner needs of a graph cut into K parts — per rank the owned rows,
// the entries of the model's operator (inner and halo blocks), the rows it sends and receives per
// exchange, its peers and the bytes its upload takes (TrainingInputs::plan, the executor's own
// arithmetic) — from a real METIS run, and what the load adds to rank 0 (measure_load_bytes),
// cached as JSON (format "strata-partition-stats", version 3; older files are measured again)
// in a cache directory keyed by the graph's identity, K, the normalization and seed.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "datasets/graph_dataset.hpp"
#include "planner/way_stats.hpp"
#include "src/base/types.hpp"
#include "src/nn/graph_operator.hpp"
#include "src/tensor/host_csr.hpp"

namespace strata::planner {

struct RankStats {
    std::int64_t owned = 0;
    std::int64_t inner_nnz = 0;  ///< entries of the operator with an owned column
    std::int64_t halo_nnz = 0;   ///< entries with a peer's column
    std::int64_t send_rows = 0;  ///< rows packed per forward exchange (a row once per peer)
    std::int64_t recv_rows = 0;  ///< halo rows received per forward exchange
    int peers = 0;
    std::int64_t input_bytes = 0;  ///< the upload's plan (graph blocks, features, labels, masks)
    std::int64_t feature_nnz = 0;  ///< non-zeros of the rank's features
    /// input_bytes with the features uploaded sparse (CSR, layers/sparse_features.hpp).
    std::int64_t sparse_input_bytes = 0;
    /// The inner block's locality: inner_near[b] is the share of its entries (i, j) with
    /// |i - j| < 2^b in the executor's local order, b = 0..31 (cumulative, empty = unknown).
    /// An SpMM gathering row j for row i finds it in cache when j is among the rows the
    /// neighbouring rows just gathered (cost_model.cpp).
    std::vector<double> inner_near{};
};

/// RankStats::inner_near of `a` (square, local ids): 32 cumulative shares.
[[nodiscard]] std::vector<double> near_shares(const HostCsr& a);

struct PartitionStats {
    /// 3 added RankStats::inner_near; 2 the sparse-feature figures and the per-rank load.
    static constexpr int format_version = 3;
    std::string identity;  ///< the graph's content id (or checksum)
    int parts = 1;
    Normalization normalization = Normalization::symmetric;
    std::uint64_t seed = 0;
    global_id vertices = 0;
    std::int64_t nnz = 0;  ///< entries of A
    std::int64_t features = 0;
    std::int64_t classes = 0;
    std::vector<RankStats> ranks;
    double partition_s = 0.0;  ///< METIS and building the parts, here
    /// What loading the graph .h5 adds to rank 0 of `strata train --data G.h5` above its
    /// baseline, before its part is built (measure_load_bytes; 0 for a partition directory).
    /// Version 1 stored this process's absolute peak after the old whole-graph load instead.
    std::int64_t load_bytes = 0;
    /// Not partitioned: scaled from smaller K (halo rows by a power law fitted to them);
    /// relative half-width of the error band of the halo terms.
    bool extrapolated = false;
    double error_band = 0.0;
};

/// Non-zeros / entries of the features over all ranks (1 without features).
[[nodiscard]] double feature_density(const PartitionStats& stats);

/// Σ over ranks of send rows: rows moved per exchange (each is received once).
[[nodiscard]] std::int64_t total_send_rows(const PartitionStats& stats);

/// Partitions `graph` into `parts` with METIS (seed `seed`, as strata train's in-memory load)
/// and measures every part under `normalization`.
[[nodiscard]] PartitionStats measure_partition(const GraphDataset& graph,
                                               const std::string& identity, int parts,
                                               Normalization normalization, std::uint64_t seed);

/// Scales measured statistics (ascending parts, >= 1 entry; two or more to fit the halo power
/// law) to `parts` ranks: owned rows and entries divided evenly, halo rows per rank by the fit.
[[nodiscard]] PartitionStats extrapolate_partition(const std::vector<PartitionStats>& measured,
                                                   int parts);

[[nodiscard]] std::string to_json(const PartitionStats& stats);
[[nodiscard]] PartitionStats partition_stats_from_json(const std::string& text,
                                                       const std::string& what);

/// The statistics of `data` (a graph .h5, or a partition directory: its graph reassembled) cut
/// into `parts`: read from `cache_dir` when cached, else measured (the graph read once, by
/// `load`, on first need) and written there. `cache_dir` must not be the data's directory.
class PartitionStatsCache {
public:
    PartitionStatsCache(std::string data, std::string cache_dir, std::uint64_t seed);
    [[nodiscard]] PartitionStats get(int parts, Normalization normalization);
    /// The graph's identity (content id; read without the arrays for a format-3 file).
    [[nodiscard]] const std::string& identity() const { return identity_; }
    /// Where `parts` would be cached.
    [[nodiscard]] std::string path_for(int parts, Normalization normalization) const;
    /// The hybrid pipeline's mirror lists of `chunks` chunks over `ways` ways
    /// (planner/way_stats.hpp): the graph's chunks as strata train makes them from a graph .h5
    /// with this cache's seed (for a partition directory, from its reassembled graph, though a
    /// run would read the directory's own chunk map). Measured once per (chunks, ways) in this
    /// process, the chunked structure of the latest chunk count kept; not written to disk.
    [[nodiscard]] WayStats way_stats(int chunks, int ways);

private:
    const GraphDataset& graph();
    std::map<std::pair<int, int>, WayStats> way_stats_;
    std::optional<ChunkedStructure> chunked_;  ///< of chunked_count_ chunks
    int chunked_count_ = 0;
    std::string data_;
    std::string cache_dir_;
    std::uint64_t seed_;
    std::string identity_;
    std::optional<GraphDataset> graph_;
};

}  // namespace strata::planner
