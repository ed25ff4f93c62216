// alltoallv_int64: counts by MPI_Alltoall, payload by Isend/Irecv pieces of message_chunks.
#include "src/comm/mpi_alltoallv.hpp"

#include <algorithm>

#include "src/base/error.hpp"
#include "src/comm/message_chunks.hpp"
#include "src/comm/mpi_check.hpp"

namespace strata {
namespace {
constexpr int alltoallv_tag = 0x5a11;  ///< distinct from the exchanges' tag
}  // namespace

AlltoallvResult alltoallv_int64(MpiCommunicator& comm, std::span<const std::int64_t> send,
                                std::span<const std::int64_t> send_offsets) {
    const int size = comm.size();
    const int rank = comm.rank();
    const auto p = static_cast<std::size_t>(size);
    STRATA_CHECK(send_offsets.size() == p + 1 && send_offsets.front() == 0 &&
                     send_offsets.back() == static_cast<std::int64_t>(send.size()) &&
                     std::is_sorted(send_offsets.begin(), send_offsets.end()),
                 "alltoallv_int64: send offsets must be ", p + 1,
                 " non-decreasing values from 0 to ", send.size());
    std::vector<std::int64_t> send_counts(p);
    for (std::size_t q = 0; q < p; ++q) {
        send_counts[q] = send_offsets[q + 1] - send_offsets[q];
    }
    std::vector<std::int64_t> recv_counts(p);
    STRATA_MPI_CHECK(MPI_Alltoall(send_counts.data(), 1, MPI_INT64_T, recv_counts.data(), 1,
                                  MPI_INT64_T, comm.comm()));
    AlltoallvResult result;
    result.offsets.assign(p + 1, 0);
    for (std::size_t q = 0; q < p; ++q) {
        result.offsets[q + 1] = result.offsets[q] + recv_counts[q];
    }
    result.values.resize(static_cast<std::size_t>(result.offsets.back()));
    // This rank's own run is a copy.
    std::copy_n(send.begin() + send_offsets[static_cast<std::size_t>(rank)],
                send_counts[static_cast<std::size_t>(rank)],
                result.values.begin() + result.offsets[static_cast<std::size_t>(rank)]);

    const std::size_t max_count =
        max_message_elements(comm.max_message_bytes(), sizeof(std::int64_t));
    std::vector<MPI_Request> requests;
    for (int q = 0; q < size; ++q) {
        const auto at = static_cast<std::size_t>(q);
        if (q == rank) {
            continue;
        }
        for (const MessageChunk& c :
             message_chunks(static_cast<std::size_t>(recv_counts[at]), max_count)) {
            requests.emplace_back();
            STRATA_MPI_CHECK(MPI_Irecv(
                result.values.data() + result.offsets[at] + static_cast<std::ptrdiff_t>(c.offset),
                c.count, MPI_INT64_T, q, alltoallv_tag, comm.comm(), &requests.back()));
        }
    }
    for (int q = 0; q < size; ++q) {
        const auto at = static_cast<std::size_t>(q);
        if (q == rank) {
            continue;
        }
        for (const MessageChunk& c :
             message_chunks(static_cast<std::size_t>(send_counts[at]), max_count)) {
            requests.emplace_back();
            STRATA_MPI_CHECK(
                MPI_Isend(send.data() + send_offsets[at] + static_cast<std::ptrdiff_t>(c.offset),
                          c.count, MPI_INT64_T, q, alltoallv_tag, comm.comm(), &requests.back()));
        }
    }
    STRATA_MPI_CHECK(
        MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
    return result;
}

}  // namespace strata
