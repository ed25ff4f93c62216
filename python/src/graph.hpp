// PyGraph: the C++ object behind strata.Graph — a whole graph in host memory read through a
// GraphView (datasets/graph_view.hpp): either a GraphDataset read from a .h5 file (owned), or the
// caller's arrays (numpy, or anything with __dlpack__), viewed without a copy and kept alive here.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "datasets/graph_dataset.hpp"
#include "datasets/graph_view.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

namespace strata::python {

template <class T>
using In1 =
    nanobind::ndarray<const T, nanobind::ndim<1>, nanobind::c_contig, nanobind::device::cpu>;
template <class T>
using In2 =
    nanobind::ndarray<const T, nanobind::ndim<2>, nanobind::c_contig, nanobind::device::cpu>;

/// The caller's arrays a view reads (holding them keeps their memory alive).
struct ArrayOwners {
    In1<std::int64_t> indptr;
    In1<std::int64_t> indices;
    In2<float> x;
    In1<std::int64_t> y;
    In2<std::uint8_t> train_mask;
    In2<std::uint8_t> val_mask;
    In2<std::uint8_t> test_mask;
    std::optional<In1<float>> edge_weight;
};

struct PyGraph {
    std::shared_ptr<GraphDataset> owned;  ///< a graph read from a file
    std::optional<ArrayOwners> arrays;    ///< or the caller's arrays
    GraphView view;                       ///< what every reader reads
    /// One line per copy made while building it ("indices: int32 -> int64, 10556 values copied").
    std::vector<std::string> copies;

    [[nodiscard]] const GraphView& graph() const { return view; }
};

}  // namespace strata::python
