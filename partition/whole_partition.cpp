// read_whole_partition: every part's rows of A back in original ids, vertex data scattered to
// original order.
#include "partition/whole_partition.hpp"

#include <algorithm>

#include "partition/local_part.hpp"
#include "partition/partition_report.hpp"
#include "src/base/error.hpp"
#include "src/base/release.hpp"

namespace strata {

WholePartition read_whole_partition(const std::string& dir) {
    const PartitionReport report = read_partition_report(dir);
    const int k = report.num_parts;
    const auto n = static_cast<std::size_t>(report.num_vertices);
    WholePartition whole;
    GraphDataset& graph = whole.graph;
    graph.num_classes = report.num_classes;
    graph.features.rows = report.num_vertices;
    graph.features.cols = static_cast<index_t>(report.num_features);
    graph.features.values.resize(n * static_cast<std::size_t>(report.num_features));
    graph.labels.assign(n, -1);
    whole.parts = Partition{k, std::vector<int>(n, -1)};
    if (report.chunks_per_part > 0) {
        whole.chunks = Partition{report.chunks_per_part * k, std::vector<int>(n, 0)};
    }
    // Rows of A by original id, filled part by part (columns in original ids, sorted).
    std::vector<std::vector<std::int64_t>> columns(n);
    std::vector<std::vector<float>> values(n);
    for (int p = 0; p < k; ++p) {
        const LocalPart part = read_part(dir, p, k);
        const LocalGraph& g = part.graph;
        const auto owned = static_cast<std::size_t>(g.num_owned);
        if (p == 0) {
            graph.num_splits = part.num_splits;
            for (auto* mask : {&graph.train_mask, &graph.val_mask, &graph.test_mask}) {
                mask->assign(static_cast<std::size_t>(part.num_splits) * n, 0);
            }
        }
        STRATA_CHECK(part.num_splits == graph.num_splits, dir, ": part ", p, " has ",
                     part.num_splits, " splits, part 0 has ", graph.num_splits);
        const auto features = static_cast<std::size_t>(graph.features.cols);
        std::vector<std::size_t> halo_cursor(g.halo.size(), 0);
        for (std::size_t i = 0; i < owned; ++i) {
            const auto v = static_cast<std::size_t>(g.owned_original[i]);
            STRATA_CHECK(whole.parts.owner[v] == -1, dir, ": vertex ", v, " is owned by parts ",
                         whole.parts.owner[v], " and ", p);
            whole.parts.owner[v] = p;
            if (!part.chunk.empty()) {
                whole.chunks.owner[v] = p * report.chunks_per_part + part.chunk[i];
            }
            std::copy_n(part.features.values.begin() + static_cast<std::ptrdiff_t>(i * features),
                        features,
                        graph.features.values.begin() + static_cast<std::ptrdiff_t>(v * features));
            graph.labels[v] = part.labels[i];
            for (std::size_t s = 0; s < static_cast<std::size_t>(part.num_splits); ++s) {
                graph.train_mask[s * n + v] = part.train_mask[s * owned + i];
                graph.val_mask[s * n + v] = part.val_mask[s * owned + i];
                graph.test_mask[s * n + v] = part.test_mask[s * owned + i];
            }
            // Row i of A: the inner block's columns are owned rows, each halo block's are the
            // received rows of its peer (halo_original, peer after peer).
            std::vector<std::pair<std::int64_t, float>> row;
            for (index_t e = g.inner.row_ptr[i]; e < g.inner.row_ptr[i + 1]; ++e) {
                row.emplace_back(g.owned_original[static_cast<std::size_t>(
                                     g.inner.col_idx[static_cast<std::size_t>(e)])],
                                 g.inner.values[static_cast<std::size_t>(e)]);
            }
            for (std::size_t b = 0; b < g.halo.size(); ++b) {
                const HostDcsr& block = g.halo[b];
                const auto base = static_cast<std::size_t>(g.pattern.recv_offsets[b]);
                std::size_t& r = halo_cursor[b];  // the block's listed rows come in row order
                if (r == block.row_ids.size() || block.row_ids[r] != static_cast<index_t>(i)) {
                    continue;
                }
                for (index_t e = block.block.row_ptr[r]; e < block.block.row_ptr[r + 1]; ++e) {
                    row.emplace_back(
                        g.halo_original[base +
                                        static_cast<std::size_t>(
                                            block.block.col_idx[static_cast<std::size_t>(e)])],
                        block.block.values[static_cast<std::size_t>(e)]);
                }
                ++r;
            }
            std::sort(row.begin(), row.end());
            for (const auto& [column, value] : row) {
                columns[v].push_back(column);
                values[v].push_back(value);
            }
        }
    }
    for (std::size_t v = 0; v < n; ++v) {
        STRATA_CHECK(whole.parts.owner[v] != -1, dir, ": vertex ", v, " is owned by no part");
    }
    GlobalCsr& a = whole.adjacency;
    a.indptr.assign(n + 1, 0);
    for (std::size_t v = 0; v < n; ++v) {
        a.indptr[v + 1] = a.indptr[v] + static_cast<std::int64_t>(columns[v].size());
        a.indices.insert(a.indices.end(), columns[v].begin(), columns[v].end());
        a.values.insert(a.values.end(), values[v].begin(), values[v].end());
        release(columns[v]);
        release(values[v]);
    }
    graph.indptr = a.indptr;
    graph.indices = a.indices;
    graph.edge_weight = a.values;
    return whole;
}

}  // namespace strata
