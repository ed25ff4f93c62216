// strata.Graph's C++ half: read/write/validate the HDF5 format, build from arrays, hand the
// arrays back as numpy arrays that keep the graph alive (no copy).
#include "graph.hpp"

#include <cstring>
#include <optional>

#include "bindings.hpp"
#include "datasets/content_hash.hpp"
#include "datasets/graph_io.hpp"
#include "src/base/error.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace nb = nanobind;

namespace strata::python {
namespace {

/// A numpy view of `count` values at `data`, kept alive by `owner` (the Python Graph).
template <class T>
nb::object view(const T* data, std::size_t count, nb::handle owner) {
    return nb::cast(nb::ndarray<nb::numpy, const T, nb::ndim<1>>(data, {count}, owner));
}

template <class T>
nb::object view2(const T* data, std::size_t rows, std::size_t cols, nb::handle owner) {
    return nb::cast(nb::ndarray<nb::numpy, const T, nb::ndim<2>>(data, {rows, cols}, owner));
}

/// Masks given as [S, N] uint8 (the Python side views PyG's bool [N] as uint8, and transposes
/// [N, S] once).
std::span<const std::uint8_t> mask_of(const In2<std::uint8_t>& m, std::int64_t n, int splits,
                                      const char* name) {
    STRATA_CHECK(
        static_cast<std::int64_t>(m.shape(1)) == n && static_cast<int>(m.shape(0)) == splits,
        "Graph: ", name, " has shape [", m.shape(0), ", ", m.shape(1), "], expected [", splits,
        ", ", n, "]");
    return {m.data(), m.size()};
}

template <class T>
std::span<const T> span_of(const In1<T>& a) {
    return {a.data(), a.shape(0)};
}

/// A view of the caller's arrays: nothing is copied; the arrays are kept alive by the graph.
PyGraph from_arrays(In1<std::int64_t> indptr, In1<std::int64_t> indices, In2<float> x,
                    In1<std::int64_t> y, In2<std::uint8_t> train_mask, In2<std::uint8_t> val_mask,
                    In2<std::uint8_t> test_mask, std::int64_t num_classes,
                    std::optional<In1<float>> edge_weight, const std::string& name) {
    PyGraph out;
    GraphView& g = out.view;
    g.name = name;
    g.num_classes = num_classes;
    g.indptr = span_of(indptr);
    g.indices = span_of(indices);
    if (edge_weight) {
        g.edge_weight = span_of(*edge_weight);
    }
    g.features = FeaturesView{.rows = static_cast<std::int64_t>(x.shape(0)),
                              .cols = static_cast<index_t>(x.shape(1)),
                              .values = {x.data(), x.size()}};
    g.labels = span_of(y);
    STRATA_CHECK(!g.indptr.empty(), "Graph: indptr is empty, expected N+1 >= 1");
    const auto n = static_cast<std::int64_t>(g.indptr.size()) - 1;
    g.num_splits = static_cast<int>(train_mask.shape(0));
    g.train_mask = mask_of(train_mask, n, g.num_splits, "train_mask");
    g.val_mask = mask_of(val_mask, n, g.num_splits, "val_mask");
    g.test_mask = mask_of(test_mask, n, g.num_splits, "test_mask");
    out.arrays = ArrayOwners{std::move(indptr),    std::move(indices),    std::move(x),
                             std::move(y),         std::move(train_mask), std::move(val_mask),
                             std::move(test_mask), std::move(edge_weight)};
    {
        nb::gil_scoped_release release;
        validate_graph(g, "Graph");
    }
    return out;
}

}  // namespace

void bind_graph(nb::module_& m) {
    nb::class_<PyGraph>(m, "Graph", "A whole graph in host memory (docs/format.md's layout).")
        .def_static(
            "load",
            [](const std::string& path) {
                PyGraph g;
                {
                    nb::gil_scoped_release release;
                    g.owned = std::make_shared<GraphDataset>(read_graph(path));
                }
                g.view = g.owned->view();
                return g;
            },
            nb::arg("path"))
        .def_static("from_arrays", &from_arrays, nb::arg("indptr"), nb::arg("indices"),
                    nb::arg("x"), nb::arg("y"), nb::arg("train_mask"), nb::arg("val_mask"),
                    nb::arg("test_mask"), nb::arg("num_classes"),
                    nb::arg("edge_weight").none() = nb::none(), nb::arg("name") = "")
        .def(
            "save",
            [](const PyGraph& g, const std::string& path, bool overwrite) {
                nb::gil_scoped_release release;
                write_graph(g.graph(), path, overwrite);
            },
            nb::arg("path"), nb::arg("overwrite") = false)
        .def("validate",
             [](const PyGraph& g) {
                 nb::gil_scoped_release release;
                 validate_graph(g.graph(), "Graph");
             })
        .def_prop_ro("content_id",
                     [](const PyGraph& g) {
                         nb::gil_scoped_release release;
                         return graph_content_id(g.graph());
                     })
        .def_prop_ro("name", [](const PyGraph& g) { return g.graph().name; })
        .def_prop_ro("num_nodes", [](const PyGraph& g) { return g.graph().num_vertices(); })
        .def_prop_ro("num_edges", [](const PyGraph& g) { return g.graph().num_edges(); })
        .def_prop_ro("num_features", [](const PyGraph& g) { return g.graph().num_features(); })
        .def_prop_ro("num_classes", [](const PyGraph& g) { return g.graph().num_classes; })
        .def_prop_ro("num_splits", [](const PyGraph& g) { return g.graph().num_splits; })
        .def_prop_ro("copies", [](const PyGraph& g) { return g.copies; })
        .def("_add_copies",
             [](PyGraph& g, const std::vector<std::string>& lines) {
                 g.copies.insert(g.copies.end(), lines.begin(), lines.end());
             })
        .def_prop_ro("indptr",
                     [](nb::handle self) {
                         const GraphView& g = nb::cast<const PyGraph&>(self).graph();
                         return view(g.indptr.data(), g.indptr.size(), self);
                     })
        .def_prop_ro("indices",
                     [](nb::handle self) {
                         const GraphView& g = nb::cast<const PyGraph&>(self).graph();
                         return view(g.indices.data(), g.indices.size(), self);
                     })
        .def_prop_ro("edge_weight",
                     [](nb::handle self) -> nb::object {
                         const GraphView& g = nb::cast<const PyGraph&>(self).graph();
                         if (g.edge_weight.empty()) {
                             return nb::none();
                         }
                         return view(g.edge_weight.data(), g.edge_weight.size(), self);
                     })
        .def_prop_ro("x",
                     [](nb::handle self) {
                         const GraphView& g = nb::cast<const PyGraph&>(self).graph();
                         return view2(g.features.values.data(),
                                      static_cast<std::size_t>(g.features.rows),
                                      static_cast<std::size_t>(g.features.cols), self);
                     })
        .def_prop_ro("y",
                     [](nb::handle self) {
                         const GraphView& g = nb::cast<const PyGraph&>(self).graph();
                         return view(g.labels.data(), g.labels.size(), self);
                     })
        .def(
            "_mask",
            [](nb::handle self, int which) {
                const GraphView& g = nb::cast<const PyGraph&>(self).graph();
                const std::span<const std::uint8_t> mask = which == 0   ? g.train_mask
                                                           : which == 1 ? g.val_mask
                                                                        : g.test_mask;
                return view2(mask.data(), static_cast<std::size_t>(g.num_splits),
                             static_cast<std::size_t>(g.num_vertices()), self);
            },
            nb::arg("which"));
}

}  // namespace strata::python
