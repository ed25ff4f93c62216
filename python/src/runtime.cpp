// MPI for a Python process: initialised by strata or by mpi4py, whichever comes first, and
// finalised by whoever initialised it; the end of a failed multi-rank job (end_job); build info.
#include <string>

#include "bindings.hpp"
#include "src/comm/end_job.hpp"
#include "src/comm/mpi_session.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

namespace nb = nanobind;

namespace strata::python {

void bind_runtime(nb::module_& m) {
    m.def("ensure_mpi", &ensure_mpi,
          "Initialises MPI (funneled) unless it is; True when this call initialised it.");
    m.def("finalize_mpi", &finalize_mpi, "MPI_Finalize, when MPI is running.");
    m.def("world_rank", &mpi_world_rank, "This process's rank in MPI_COMM_WORLD.");
    m.def("world_size", &mpi_world_size, "The number of ranks in MPI_COMM_WORLD.");
    m.def(
        "end_job",
        [](const std::string& line, int code) {
            nb::gil_scoped_release release;
            end_job(line, code);
        },
        nb::arg("line"), nb::arg("code") = 1,
        "Prints `line` once for the whole job and ends every rank (never returns).");
#ifdef NDEBUG
    m.attr("build_type") = "release";
#else
    m.attr("build_type") = "debug";
#endif
#ifdef STRATA_PYTHON_VERSION
    m.attr("__version__") = STRATA_PYTHON_VERSION;
#endif
    m.attr("built_for_python") = PY_VERSION;
}

}  // namespace strata::python
