// alltoallv_int64: every rank sends a run of int64 values to every rank (MPI_Alltoallv's shape)
// with counts of any size: the counts go by MPI_Alltoall (int64), the payload as point-to-point
// messages of at most max_message_bytes() each (message_chunks), since Open MPI 4.1 has no
// large-count collectives.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "src/comm/mpi_communicator.hpp"

namespace strata {

/// Values of one all-to-all: the run from rank r is recv[offsets[r] : offsets[r+1]].
struct AlltoallvResult {
    std::vector<std::int64_t> values;
    std::vector<std::int64_t> offsets;  ///< size + 1 prefix sums
};

/// Collective over `comm`: rank r's send[send_offsets[q] : send_offsets[q+1]] goes to rank q
/// (send_offsets: size + 1 non-decreasing values from 0 to send.size()). Messages use their own
/// tag, so they never match the communicator's halo exchanges; at most max_message_bytes() and
/// INT_MAX elements each. Not counted in comm.stats() (a setup step, not training traffic). Throws
/// strata::Error on bad offsets or an MPI failure.
[[nodiscard]] AlltoallvResult alltoallv_int64(MpiCommunicator& comm,
                                              std::span<const std::int64_t> send,
                                              std::span<const std::int64_t> send_offsets);

}  // namespace strata
