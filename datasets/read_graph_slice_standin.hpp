// ============================================================================================
// STAND-IN, TO BE REPLACED AT MERGE (issue 16): h16d writes the real read_graph_slice (HDF5
// hyperslabs, validation, a bytes-read counter) in datasets/. This file only lets per-rank
// loading (partition/distributed_load.cpp) run until then; it has the same signature. It reads
// the slice's rows with H5File::read_rows (indptr, indices, edge weights, features, labels) but
// the masks whole ([S, N] bytes), and it checks neither the content id nor finiteness: do not
// build on it. When merging: delete this file and include h16d's header in
// partition/distributed_load.cpp (graph_num_vertices and slice offsets may come from there too).
// ============================================================================================
#pragma once

#include <span>
#include <string>
#include <vector>

#include "datasets/graph_slice.hpp"
#include "datasets/h5_file.hpp"
#include "src/base/error.hpp"

namespace strata::standin {

/// N of a graph file (the length of /graph/indptr minus one), without reading any array.
inline global_id graph_num_vertices(const std::string& path) {
    const H5File file = H5File::open(path);
    STRATA_CHECK(file.has_attribute("/", "strata_format") &&
                     file.read_string_attribute("/", "strata_format") == "graph",
                 path, ": /: not a strata graph dataset");
    const H5Shape shape = file.shape("/graph/indptr");
    STRATA_CHECK(shape.size() == 1 && shape[0] >= 1, path, ": /graph/indptr: bad shape");
    return shape[0] - 1;
}

/// Rows [vertex_offsets[rank], vertex_offsets[rank + 1]) of the graph file `path`.
inline GraphSlice read_graph_slice(const std::string& path,
                                   std::span<const global_id> vertex_offsets, int rank) {
    const H5File file = H5File::open(path);
    GraphSlice s;
    s.name = file.read_string_attribute("/", "name");
    s.num_classes = file.read_int_attribute("/", "num_classes");
    s.num_vertices = file.shape("/graph/indptr")[0] - 1;
    s.num_edges = file.shape("/graph/indices")[0];
    s.vertex_offsets.assign(vertex_offsets.begin(), vertex_offsets.end());
    s.rank = rank;
    const global_id first = vertex_offsets[static_cast<std::size_t>(rank)];
    const global_id count = vertex_offsets[static_cast<std::size_t>(rank) + 1] - first;
    s.indptr = file.read_rows<std::int64_t>("/graph/indptr", first, count + 1);
    const std::int64_t e0 = s.indptr.front();
    const std::int64_t e1 = s.indptr.back();
    STRATA_CHECK(e0 >= 0 && e0 <= e1 && e1 <= s.num_edges, path, ": /graph/indptr: rows ", first,
                 "..", first + count, " point outside [0, ", s.num_edges, "]");
    for (std::int64_t& k : s.indptr) {
        k -= e0;
    }
    s.indices = file.read_rows<std::int64_t>("/graph/indices", e0, e1 - e0);
    if (file.exists("/graph/edge_weight")) {
        s.edge_weight = file.read_rows<float>("/graph/edge_weight", e0, e1 - e0);
    }
    const H5Shape features = file.shape("/node/features");
    STRATA_CHECK(features.size() == 2 && features[0] == s.num_vertices, path,
                 ": /node/features: bad shape");
    s.features.rows = count;
    s.features.cols = static_cast<index_t>(features[1]);
    s.features.values = file.read_rows<float>("/node/features", first, count);
    s.labels = file.read_rows<std::int64_t>("/node/labels", first, count);
    const auto n = static_cast<std::size_t>(s.num_vertices);
    const char* names[3] = {"/node/train_mask", "/node/val_mask", "/node/test_mask"};
    std::vector<std::uint8_t>* masks[3] = {&s.train_mask, &s.val_mask, &s.test_mask};
    for (int m = 0; m < 3; ++m) {
        H5Shape shape;
        const std::vector<std::uint8_t> whole = file.read<std::uint8_t>(names[m], &shape);
        s.num_splits = shape.size() == 2 ? static_cast<int>(shape[0]) : 1;
        STRATA_CHECK(whole.size() == n * static_cast<std::size_t>(s.num_splits), path, ": ",
                     names[m], ": bad shape");
        for (int split = 0; split < s.num_splits; ++split) {
            const auto at =
                whole.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(split) * n +
                                                            static_cast<std::size_t>(first));
            masks[m]->insert(masks[m]->end(), at, at + static_cast<std::ptrdiff_t>(count));
        }
    }
    return s;
}

}  // namespace strata::standin
