// _strata: the compiled half of `import strata` (docs/python.md). python/strata wraps it.
#include "bindings.hpp"

#include <nanobind/nanobind.h>

NB_MODULE(_strata, m) {
    m.doc() = "Strata's C++ core: graphs, training sessions and predictions (use `strata`).";
    strata::python::bind_errors(m);
    strata::python::bind_runtime(m);
    strata::python::bind_graph(m);
    strata::python::bind_slice(m);
    strata::python::bind_trainer(m);
}
