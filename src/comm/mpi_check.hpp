// STRATA_MPI_CHECK: turns an MPI return code into a strata::Error carrying MPI_Error_string.
// No <mpi.h> here: the code is a plain int, so callers of the macro need only their own MPI
// include.
#pragma once

namespace strata::detail {

/// Does nothing when `code` is MPI_SUCCESS; otherwise throws strata::Error
/// "MPI call failed: <expr>: <MPI_Error_string(code)> (error class <c>)" located at file:line.
void mpi_check(int code, const char* expr, const char* file, int line);

}  // namespace strata::detail

/// Checks the return code of an MPI call. Only meaningful on a communicator whose error handler
/// is MPI_ERRORS_RETURN (MpiCommunicator sets it); the default handler aborts before we see it.
#define STRATA_MPI_CHECK(expr) ::strata::detail::mpi_check((expr), #expr, __FILE__, __LINE__)
