// libFuzzer harness: read_graph (datasets/graph_io.hpp) on well-formed HDF5 files (format 3,
// with the content id of the valid data) whose contents the input mutates — our validation, not
// libhdf5's parser (raw-byte HDF5 is libhdf5's own attack surface; docs/fuzzing.md). Each object of
// a valid 30-vertex graph file (the root attributes, indptr, indices, edge_weight, features,
// labels, the three masks) is kept, dropped, given other values, another element type, or another
// shape, as the input says.
#include "datasets/content_hash.hpp"
#include "datasets/generate.hpp"
#include "datasets/graph_io.hpp"
#include "tests/fuzz/fuzz_files.hpp"
#include "tests/fuzz/fuzz_h5.hpp"

namespace {

using strata::H5File;

const strata::GraphDataset& base() {
    static const strata::GraphDataset g = [] {
        strata::GraphDataset graph = strata::generate_graph(strata::GenerateOptions{
            .num_vertices = 30, .avg_degree = 3.0, .num_features = 3, .num_classes = 3, .seed = 1});
        graph.edge_weight.assign(graph.indices.size(), 0.5f);
        return graph;
    }();
    return g;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace strata::fuzz;
    FuzzedDataProvider in(data, size);
    const strata::GraphDataset& g = base();
    const auto n = g.num_vertices();
    const auto e = g.num_edges();
    const std::string path = (scratch() / "graph.h5").string();
    try {  // a mutation HDF5 cannot store (e.g. a shape it refuses) is not a finding
        H5File file = H5File::create(path);
        put_string_attribute(in, file, "strata_format", "graph");
        put_int_attribute(in, file, "strata_format_version", strata::graph_format_version);
        put_string_attribute(in, file, "content_id", strata::graph_content_id(g));
        put_string_attribute(in, file, "name", g.name);
        put_int_attribute(in, file, "num_classes", g.num_classes);
        put(in, file, "/graph/indptr", g.indptr, {n + 1});
        put(in, file, "/graph/indices", g.indices, {e});
        put(in, file, "/graph/edge_weight", g.edge_weight, {e});
        put(in, file, "/node/features", g.features.values, {n, g.features.cols});
        put(in, file, "/node/labels", g.labels, {n});
        put(in, file, "/node/train_mask", g.train_mask, {g.num_splits, n});
        put(in, file, "/node/val_mask", g.val_mask, {g.num_splits, n});
        put(in, file, "/node/test_mask", g.test_mask, {g.num_splits, n});
    } catch (const strata::Error&) {
        return 0;
    }
    return expect_ok_or_error([&] { (void)strata::read_graph(path); });
}
