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
    /// Prints "[rank r] error: message" to stderr and aborts every rank (MPI_Abort).
    [[noreturn]] void abort(const char* message, int code = 1) const;

private:
    int rank_ = 0;
    int size_ = 1;
};

}  // namespace strata
