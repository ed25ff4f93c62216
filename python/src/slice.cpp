// strata.GraphSlice's C++ half: one rank's rows of a graph (datasets/graph_slice.hpp) built
// from the caller's arrays, for a run in which no rank holds the whole graph
// (partition/slice_load.hpp). The arrays are copied into the slice (O(rows + their edges)).
#include "slice.hpp"

#include <cstdint>
#include <optional>
#include <string>

#include "bindings.hpp"
#include "graph.hpp"
#include "partition/slice_load.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

namespace nb = nanobind;

namespace strata::python {
namespace {

template <class T, class A>
std::vector<T> copy_of(const A& a) {
    return std::vector<T>(a.data(), a.data() + a.size());
}

PySlice from_arrays(std::int64_t first, std::int64_t num_nodes, In1<std::int64_t> indptr,
                    In1<std::int64_t> indices, In2<float> x, In1<std::int64_t> y,
                    In2<std::uint8_t> train_mask, In2<std::uint8_t> val_mask,
                    In2<std::uint8_t> test_mask, std::int64_t num_classes,
                    std::optional<In1<float>> edge_weight, const std::string& name) {
    PySlice out;
    GraphSlice& s = out.slice;
    s.name = name;
    s.num_vertices = num_nodes;
    s.num_classes = num_classes;
    s.indptr = copy_of<std::int64_t>(indptr);
    const auto rows = static_cast<std::int64_t>(s.indptr.size()) - 1;
    s.vertex_offsets = {first, first + rows};
    s.indices = copy_of<std::int64_t>(indices);
    if (edge_weight) {
        s.edge_weight = copy_of<float>(*edge_weight);
    }
    s.features.rows = static_cast<std::int64_t>(x.shape(0));
    s.features.cols = static_cast<index_t>(x.shape(1));
    s.features.values = copy_of<float>(x);
    s.labels = copy_of<std::int64_t>(y);
    s.num_splits = static_cast<int>(train_mask.shape(0));
    s.train_mask = copy_of<std::uint8_t>(train_mask);
    s.val_mask = copy_of<std::uint8_t>(val_mask);
    s.test_mask = copy_of<std::uint8_t>(test_mask);
    {
        nb::gil_scoped_release release;
        check_slice(s, "GraphSlice");
    }
    return out;
}

}  // namespace

void bind_slice(nb::module_& m) {
    nb::class_<PySlice>(m, "GraphSlice", "One rank's rows of a graph (per-rank slices).")
        .def_static("from_arrays", &from_arrays, nb::arg("first"), nb::arg("num_nodes"),
                    nb::arg("indptr"), nb::arg("indices"), nb::arg("x"), nb::arg("y"),
                    nb::arg("train_mask"), nb::arg("val_mask"), nb::arg("test_mask"),
                    nb::arg("num_classes"), nb::arg("edge_weight").none() = nb::none(),
                    nb::arg("name") = "")
        .def_prop_ro("first", [](const PySlice& s) { return s.slice.vertex_offsets.front(); })
        .def_prop_ro("num_rows", [](const PySlice& s) { return s.slice.num_local(); })
        .def_prop_ro("num_nodes", [](const PySlice& s) { return s.slice.num_vertices; })
        .def_prop_ro(
            "num_local_edges",
            [](const PySlice& s) { return static_cast<std::int64_t>(s.slice.indices.size()); })
        .def_prop_ro("num_features", [](const PySlice& s) { return s.slice.features.cols; })
        .def_prop_ro("num_classes", [](const PySlice& s) { return s.slice.num_classes; })
        .def_prop_ro("num_splits", [](const PySlice& s) { return s.slice.num_splits; });
}

}  // namespace strata::python
