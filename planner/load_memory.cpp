// measure_load_bytes: the load of partition/distributed_load.cpp, done here and measured.
#include "planner/load_memory.hpp"

#include <algorithm>

#include "datasets/adjacency.hpp"
#include "datasets/graph_slice_io.hpp"
#include "partition/distributed_load.hpp"
#include "src/base/log.hpp"

#include <malloc.h>

namespace strata::planner {

std::int64_t measure_load_bytes(const std::string& path, int parts, std::uint64_t seed) {
    malloc_trim(0);  // freed pages back to the system: the load's pages then all count
    const std::int64_t before = current_rss_bytes();
    (void)reset_peak_rss();
    if (parts == 1) {
        const GraphDataset graph = read_whole_graph(path, 0);
        const GlobalCsr adjacency = adjacency_matrix(graph);
        (void)adjacency;
    } else {
        const std::vector<global_id> offsets = slice_offsets(path, parts);
        const Partition partition = partition_metis_adjacency(path, offsets.back(), parts, seed);
        const GraphSlice slice = read_graph_slice(path, offsets, 0);
        (void)partition;
        (void)slice;
    }
    return std::max<std::int64_t>(0, peak_rss_bytes() - before);
}

}  // namespace strata::planner
