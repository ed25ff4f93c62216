// PyGraph: the C++ object behind strata.Graph — a whole graph in host memory, either read from a
// .h5 file (owned) or built from caller arrays; the copies made on the way in are listed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "datasets/graph_dataset.hpp"

namespace strata::python {

struct PyGraph {
    std::shared_ptr<GraphDataset> data = std::make_shared<GraphDataset>();
    /// One line per copy made while building it ("indices: int32 -> int64, 10556 values").
    std::vector<std::string> copies;

    [[nodiscard]] const GraphDataset& graph() const { return *data; }
};

}  // namespace strata::python
