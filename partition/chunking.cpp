// chunk_partition (METIS into oversplit*C parts, merged at random), reorder_into_chunks (one
// stable counting sort applied to everything row-indexed) and load_chunked_part.
#include "partition/chunking.hpp"

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <utility>

#include "datasets/adjacency.hpp"
#include "partition/distributed_load.hpp"
#include "partition/metis_partitioner.hpp"
#include "src/base/error.hpp"

namespace strata {
namespace {

/// Gives every empty chunk the last vertex of the (then) largest chunk, lowest chunk id on ties.
/// With C <= N some chunk holds >= 2 vertices while one is empty, so no chunk is emptied.
void fill_empty_chunks(Partition& chunks) {
    std::vector<global_id> size(static_cast<std::size_t>(chunks.num_parts), 0);
    for (int c : chunks.owner) {
        ++size[static_cast<std::size_t>(c)];
    }
    for (std::size_t c = 0; c < size.size(); ++c) {
        if (size[c] != 0) {
            continue;
        }
        const auto largest =
            static_cast<std::size_t>(std::max_element(size.begin(), size.end()) - size.begin());
        STRATA_CHECK(size[largest] >= 2, "chunks: cannot fill empty chunk ", c, " (", size.size(),
                     " chunks for ", chunks.owner.size(), " vertices)");
        std::size_t v = chunks.owner.size() - 1;
        while (static_cast<std::size_t>(chunks.owner[v]) != largest) {
            --v;
        }
        chunks.owner[v] = static_cast<int>(c);
        --size[largest];
        ++size[c];
    }
}

/// out[new row] = in[original row], for rows of `width` consecutive elements.
template <typename T>
std::vector<T> gather_rows(const std::vector<T>& in, const std::vector<global_id>& original,
                           std::size_t width) {
    std::vector<T> out(in.size());
    for (std::size_t r = 0; r < original.size(); ++r) {
        const auto from = static_cast<std::size_t>(original[r]) * width;
        std::copy_n(in.begin() + static_cast<std::ptrdiff_t>(from), width,
                    out.begin() + static_cast<std::ptrdiff_t>(r * width));
    }
    return out;
}

/// Every split of a split-major S x n mask, rows permuted.
std::vector<std::uint8_t> gather_mask(const std::vector<std::uint8_t>& mask, int num_splits,
                                      const std::vector<global_id>& original) {
    const std::size_t n = original.size();
    std::vector<std::uint8_t> out(mask.size());
    for (std::size_t s = 0; s < static_cast<std::size_t>(num_splits); ++s) {
        for (std::size_t r = 0; r < n; ++r) {
            out[s * n + r] = mask[s * n + static_cast<std::size_t>(original[r])];
        }
    }
    return out;
}

/// P A Pᵀ of a square CSR: new row r is old row original[r], column c becomes new_id[c], and
/// each row's columns are sorted again (values moved with them).
HostCsr permute_csr(const HostCsr& a, const Renumbering& numbering) {
    const std::vector<global_id>& original = numbering.original;
    const auto n = static_cast<std::size_t>(a.rows);
    HostCsr out;
    out.rows = a.rows;
    out.cols = a.cols;
    out.row_ptr.assign(n + 1, 0);
    for (std::size_t r = 0; r < n; ++r) {
        const auto old = static_cast<std::size_t>(original[r]);
        out.row_ptr[r + 1] = out.row_ptr[r] + a.row_ptr[old + 1] - a.row_ptr[old];
    }
    out.col_idx.resize(a.col_idx.size());
    out.values.resize(a.values.size());
    const auto rows = static_cast<std::int64_t>(n);
#pragma omp parallel
    {
        std::vector<std::pair<index_t, float>> row;
#pragma omp for schedule(dynamic, 1024)
        for (std::int64_t i = 0; i < rows; ++i) {
            const auto r = static_cast<std::size_t>(i);
            const auto old = static_cast<std::size_t>(original[r]);
            row.clear();
            for (auto k = static_cast<std::size_t>(a.row_ptr[old]);
                 k < static_cast<std::size_t>(a.row_ptr[old + 1]); ++k) {
                const auto column = static_cast<std::size_t>(a.col_idx[k]);
                row.emplace_back(static_cast<index_t>(numbering.new_id[column]), a.values[k]);
            }
            std::sort(row.begin(), row.end(),
                      [](const auto& x, const auto& y) { return x.first < y.first; });
            auto slot = static_cast<std::size_t>(out.row_ptr[r]);
            for (const auto& [column, value] : row) {
                out.col_idx[slot] = column;
                out.values[slot] = value;
                ++slot;
            }
        }
    }
    return out;
}

}  // namespace

void check_chunk_options(const ChunkOptions& options, global_id num_vertices) {
    STRATA_CHECK(options.chunks >= 1, "--chunks ", options.chunks, ": must be at least 1");
    STRATA_CHECK(options.chunks <= num_vertices, "--chunks ", options.chunks, ": the graph has ",
                 num_vertices, " vertices");
    STRATA_CHECK(options.oversplit >= 1, "chunk oversplit ", options.oversplit,
                 ": must be at least 1");
}

Partition chunk_partition(const GraphDataset& graph, const ChunkOptions& options) {
    const global_id n = graph.num_vertices();
    check_chunk_options(options, n);
    const int c = options.chunks;
    if (c == 1) {
        return partition_block(n, 1);
    }
    const auto per_chunk =
        static_cast<int>(std::min<global_id>(options.oversplit, n / static_cast<global_id>(c)));
    const int num_parts = per_chunk * c;
    const Partition parts = partition_metis(graph, num_parts, MetisOptions{.seed = options.seed});
    // A seeded random assignment of the K part ids to C chunks, K/C each.
    const Partition merge = partition_random(num_parts, c, options.seed);
    Partition chunks{c, std::vector<int>(parts.owner.size())};
    for (std::size_t v = 0; v < parts.owner.size(); ++v) {
        chunks.owner[v] = merge.owner[static_cast<std::size_t>(parts.owner[v])];
    }
    fill_empty_chunks(chunks);
    return chunks;
}

std::vector<index_t> reorder_into_chunks(LocalPart& part, const Partition& chunks) {
    LocalGraph& g = part.graph;
    STRATA_CHECK(g.num_parts == 1 && g.halo.empty() && g.pattern.peers.empty() &&
                     g.num_global_vertices == g.num_owned,
                 "reorder_into_chunks: the part is rank ", g.rank, " of ", g.num_parts,
                 " parts with ", g.halo.size(), " halo blocks and ", g.num_owned, " of ",
                 g.num_global_vertices, " vertices; chunks need the whole graph as one part");
    const auto n = static_cast<std::size_t>(g.num_owned);
    STRATA_CHECK(chunks.owner.size() == n, "reorder_into_chunks: the chunk partition has ",
                 chunks.owner.size(), " owners but the part has ", n, " rows");
    validate_partition(chunks, g.num_global_vertices, "chunks");
    STRATA_CHECK(g.owned_original.size() == n && g.owned_degree.size() == n &&
                     part.labels.size() == n && static_cast<std::size_t>(part.features.rows) == n,
                 "reorder_into_chunks: row data sizes disagree with ", n, " rows");
    // Chunk of every current row (owners are indexed by original id), then one stable sort.
    Partition row_chunks{chunks.num_parts, std::vector<int>(n)};
    for (std::size_t i = 0; i < n; ++i) {
        const global_id v = g.owned_original[i];
        STRATA_CHECK(v >= 0 && v < g.num_global_vertices, "reorder_into_chunks: row ", i,
                     " has original id ", v, " outside [0, ", g.num_global_vertices, ")");
        row_chunks.owner[i] = chunks.owner[static_cast<std::size_t>(v)];
    }
    const Renumbering numbering = renumber(row_chunks);
    const std::vector<global_id>& original = numbering.original;

    g.inner = permute_csr(g.inner, numbering);
    g.owned_original = gather_rows(g.owned_original, original, 1);
    g.owned_degree = gather_rows(g.owned_degree, original, 1);
    g.boundary_rows.clear();
    g.interior_rows.resize(n);
    std::iota(g.interior_rows.begin(), g.interior_rows.end(), index_t{0});
    part.features.values =
        gather_rows(part.features.values, original, static_cast<std::size_t>(part.features.cols));
    part.labels = gather_rows(part.labels, original, 1);
    part.train_mask = gather_mask(part.train_mask, part.num_splits, original);
    part.val_mask = gather_mask(part.val_mask, part.num_splits, original);
    part.test_mask = gather_mask(part.test_mask, part.num_splits, original);

    std::vector<index_t> offsets(numbering.part_offsets.size());
    std::transform(numbering.part_offsets.begin(), numbering.part_offsets.end(), offsets.begin(),
                   [](global_id offset) { return static_cast<index_t>(offset); });
    return offsets;
}

ChunkedPart load_chunked_part(const std::string& path, Communicator& comm,
                              const ChunkOptions& options, int split_index) {
    STRATA_CHECK(!std::filesystem::is_directory(path), path,
                 ": --parallel pipeline reads a graph .h5 file (every stage holds the whole "
                 "graph); a partition directory is for --parallel graph");
    const GraphDataset graph = read_whole_graph(path, split_index);
    const global_id n = graph.num_vertices();
    check_chunk_options(options, n);  // on every rank, so that no rank waits in the broadcast
    const GlobalCsr adjacency = adjacency_matrix(graph);
    Partition chunks{options.chunks, std::vector<int>(static_cast<std::size_t>(n), 0)};
    if (comm.rank() == 0) {
        chunks = chunk_partition(graph, options);
    }
    broadcast_owners(chunks, comm);
    ChunkedPart chunked;
    chunked.part = build_local_part(graph, adjacency, partition_block(n, 1), 0);
    chunked.chunk_offsets = reorder_into_chunks(chunked.part, chunks);
    // Every rank holds the whole graph: its own counts are the global ones (no sum over comm).
    select_split_locally(chunked.part, split_index, path);
    return chunked;
}

}  // namespace strata
