// PySlice: the C++ object behind strata.GraphSlice — one rank's rows of a graph, owned
// (datasets/graph_slice.hpp); a Trainer given one reads it (DataInput::slice).
#pragma once

#include "datasets/graph_slice.hpp"

namespace strata::python {

struct PySlice {
    GraphSlice slice;
};

}  // namespace strata::python
