// METIS input: symmetrize the dataset's adjacency into 32-bit CSR with balance weights, and
// write it as a METIS graph file (for gpmetis). No METIS call here (metis_partitioner.cpp).
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <limits>
#include <random>

#include "partition/metis_partitioner.hpp"
#include "src/base/atomic_output.hpp"
#include "src/base/c_file.hpp"
#include "src/base/error.hpp"
#include "src/base/release.hpp"

namespace strata {
namespace {

constexpr std::int64_t idx_max = std::numeric_limits<std::int32_t>::max();

/// SplitMix64's finalizer: a bijective 64-bit mixer.
std::uint64_t mix(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/// The common case of a graph stored symmetric with sorted, duplicate-free rows (what the
/// converters and the generator write): the METIS lists are the rows minus self loops. Returns
/// false, touching nothing, if the graph is not of that kind.
///
/// Symmetry is tested by fingerprint in one streaming pass (an exact test needs a transpose or
/// a binary search per edge, both random access and ~10x slower): with unique rows, every
/// stored edge u -> v adds +h({u,v}) if u < v and -h({u,v}) if u > v, h a salted 64-bit hash.
/// A symmetric graph sums to exactly 0; an asymmetric one sums to a non-empty signed sum of
/// hashes, which is 0 with probability ~2^-64 over the per-run random salt. Either way the
/// output is the same for a symmetric graph, so results stay deterministic.
bool symmetrize_sorted_symmetric(const GraphView& graph, const std::string& what, MetisGraph& out) {
    const global_id n = graph.num_vertices();
    const auto num = static_cast<std::size_t>(n);
    const std::span<const std::int64_t> ptr = graph.indptr;
    const std::span<const std::int64_t> ids = graph.indices;
    const std::uint64_t salt =
        (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
    int ok = 1;
    std::uint64_t fingerprint = 0;
#pragma omp parallel for schedule(dynamic, 4096) reduction(min : ok) reduction(+ : fingerprint)
    for (std::int64_t v = 0; v < n; ++v) {
        const auto row = static_cast<std::size_t>(v);
        int row_ok = 1;
        std::uint64_t sum = 0;
        for (auto k = static_cast<std::size_t>(ptr[row]);
             k < static_cast<std::size_t>(ptr[row + 1]); ++k) {
            const std::int64_t u = ids[k];
            if (k > static_cast<std::size_t>(ptr[row]) && ids[k - 1] >= u) {
                row_ok = 0;
            }
            const auto lo = static_cast<std::uint64_t>(std::min(u, v));
            const auto hi = static_cast<std::uint64_t>(std::max(u, v));
            const std::uint64_t h = mix((lo << 32 | hi) ^ salt);
            sum += u < v ? h : (u > v ? 0 - h : 0);
        }
        ok = std::min(ok, row_ok);
        fingerprint += sum;
    }
    if (ok == 0 || fingerprint != 0) {
        return false;
    }
    out.xadj.assign(num + 1, 0);
    std::int64_t total = 0;
    for (std::size_t v = 0; v < num; ++v) {
        const bool loop = std::binary_search(ids.begin() + ptr[v], ids.begin() + ptr[v + 1],
                                             static_cast<std::int64_t>(v));
        total += ptr[v + 1] - ptr[v] - (loop ? 1 : 0);
        STRATA_CHECK(total < idx_max, what, ": the symmetrized graph has more than ", idx_max,
                     " adjacency entries (reached at vertex ", v,
                     "); Debian's METIS uses 32-bit idx_t and cannot partition it (use "
                     "--method random or block)");
        out.xadj[v + 1] = static_cast<std::int32_t>(total);
    }
    out.adjncy.resize(static_cast<std::size_t>(total));
#pragma omp parallel for schedule(dynamic, 4096)
    for (std::int64_t v = 0; v < n; ++v) {
        const auto row = static_cast<std::size_t>(v);
        auto slot = static_cast<std::size_t>(out.xadj[row]);
        for (auto k = static_cast<std::size_t>(ptr[row]);
             k < static_cast<std::size_t>(ptr[row + 1]); ++k) {
            if (ids[k] != v) {
                out.adjncy[slot++] = static_cast<std::int32_t>(ids[k]);
            }
        }
    }
    return true;
}

/// A + Aᵀ pattern without self loops or duplicates, for any graph: both directions of every
/// stored edge, then sort and deduplicate each list. 2E int32 of scratch.
void symmetrize_general(const GraphView& graph, const std::string& what, MetisGraph& out) {
    const global_id n = graph.num_vertices();
    const auto num = static_cast<std::size_t>(n);
    // Both directions of every non-loop edge, duplicates included: u -> v adds u to v's list
    // and v to u's. Offsets are 64-bit because 2E may exceed 2^31 before deduplication.
    std::vector<std::int64_t> offsets(num + 1, 0);
    for (std::size_t v = 0; v < num; ++v) {
        for (std::int64_t k = graph.indptr[v]; k < graph.indptr[v + 1]; ++k) {
            const auto u = static_cast<std::size_t>(graph.indices[static_cast<std::size_t>(k)]);
            if (u != v) {
                ++offsets[v + 1];
                ++offsets[u + 1];
            }
        }
    }
    for (std::size_t v = 0; v < num; ++v) {
        offsets[v + 1] += offsets[v];
    }
    if (offsets[num] >= idx_max) {
        // 2E does not fit; before allocating it, check the distinct in-neighbours alone (a
        // lower bound of the result, exact for a symmetric graph) so a graph METIS cannot take
        // fails fast and clearly instead of after allocating 8E bytes.
        std::int64_t distinct = 0;
#pragma omp parallel for reduction(+ : distinct) schedule(dynamic, 4096)
        for (std::int64_t v = 0; v < n; ++v) {
            const auto row = static_cast<std::size_t>(v);
            std::vector<std::int64_t> ids(graph.indices.begin() + graph.indptr[row],
                                          graph.indices.begin() + graph.indptr[row + 1]);
            std::sort(ids.begin(), ids.end());
            ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
            distinct += static_cast<std::int64_t>(ids.size()) -
                        (std::binary_search(ids.begin(), ids.end(), v) ? 1 : 0);
        }
        STRATA_CHECK(distinct < idx_max, what, ": the symmetrized graph has at least ", distinct,
                     " adjacency entries; Debian's METIS uses 32-bit idx_t and takes fewer than ",
                     idx_max,
                     " (use --method random or block, or a METIS built with 64-bit idx_t)");
    }
    std::vector<std::int32_t> adjncy(static_cast<std::size_t>(offsets[num]));
    {
        std::vector<std::int64_t> next(offsets.begin(), offsets.end() - 1);
        for (std::size_t v = 0; v < num; ++v) {
            for (std::int64_t k = graph.indptr[v]; k < graph.indptr[v + 1]; ++k) {
                const auto u = static_cast<std::size_t>(graph.indices[static_cast<std::size_t>(k)]);
                if (u != v) {
                    adjncy[static_cast<std::size_t>(next[v]++)] = static_cast<std::int32_t>(u);
                    adjncy[static_cast<std::size_t>(next[u]++)] = static_cast<std::int32_t>(v);
                }
            }
        }
    }
    // Sort and deduplicate each list in place (parallel over rows), then compact.
    std::vector<std::int64_t> unique_count(num, 0);
#pragma omp parallel for schedule(dynamic, 4096)
    for (std::int64_t v = 0; v < n; ++v) {
        const auto row = static_cast<std::size_t>(v);
        auto first = adjncy.begin() + offsets[row];
        auto last = adjncy.begin() + offsets[row + 1];
        std::sort(first, last);
        unique_count[row] = std::unique(first, last) - first;
    }
    out.xadj.assign(num + 1, 0);
    std::int64_t total = 0;
    for (std::size_t v = 0; v < num; ++v) {
        const std::int64_t count = unique_count[v];
        if (total != offsets[v]) {  // move left; ranges may overlap only when equal
            std::copy_n(adjncy.begin() + offsets[v], count, adjncy.begin() + total);
        }
        total += count;
        STRATA_CHECK(total < idx_max, what, ": the symmetrized graph has more than ", idx_max,
                     " adjacency entries (reached at vertex ", v,
                     "); Debian's METIS uses 32-bit idx_t and cannot partition it (use "
                     "--method random or block)");
        out.xadj[v + 1] = static_cast<std::int32_t>(total);
    }
    release(offsets);
    release(unique_count);
    adjncy.resize(static_cast<std::size_t>(total));
    adjncy.shrink_to_fit();
    out.adjncy = std::move(adjncy);
}

}  // namespace

MetisGraph build_metis_graph(const GraphView& graph, const MetisOptions& options,
                             const std::string& what) {
    const global_id n = graph.num_vertices();
    STRATA_CHECK(options.balance_vertices || options.balance_edges || options.balance_train, what,
                 ": no balance constraint requested (vertices, edges or train)");
    STRATA_CHECK(n < idx_max, what, ": ", n,
                 " vertices do not fit METIS's 32-bit idx_t (Debian's METIS); at most ", idx_max);
    STRATA_CHECK(graph.num_splits >= 1 &&
                     graph.train_mask.size() ==
                         static_cast<std::size_t>(n) * static_cast<std::size_t>(graph.num_splits),
                 what, ": train_mask has ", graph.train_mask.size(), " entries for ", n,
                 " vertices and ", graph.num_splits, " splits");
    // The `train` constraint balances split 0's training vertices.
    const std::span<const std::uint8_t> train_mask = graph.split_of(graph.train_mask, 0);
    const auto num = static_cast<std::size_t>(n);

    MetisGraph out;
    if (!symmetrize_sorted_symmetric(graph, what, out)) {
        symmetrize_general(graph, what, out);
    }

    // Balance weights, vertex-major; a constraint with zero total cannot be balanced.
    std::int64_t train_total = 0;
    for (std::uint8_t t : train_mask) {
        train_total += t != 0 ? 1 : 0;
    }
    const std::int64_t edge_total = n + graph.num_edges();
    if (options.balance_vertices && n > 0) {
        out.constraints.push_back("vertices");
    }
    if (options.balance_edges && n > 0) {
        STRATA_CHECK(edge_total < idx_max, what, ": edge weight total ", edge_total,
                     " does not fit METIS's 32-bit idx_t");
        out.constraints.push_back("edges");
    }
    if (options.balance_train && train_total > 0) {
        out.constraints.push_back("train");
    }
    if (out.constraints.empty()) {  // nothing left to balance: plain vertex balance
        out.constraints.push_back("vertices");
    }
    out.ncon = static_cast<int>(out.constraints.size());
    out.vwgt.resize(num * out.constraints.size());
    std::size_t slot = 0;
    for (std::size_t v = 0; v < num; ++v) {
        for (const std::string& c : out.constraints) {
            std::int64_t weight = 1;
            if (c == "edges") {
                weight = 1 + graph.indptr[v + 1] - graph.indptr[v];
            } else if (c == "train") {
                weight = train_mask[v] != 0 ? 1 : 0;
            }
            out.vwgt[slot++] = static_cast<std::int32_t>(weight);
        }
    }
    return out;
}

Partition partition_metis(const GraphView& graph, int num_parts, const MetisOptions& options) {
    const MetisGraph metis_graph = build_metis_graph(graph, options);
    return partition_metis(metis_graph, num_parts, options.seed);
}

void write_metis_graph_file(const MetisGraph& graph, const std::string& path) {
    AtomicOutput output(path, /*overwrite=*/true);
    CFile file(std::fopen(output.temp_path().c_str(), "wb"));
    STRATA_CHECK(file, path, ": cannot open for writing");
    const global_id n = graph.num_vertices();
    std::string buffer;
    buffer.reserve(1 << 22);
    char number[24];
    auto append = [&](std::int64_t value, char separator) {
        const auto result = std::to_chars(number, number + sizeof(number), value);
        buffer.append(number, result.ptr);
        buffer.push_back(separator);
    };
    auto flush = [&](bool force) {
        if (force || buffer.size() > (1u << 22) - 4096) {
            STRATA_CHECK(std::fwrite(buffer.data(), 1, buffer.size(), file.get()) == buffer.size(),
                         path, ": write failed");
            buffer.clear();
        }
    };
    append(n, ' ');
    append(static_cast<std::int64_t>(graph.adjncy.size() / 2), ' ');
    buffer += "010 ";
    append(graph.ncon, '\n');
    for (global_id v = 0; v < n; ++v) {
        const auto row = static_cast<std::size_t>(v);
        for (int c = 0; c < graph.ncon; ++c) {
            append(
                graph
                    .vwgt[row * static_cast<std::size_t>(graph.ncon) + static_cast<std::size_t>(c)],
                ' ');
        }
        for (std::int32_t k = graph.xadj[row]; k < graph.xadj[row + 1]; ++k) {
            append(graph.adjncy[static_cast<std::size_t>(k)] + 1, ' ');
        }
        buffer.back() = '\n';
        flush(false);
    }
    flush(true);
    STRATA_CHECK(std::fflush(file.get()) == 0 && std::fclose(file.release()) == 0, path,
                 ": write failed");
    output.commit();
}

}  // namespace strata
