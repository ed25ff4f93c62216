// MpiSession: initialisation with thread support for the OpenMP regions (funneled); a failed job
// ends through end_job.
#include "src/comm/mpi_session.hpp"

#include <string>

#include <mpi.h>

#include "src/comm/end_job.hpp"

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
    end_job("[rank " + std::to_string(rank_) + "] error: " + message, code);
}

}  // namespace strata
