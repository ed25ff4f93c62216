// Every MpiCommunicator exchange posts its sends before its receives (MpiExchange::post says
// why: over Open MPI's TCP transport, a receive posted first can leave one direction idle for a
// whole message). The test interposes MPI_Isend and MPI_Irecv (this executable's definitions
// win over the MPI library's; they forward to PMPI_) and records the order each rank posts in.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <mpi.h>

#include <catch2/catch.hpp>

#include "src/comm/mpi_communicator.hpp"
#include "src/device/cpu/cpu_backend.hpp"
#include "src/tensor/dense_matrix.hpp"
#include "tests/support/all_ranks.hpp"

namespace {
std::string posted;  ///< 's' per MPI_Isend, 'r' per MPI_Irecv, in order
}  // namespace

extern "C" int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                         MPI_Comm comm, MPI_Request* request) {
    posted += 's';
    return PMPI_Isend(buf, count, type, dest, tag, comm, request);
}

extern "C" int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag,
                         MPI_Comm comm, MPI_Request* request) {
    posted += 'r';
    return PMPI_Irecv(buf, count, type, source, tag, comm, request);
}

namespace strata {
namespace {

/// True when `order` has at least one send and one receive and no send after a receive.
bool sends_first(const std::string& order) {
    const auto last_send = order.rfind('s');
    const auto first_recv = order.find('r');
    return last_send != std::string::npos && first_recv != std::string::npos &&
           last_send < first_recv;
}

}  // namespace

TEST_CASE("an exchange posts its sends before its receives", "[mpi]") {
    MpiCommunicator comm;
    const int rank = comm.rank();
    const int size = comm.size();
    REQUIRE(size >= 2);
    // Every other rank a peer, two rows each way.
    ExchangePattern pattern;
    for (int peer = 0; peer < size; ++peer) {
        if (peer != rank) {
            pattern.peers.push_back(peer);
            pattern.send_offsets.push_back(pattern.send_offsets.back() + 2);
            pattern.recv_offsets.push_back(pattern.recv_offsets.back() + 2);
        }
    }
    CpuBackend backend(1);
    DenseMatrix send(backend, pattern.num_send_rows(), 4);
    DenseMatrix recv(backend, pattern.num_recv_rows(), 4);
    posted.clear();
    comm.start_exchange(pattern, std::as_const(send).view(), recv.view())->wait_all();
    const std::string exchange = posted;
    INFO("rank " << rank << " posted " << exchange);
    CHECK(exchange.size() == 2 * static_cast<std::size_t>(size - 1));
    CHECK(sends_first(exchange));

    // all_to_all: a block of 5 bytes to every other rank.
    std::vector<std::byte> bytes(5 * static_cast<std::size_t>(size), std::byte{7});
    std::vector<std::size_t> offsets;
    for (int q = 0; q <= size; ++q) {
        offsets.push_back(5 * static_cast<std::size_t>(q));
    }
    posted.clear();
    (void)comm.all_to_all(bytes, offsets);
    const std::string all_to_all = posted;
    INFO("rank " << rank << " all_to_all posted " << all_to_all);
    CHECK(sends_first(all_to_all));
    REQUIRE(test::all_ranks(sends_first(exchange) && sends_first(all_to_all)));
}

}  // namespace strata
