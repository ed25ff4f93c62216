// MpiSession: initialisation with thread support for the OpenMP regions (funneled); a failed job
// ends through end_job. ensure_mpi/finalize_mpi: the same for front ends without a main().
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

bool ensure_mpi() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized != 0) {
        return false;
    }
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    return true;
}

void finalize_mpi() {
    int initialized = 0;
    int finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized != 0 && finalized == 0) {
        MPI_Finalize();
    }
}

int mpi_world_rank() {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

int mpi_world_size() {
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return size;
}

void MpiSession::abort(const char* message, int code) const {
    end_job("[rank " + std::to_string(rank_) + "] error: " + message, code);
}

}  // namespace strata
