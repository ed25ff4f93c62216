// mpi_check: MPI error code -> strata::Error with the library's own message.
#include "src/comm/mpi_check.hpp"

#include <string>

#include <mpi.h>

#include "src/base/error.hpp"

namespace strata::detail {

void mpi_check(int code, const char* expr, const char* file, int line) {
    if (code == MPI_SUCCESS) [[likely]] {
        return;
    }
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) {
        length = 0;
    }
    int error_class = code;
    if (MPI_Error_class(code, &error_class) != MPI_SUCCESS) {
        error_class = code;
    }
    std::string message = concat("MPI call failed: ", expr, ": ");
    message += length > 0 ? std::string(text, static_cast<std::size_t>(length))
                          : std::string("unknown MPI error");
    message += concat(" (error class ", error_class, ")");
    throw_error(std::move(message), file, line);
}

}  // namespace strata::detail
