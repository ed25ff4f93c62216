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

template <class T>
using In1 = nb::ndarray<const T, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
template <class T>
using In2 = nb::ndarray<const T, nb::ndim<2>, nb::c_contig, nb::device::cpu>;

template <class T>
std::vector<T> to_vector(const In1<T>& a) {
    return std::vector<T>(a.data(), a.data() + a.shape(0));
}

/// A numpy view of `count` values at `data`, kept alive by `owner` (the Python Graph).
template <class T>
nb::object view(const T* data, std::size_t count, nb::handle owner) {
    return nb::cast(nb::ndarray<nb::numpy, const T, nb::ndim<1>>(data, {count}, owner));
}

template <class T>
nb::object view2(const T* data, std::size_t rows, std::size_t cols, nb::handle owner) {
    return nb::cast(nb::ndarray<nb::numpy, const T, nb::ndim<2>>(data, {rows, cols}, owner));
}

/// Masks given as [S, N] uint8 (the Python side transposes PyG's [N, S] and casts bool).
std::vector<std::uint8_t> mask_of(const In2<std::uint8_t>& m, std::int64_t n, int splits,
                                  const char* name) {
    STRATA_CHECK(
        static_cast<std::int64_t>(m.shape(1)) == n && static_cast<int>(m.shape(0)) == splits,
        "Graph: ", name, " has shape [", m.shape(0), ", ", m.shape(1), "], expected [", splits,
        ", ", n, "]");
    return std::vector<std::uint8_t>(m.data(), m.data() + m.size());
}

PyGraph from_arrays(const In1<std::int64_t>& indptr, const In1<std::int64_t>& indices,
                    const In2<float>& x, const In1<std::int64_t>& y,
                    const In2<std::uint8_t>& train_mask, const In2<std::uint8_t>& val_mask,
                    const In2<std::uint8_t>& test_mask, std::int64_t num_classes,
                    const std::optional<In1<float>>& edge_weight, const std::string& name) {
    PyGraph out;
    GraphDataset& g = *out.data;
    g.name = name;
    g.indptr = to_vector(indptr);
    g.indices = to_vector(indices);
    if (edge_weight) {
        g.edge_weight = to_vector(*edge_weight);
    }
    g.features =
        HostMatrix(static_cast<std::int64_t>(x.shape(0)), static_cast<index_t>(x.shape(1)));
    std::memcpy(g.features.values.data(), x.data(), x.size() * sizeof(float));
    g.labels = to_vector(y);
    const auto n = static_cast<std::int64_t>(g.indptr.size()) - 1;
    g.num_splits = static_cast<int>(train_mask.shape(0));
    g.train_mask = mask_of(train_mask, n, g.num_splits, "train_mask");
    g.val_mask = mask_of(val_mask, n, g.num_splits, "val_mask");
    g.test_mask = mask_of(test_mask, n, g.num_splits, "test_mask");
    g.num_classes = num_classes;
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
                nb::gil_scoped_release release;
                *g.data = read_graph(path);
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
                         const GraphDataset& g = nb::cast<const PyGraph&>(self).graph();
                         return view(g.indptr.data(), g.indptr.size(), self);
                     })
        .def_prop_ro("indices",
                     [](nb::handle self) {
                         const GraphDataset& g = nb::cast<const PyGraph&>(self).graph();
                         return view(g.indices.data(), g.indices.size(), self);
                     })
        .def_prop_ro("edge_weight",
                     [](nb::handle self) -> nb::object {
                         const GraphDataset& g = nb::cast<const PyGraph&>(self).graph();
                         if (g.edge_weight.empty()) {
                             return nb::none();
                         }
                         return view(g.edge_weight.data(), g.edge_weight.size(), self);
                     })
        .def_prop_ro("x",
                     [](nb::handle self) {
                         const GraphDataset& g = nb::cast<const PyGraph&>(self).graph();
                         return view2(g.features.values.data(),
                                      static_cast<std::size_t>(g.features.rows),
                                      static_cast<std::size_t>(g.features.cols), self);
                     })
        .def_prop_ro("y",
                     [](nb::handle self) {
                         const GraphDataset& g = nb::cast<const PyGraph&>(self).graph();
                         return view(g.labels.data(), g.labels.size(), self);
                     })
        .def(
            "_mask",
            [](nb::handle self, int which) {
                const GraphDataset& g = nb::cast<const PyGraph&>(self).graph();
                const std::vector<std::uint8_t>& mask = which == 0   ? g.train_mask
                                                        : which == 1 ? g.val_mask
                                                                     : g.test_mask;
                return view2(mask.data(), static_cast<std::size_t>(g.num_splits),
                             static_cast<std::size_t>(g.num_vertices()), self);
            },
            nb::arg("which"));
}

}  // namespace strata::python
