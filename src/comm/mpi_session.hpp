// MpiSession: MPI_Init/MPI_Finalize for main() only (never in a static destructor).
#pragma once

namespace strata {

class MpiSession {
public:
    MpiSession(int& argc, char**& argv);
    MpiSession(const MpiSession&) = delete;
    MpiSession& operator=(const MpiSession&) = delete;
    ~MpiSession();

    [[nodiscard]] int world_rank() const { return rank_; }
    [[nodiscard]] int world_size() const { return size_; }
    /// Ends the job with "[rank r] error: message" on stderr, printed once for the whole job
    /// however many ranks fail, as its last line (end_job).
    [[noreturn]] void abort(const char* message, int code = 1) const;

private:
    int rank_ = 0;
    int size_ = 1;
};

/// For a front end that does not own main() (the Python module): MPI_Init_thread (funneled)
/// unless MPI is already initialised (by mpi4py, or an earlier call). Returns true when this call
/// initialised it: that caller finalises it (finalize_mpi), whoever initialised MPI finalises it.
bool ensure_mpi();
/// MPI_Finalize, when MPI is initialised and not yet finalised.
void finalize_mpi();
/// MPI_COMM_WORLD's rank and size (MPI must be initialised: ensure_mpi).
[[nodiscard]] int mpi_world_rank();
[[nodiscard]] int mpi_world_size();

}  // namespace strata
