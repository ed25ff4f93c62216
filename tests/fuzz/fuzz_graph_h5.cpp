// libFuzzer harness: read_graph (datasets/graph_io.hpp) on well-formed HDF5 files whose
// contents the input mutates — our validation, not libhdf5's parser (raw-byte HDF5 is
// libhdf5's own attack surface; docs/fuzzing.md). Each object of a valid 30-vertex graph file
// (the root attributes, indptr, indices, edge_weight, features, labels, the three masks) is
// kept, dropped, given other values, another element type, or another shape, as the input says.
#include "datasets/generate.hpp"
#include "datasets/graph_io.hpp"
#include "datasets/h5_file.hpp"
#include "tests/fuzz/fuzz_files.hpp"

#include <fuzzer/FuzzedDataProvider.h>

namespace {

using strata::H5File;
using strata::H5Shape;

const strata::GraphDataset& base() {
    static const strata::GraphDataset g = [] {
        strata::GraphDataset graph = strata::generate_graph(strata::GenerateOptions{
            .num_vertices = 30, .avg_degree = 3.0, .num_features = 3, .num_classes = 3, .seed = 1});
        graph.edge_weight.assign(graph.indices.size(), 0.5f);
        return graph;
    }();
    return g;
}

/// A shape for `size` elements as the input says: the given one, flat, or arbitrary.
H5Shape mutate_shape(FuzzedDataProvider& in, H5Shape shape, std::size_t& size) {
    switch (in.ConsumeIntegralInRange<int>(0, 3)) {
        case 0:
            return shape;
        case 1:
            return {static_cast<std::int64_t>(size)};
        default: {  // any rank 1..3, any small extents: the data is resized to match
            H5Shape out(static_cast<std::size_t>(in.ConsumeIntegralInRange<int>(1, 3)));
            size = 1;
            for (auto& extent : out) {
                extent = in.ConsumeIntegralInRange<std::int64_t>(0, 40);
                size *= static_cast<std::size_t>(extent);
            }
            return out;
        }
    }
}

/// Writes `values` (the valid contents) at `path`, or a mutation of it, or nothing.
template <class T>
void put(FuzzedDataProvider& in, H5File& file, const char* path, std::vector<T> values,
         H5Shape shape) {
    const int action = in.ConsumeIntegralInRange<int>(0, 4);
    if (action == 1) {
        return;  // dropped
    }
    std::size_t size = values.size();
    if (action >= 2) {
        shape = mutate_shape(in, shape, size);
        values.resize(size);
        for (T& v : values) {  // the input's bytes, as far as they go
            if (in.remaining_bytes() == 0) {
                break;
            }
            if constexpr (std::is_floating_point_v<T>) {
                v = in.ConsumeFloatingPoint<T>();
            } else {
                v = in.ConsumeIntegral<T>();
            }
        }
    }
    if (action == 4) {  // another element type of the same values
        std::vector<double> other(values.begin(), values.end());
        file.write<double>(path, other, shape);
        return;
    }
    file.write<T>(path, values, shape);
}

void put_string_attribute(FuzzedDataProvider& in, H5File& file, const char* name,
                          const std::string& value) {
    switch (in.ConsumeIntegralInRange<int>(0, 3)) {
        case 0:
            file.write_attribute("/", name, value);
            break;
        case 1:
            break;
        case 2:
            file.write_attribute("/", name, in.ConsumeRandomLengthString(16));
            break;
        default:
            file.write_attribute("/", name, in.ConsumeIntegral<std::int64_t>());
    }
}

void put_int_attribute(FuzzedDataProvider& in, H5File& file, const char* name, std::int64_t value) {
    switch (in.ConsumeIntegralInRange<int>(0, 3)) {
        case 0:
            file.write_attribute("/", name, value);
            break;
        case 1:
            break;
        case 2:
            file.write_attribute("/", name, in.ConsumeIntegral<std::int64_t>());
            break;
        default:
            file.write_attribute("/", name, in.ConsumeRandomLengthString(8));
    }
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
        put_int_attribute(in, file, "strata_format_version", 2);
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
