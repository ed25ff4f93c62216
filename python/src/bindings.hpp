// The pieces of the _strata extension module (python/strata is its Python face): each file
// binds one concept and registers it here.
#pragma once

#include <nanobind/nanobind.h>

namespace strata::python {

void bind_errors(nanobind::module_& m);   // errors.cpp: strata.Error, strata.OptionError
void bind_runtime(nanobind::module_& m);  // runtime.cpp: MPI, end_job, build info
void bind_graph(nanobind::module_& m);    // graph.cpp: Graph
void bind_slice(nanobind::module_& m);    // slice.cpp: GraphSlice
void bind_trainer(nanobind::module_& m);  // trainer.cpp: Trainer, predictions

}  // namespace strata::python
