// run_partition_job: read → partition (METIS/random/block) → adjacency → build + write.
#include "partition/partition_job.hpp"

#include <algorithm>
#include <cstdio>
#include <future>
#include <optional>

#include "datasets/adjacency.hpp"
#include "datasets/graph_io.hpp"
#include "partition/chunking.hpp"
#include "partition/local_part.hpp"
#include "partition/metis_partitioner.hpp"
#include "src/base/atomic_output.hpp"
#include "src/base/error.hpp"
#include "src/base/log.hpp"
#include "src/base/timer.hpp"

namespace strata {

std::vector<std::string> parse_balance(const std::string& text) {
    std::vector<std::string> items;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::string item = text.substr(start, comma - start);
        STRATA_CHECK(item == "vertices" || item == "edges" || item == "train",
                     "--balance: unknown constraint '", item,
                     "' (a comma-separated subset of vertices,edges,train)");
        STRATA_CHECK(std::find(items.begin(), items.end(), item) == items.end(), "--balance: '",
                     item, "' listed twice");
        items.push_back(item);
        start = comma + 1;
    }
    return items;
}

PartitionReport run_partition_job(const PartitionJob& job) {
    STRATA_CHECK(job.num_parts >= 1, "--parts must be >= 1, got ", job.num_parts);
    STRATA_CHECK(job.method == "metis" || job.method == "random" || job.method == "block",
                 "--method: unknown method '", job.method, "' (metis, random or block)");
    STRATA_CHECK(job.chunks >= 0 && job.chunks % job.num_parts == 0, "--chunks ", job.chunks,
                 " with --parts ", job.num_parts,
                 ": every part needs the same number of chunks (a multiple of ", job.num_parts,
                 ")");
    STRATA_CHECK(!job.balance.empty(), "--balance: at least one constraint is needed");
    for (const std::string& b : job.balance) {
        STRATA_CHECK(b == "vertices" || b == "edges" || b == "train",
                     "--balance: unknown constraint '", b, "'");
    }
    STRATA_CHECK(job.method != "metis" || job.seed <= 0x7fffffffULL, "--seed ", job.seed,
                 " is too large for METIS (a 32-bit int: at most 2147483647)");
    {
        // Fail before reading anything if the output cannot be written (exists, no parent).
        const AtomicOutput probe(job.out_dir, job.force);
    }

    PartitionInfo info;
    info.source_path = job.data_path;
    info.method = job.method;
    info.seed = job.seed;
    info.progress = job.progress;
    Stopwatch watch;
    auto end_phase = [&](const char* name) {
        info.phases.push_back({name, watch.seconds(), peak_rss_bytes()});
        watch.restart();
    };

    auto announce = [&](const std::string& line) {
        if (job.progress) {
            std::printf("%s\n", line.c_str());
            std::fflush(stdout);
        }
    };
    announce("read: " + job.data_path);
    // A version 3 file's identity is its stored content id; an older one's is the checksum of the
    // file, which reads it a second time: done beside the parse (the page cache holds it).
    auto checksum = std::async(std::launch::async, source_identity, job.data_path);
    GraphDataset graph = read_graph(job.data_path);
    info.source_checksum = checksum.get();
    end_phase("read");
    const global_id n = graph.num_vertices();
    STRATA_CHECK(job.num_parts <= std::max<global_id>(n, 1), job.data_path, ": cannot split ", n,
                 " vertices into ", job.num_parts, " parts (--parts must be <= vertices)");

    Partition partition;
    if (job.method == "metis") {
        const auto has = [&](const char* c) {
            return std::find(job.balance.begin(), job.balance.end(), c) != job.balance.end();
        };
        const MetisOptions options{.seed = job.seed,
                                   .balance_edges = has("edges"),
                                   .balance_train = has("train"),
                                   .balance_vertices = has("vertices")};
        announce("metis: symmetrizing " + std::to_string(graph.num_edges()) + " edges");
        MetisGraph metis_graph = build_metis_graph(graph, options, job.data_path);
        info.balance = metis_graph.constraints;
        announce("metis: METIS_PartGraphKway, " + std::to_string(n) + " vertices, " +
                 std::to_string(metis_graph.adjncy.size() / 2) + " undirected edges, K=" +
                 std::to_string(job.num_parts) + ", ncon=" + std::to_string(metis_graph.ncon));
        // METIS's own memory is the peak of the whole job; holding the dataset (int64 CSR and
        // features) through it would add ~40% on large graphs, so it is released and read
        // again afterwards (a read is a few percent of METIS's time).
        const std::int64_t num_edges = graph.num_edges();
        graph = GraphDataset{};
        partition = partition_metis(metis_graph, job.num_parts, job.seed, &info.metis_edgecut);
        metis_graph = MetisGraph{};
        end_phase("metis");
        announce("reread: " + job.data_path);
        graph = read_graph(job.data_path);
        STRATA_CHECK(graph.num_vertices() == n && graph.num_edges() == num_edges, job.data_path,
                     ": the file changed while it was being partitioned");
        end_phase("reread");
    } else if (job.method == "random") {
        partition = partition_random(n, job.num_parts, job.seed);
    } else {
        partition = partition_block(n, job.num_parts);
    }
    if (job.method != "metis") {
        end_phase(job.method.c_str());
    }

    std::optional<Partition> chunks;
    if (job.chunks > 0) {
        announce("chunks: " + std::to_string(job.chunks / job.num_parts) + " per part (METIS " +
                 "on each part, merged at random)");
        chunks = chunk_within_parts(graph, partition,
                                    ChunkOptions{.chunks = job.chunks, .seed = job.seed});
        end_phase("chunks");
    }

    announce("adjacency: A with duplicate edges merged");
    const GlobalCsr adjacency = adjacency_matrix(graph);
    end_phase("adjacency");
    return write_partition(graph, adjacency, partition, info, job.out_dir, job.force,
                           chunks ? &*chunks : nullptr);
}

}  // namespace strata
