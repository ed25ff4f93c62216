// chunk_partition (METIS into oversplit*C parts, merged at random), reorder_into_chunks (one
// stable counting sort applied to everything row-indexed) and load_chunked_part.
#include "partition/chunking.hpp"

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <utility>

#include "datasets/adjacency.hpp"
#include "partition/distributed_load.hpp"
#include "partition/local_order.hpp"
#include "partition/metis_partitioner.hpp"
#include "partition/partition_report.hpp"
#include "partition/whole_partition.hpp"
#include "src/base/error.hpp"
#include "src/comm/run_alone.hpp"

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

/// chunk_partition's method on a METIS graph: METIS into m*C parts, merged m-to-1 at random.
Partition chunk_metis_graph(const MetisGraph& graph, const ChunkOptions& options) {
    const global_id n = graph.num_vertices();
    const int c = options.chunks;
    if (c == 1) {
        return partition_block(n, 1);
    }
    const auto per_chunk =
        static_cast<int>(std::min<global_id>(options.oversplit, n / static_cast<global_id>(c)));
    const int num_parts = per_chunk * c;
    const Partition parts = partition_metis(graph, num_parts, options.seed);
    // A seeded random assignment of the K part ids to C chunks, K/C each.
    const Partition merge = partition_random(num_parts, c, options.seed);
    Partition chunks{c, std::vector<int>(parts.owner.size())};
    for (std::size_t v = 0; v < parts.owner.size(); ++v) {
        chunks.owner[v] = merge.owner[static_cast<std::size_t>(parts.owner[v])];
    }
    fill_empty_chunks(chunks);
    return chunks;
}

/// The subgraph of `graph` induced by `vertices` (ascending), vertex weights 1.
MetisGraph induced_subgraph(const MetisGraph& graph, const std::vector<global_id>& vertices,
                            std::vector<std::int32_t>& local) {
    MetisGraph sub;
    sub.constraints = {"vertices"};
    sub.xadj.assign(1, 0);
    for (std::size_t i = 0; i < vertices.size(); ++i) {
        local[static_cast<std::size_t>(vertices[i])] = static_cast<std::int32_t>(i);
    }
    for (global_id v : vertices) {
        const auto row = static_cast<std::size_t>(v);
        for (auto e = static_cast<std::size_t>(graph.xadj[row]);
             e < static_cast<std::size_t>(graph.xadj[row + 1]); ++e) {
            const std::int32_t u = local[static_cast<std::size_t>(graph.adjncy[e])];
            if (u >= 0) {
                sub.adjncy.push_back(u);
            }
        }
        sub.xadj.push_back(static_cast<std::int32_t>(sub.adjncy.size()));
    }
    sub.vwgt.assign(vertices.size(), 1);
    for (global_id v : vertices) {
        local[static_cast<std::size_t>(v)] = -1;
    }
    return sub;
}

}  // namespace

void check_chunk_options(const ChunkOptions& options, global_id num_vertices) {
    STRATA_CHECK_OPTION(options.chunks >= 1, "chunks", options.chunks, "must be at least 1");
    STRATA_CHECK_OPTION(options.chunks <= num_vertices, "chunks", options.chunks,
                        "the graph has only ", num_vertices, " vertices");
    STRATA_CHECK(options.oversplit >= 1, "chunk oversplit ", options.oversplit,
                 ": must be at least 1");
}

Partition chunk_partition(const GraphView& graph, const ChunkOptions& options) {
    check_chunk_options(options, graph.num_vertices());
    if (options.chunks == 1) {
        return partition_block(graph.num_vertices(), 1);
    }
    return chunk_metis_graph(build_metis_graph(graph, MetisOptions{.seed = options.seed}), options);
}

Partition chunk_within_parts(const GraphView& graph, const Partition& parts,
                             const ChunkOptions& options) {
    const global_id n = graph.num_vertices();
    validate_partition(parts, n, "chunks: parts");
    const int k = parts.num_parts;
    check_chunk_options(options, n);
    STRATA_CHECK(options.chunks % k == 0, "--chunks ", options.chunks, " with --parts ", k,
                 ": every part needs the same number of chunks (a multiple of ", k, ")");
    const int per_part = options.chunks / k;
    std::vector<std::vector<global_id>> members(static_cast<std::size_t>(k));
    for (global_id v = 0; v < n; ++v) {
        members[static_cast<std::size_t>(parts.owner[static_cast<std::size_t>(v)])].push_back(v);
    }
    for (int p = 0; p < k; ++p) {
        const auto size = static_cast<global_id>(members[static_cast<std::size_t>(p)].size());
        STRATA_CHECK(size >= per_part, "--chunks ", options.chunks, " with --parts ", k, ": part ",
                     p, " has ", size, " vertices, fewer than its ", per_part, " chunks");
    }
    const MetisGraph whole = build_metis_graph(graph, MetisOptions{.seed = options.seed});
    Partition chunks{options.chunks, std::vector<int>(static_cast<std::size_t>(n), 0)};
    std::vector<std::int32_t> local(static_cast<std::size_t>(n), -1);
    for (int p = 0; p < k; ++p) {
        const std::vector<global_id>& vertices = members[static_cast<std::size_t>(p)];
        const MetisGraph sub = induced_subgraph(whole, vertices, local);
        ChunkOptions part_options = options;
        part_options.chunks = per_part;
        part_options.seed = (options.seed + static_cast<std::uint64_t>(p)) & 0x7fffffffULL;
        const Partition part_chunks = chunk_metis_graph(sub, part_options);
        for (std::size_t i = 0; i < vertices.size(); ++i) {
            chunks.owner[static_cast<std::size_t>(vertices[i])] =
                p * per_part + part_chunks.owner[i];
        }
    }
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
    const std::vector<index_t> order(numbering.original.begin(), numbering.original.end());
    reorder_rows(part, order);
    g.boundary_rows.clear();
    g.interior_rows.resize(n);
    std::iota(g.interior_rows.begin(), g.interior_rows.end(), index_t{0});

    std::vector<index_t> offsets(numbering.part_offsets.size());
    std::transform(numbering.part_offsets.begin(), numbering.part_offsets.end(), offsets.begin(),
                   [](global_id offset) { return static_cast<index_t>(offset); });
    return offsets;
}

ChunkedPart load_chunked_part(const std::string& path, Communicator& comm,
                              const ChunkOptions& options, int split_index) {
    ChunkedPart chunked;
    if (std::filesystem::is_directory(path)) {
        // Every rank reads every part: the stored chunk map needs no broadcast.
        const PartitionReport report = read_partition_report(path);
        const int stored = report.chunks_per_part * report.num_parts;
        STRATA_CHECK(stored > 0, path,
                     ": no chunk map for the layer pipeline (parallel = pipeline): make one with "
                     "'strata partition --data ",
                     report.info.source_path.empty() ? "GRAPH.h5" : report.info.source_path,
                     " --parts ", report.num_parts,
                     " --chunks C --out DIR', or pass the graph .h5");
        STRATA_CHECK_OPTION(options.chunks == 0 || options.chunks == stored, "chunks",
                            options.chunks, path, " has ", stored, " chunks (",
                            report.chunks_per_part, " per part)");
        const WholePartition whole = read_whole_partition(path);
        chunked.part = build_local_part(whole.graph, whole.adjacency,
                                        partition_block(report.num_vertices, 1), 0);
        chunked.chunk_offsets = reorder_into_chunks(chunked.part, whole.chunks);
    } else {
        const GraphDataset graph = read_whole_graph(path, split_index);
        const global_id n = graph.num_vertices();
        check_chunk_options(options, n);  // on every rank, so that no rank waits in the broadcast
        const GlobalCsr adjacency = adjacency_matrix(graph);
        Partition chunks{options.chunks, std::vector<int>(static_cast<std::size_t>(n), 0)};
        run_alone(comm, 0, "the chunk partition (METIS)",
                  [&] { chunks = chunk_partition(graph, options); });
        broadcast_owners(chunks, comm);
        chunked.part = build_local_part(graph, adjacency, partition_block(n, 1), 0);
        chunked.chunk_offsets = reorder_into_chunks(chunked.part, chunks);
    }
    // Every rank holds the whole graph: its own counts are the global ones (no sum over comm).
    select_split_locally(chunked.part, split_index, path);
    return chunked;
}

}  // namespace strata
