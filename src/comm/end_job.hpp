// end_job: how a failed multi-rank job ends: one line on stderr for the whole job, the last thing
// the job prints, and every rank gone (never a hang). main's error handler (MpiSession::abort),
// the communication wait limit (MpiWaiter) and PT-Scotch's error hook all end a job here.
#pragma once

#include <string>

namespace strata {

/// Prints `line` (without its newline) to stderr, once for the whole job, and ends every rank of
/// MPI_COMM_WORLD with exit status `code`; never returns. With MPI not running (before MPI_Init,
/// after MPI_Finalize) it prints the line and exits this process.
///
/// Which rank prints: each failing rank first looks for the failure messages of other ranks
/// (tag end_job_tag on MPI_COMM_WORLD, which strata uses for nothing else). A rank that finds
/// one failed later than another: it prints nothing and waits to be ended. Otherwise it tells
/// every other rank that it failed, and waits up to `tie_window_s` for such a message from a
/// lower rank (rank 0 does not wait): the lowest of the ranks that failed together prints. A
/// rank that failed alone therefore prints after `tie_window_s`. A rank that waits for another
/// to end the job and is still alive after `defer_limit_s` (that rank is unreachable) prints its
/// own line and ends the job itself.
///
/// How it ends the job: stdout is flushed, the line printed and flushed, then Open MPI's
/// ompi_mpi_abort, the function MPI_Abort calls after printing its "MPI_ABORT was invoked"
/// banner (measured with Open MPI 4.1: mpirun then prints nothing more, and exits with `code`);
/// under another MPI, MPI_Abort (docs/durability.md, "A failed job's last line").
[[noreturn]] void end_job(const std::string& line, int code = 1);

/// The MPI_COMM_WORLD tag of end_job's failure messages.
inline constexpr int end_job_tag = 32011;
/// How long a failing rank waits for a lower rank that failed at the same time.
inline constexpr double tie_window_s = 1.0;
/// How long a rank that leaves the report to another waits to be ended.
inline constexpr double defer_limit_s = 15.0;

}  // namespace strata
