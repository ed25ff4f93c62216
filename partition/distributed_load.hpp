// load_local_part: every rank obtains its LocalPart from a partition directory (reads only its
// own part file) or from a whole-graph .h5 (each rank reads a slice; partitioned in memory).
#pragma once

#include <cstdint>
#include <string>

#include "datasets/graph_dataset.hpp"
#include "partition/local_part.hpp"
#include "partition/partition.hpp"
#include "src/comm/communicator.hpp"

namespace strata {

struct InMemoryPartitionOptions {
    std::string method = "ptscotch";  ///< ptscotch | metis | random | block (ignored with one rank)
    std::uint64_t seed = 0;
};

/// `path` is a directory written by `strata partition` (its K must equal comm.size()) or a
/// graph .h5 file. A file with K > 1 ranks: each rank takes its row-balanced slice's owners
/// from options.method (block and random on every rank for its own rows, equal to
/// partition_block/partition_random; metis: rank 0 reads the whole adjacency, without vertex
/// data, and runs serial METIS before any rank reads its slice; ptscotch: PT-Scotch on the
/// slices), reads its slice and distribute_parts builds the
/// parts (the same parts as build_local_part on the whole graph; docs/training.md, "Loading with
/// --data G.h5"). One rank reads the whole file (it is the part). Either way the part is raw (the
/// adjacency A and its degrees, as the part files store it); the model's operator is built from it
/// at upload (TrainingInputs). The part holds all the dataset's splits; split `split_index` is
/// selected (select_split: "<path>:
/// --split-index 10 out of range: the file has 10 splits (0..9)"). Throws strata::Error on any
/// mismatch or invalid input.
/// `read.features` keeps one column block of the features (the G x F grid's layout C: a part
/// file reads only those columns, a graph file each slice's; one rank then reads the file as one
/// slice of every row, not read_graph); `read.bytes_read` receives the array bytes of the part
/// file, or of the graph file's slice with its vertex data (not the partitioner's own reads;
/// untouched when one rank reads the whole file with read_graph).
[[nodiscard]] LocalPart load_local_part(const std::string& path, Communicator& comm,
                                        const InMemoryPartitionOptions& options,
                                        int split_index = 0, const PartReadOptions& read = {});

/// The whole-graph .h5 file `path` of an in-memory load (read by every rank): checks that it
/// exists and, before the expensive work, that `split_index` is one of its splits; then
/// read_graph. Throws strata::Error ("<path>: no such file or directory", check_split_index's).
[[nodiscard]] GraphDataset read_whole_graph(const std::string& path, int split_index);

/// Serial METIS (seed `seed`) of the graph file `path` (`num_vertices` rows) read as its
/// adjacency alone (no vertex data), which is freed once METIS's 32-bit graph is built, before
/// METIS runs: what rank 0 of a K > 1 load with --partition-method metis holds and runs, before
/// it reads its slice; the only step of a sliced load that holds O(E) of the whole graph on one
/// rank (ptscotch avoids it).
[[nodiscard]] Partition partition_metis_adjacency(const std::string& path, global_id num_vertices,
                                                  int num_parts, std::uint64_t seed);

/// Copies rank `root`'s partition.owner to every rank (comm.broadcast), so that all ranks agree
/// even if a partitioner were not deterministic across processes. Every rank must already hold
/// the same number of owners (N) and set num_parts itself.
void broadcast_owners(Partition& partition, Communicator& comm, int root = 0);

}  // namespace strata
