// MpiSession: initialisation with thread support for the OpenMP regions (funneled).
#include "src/comm/mpi_session.hpp"

#include <cstdio>
#include <cstdlib>

#include <mpi.h>

namespace strata {

MpiSession::MpiSession(int& argc, char**& argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized == 0) {
        MPI_Finalize();
    }
}

void MpiSession::abort(const char* message, int code) const {
    std::fprintf(stderr, "[rank %d] error: %s\n", rank_, message);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);  // MPI_Abort is not declared [[noreturn]]
}

}  // namespace strata
