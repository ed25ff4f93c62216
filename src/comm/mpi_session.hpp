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

}  // namespace strata
