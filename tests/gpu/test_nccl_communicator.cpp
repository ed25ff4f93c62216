// Multi-rank tests of NcclCommunicator (one GPU per rank): halo exchanges on device memory whose
// every value names (sender, receiver, row, col), zero-size peers, the reversed pattern, device
// all-reduces (started and blocking), host collectives through MPI, stats, and the CPU-backend
// error. Assertions agree over ranks first (all_ranks), so a failure cannot deadlock.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include <catch2/catch.hpp>

#include "src/base/error.hpp"
#include "src/comm/nccl_communicator.hpp"
#include "src/device/buffer.hpp"
#include "src/tensor/dense_matrix.hpp"
#include "tests/support/all_ranks.hpp"

namespace strata {
namespace {

constexpr index_t num_cols = 5;

int world_rank() {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

/// Exact in float for small arguments.
float encode(int sender, int receiver, index_t row, index_t col) {
    return static_cast<float>(((sender * 8 + receiver) * 64 + row) * 8 + col);
}

/// Rows `from` sends to `to`: distinct per ordered pair, zero for some pairs (one direction only).
index_t rows_between(int from, int to) {
    return static_cast<index_t>((from + 2 * to) % 3);
}

/// Every other rank is a peer, even when no rows move either way.
ExchangePattern all_to_all(int rank, int size) {
    ExchangePattern pattern;
    for (int peer = 0; peer < size; ++peer) {
        if (peer == rank) {
            continue;
        }
        pattern.peers.push_back(peer);
        pattern.send_offsets.push_back(pattern.send_offsets.back() + rows_between(rank, peer));
        pattern.recv_offsets.push_back(pattern.recv_offsets.back() + rows_between(peer, rank));
    }
    return pattern;
}

/// The send matrix (rows for peers[i] hold encode(rank, peer, row, col)) or the expected
/// receive matrix (sender and receiver swapped) of `pattern`.
HostMatrix encoded(const ExchangePattern& pattern, int rank, bool receive) {
    const auto& offsets = receive ? pattern.recv_offsets : pattern.send_offsets;
    HostMatrix m(offsets.back(), num_cols);
    for (std::size_t i = 0; i < pattern.peers.size(); ++i) {
        const int peer = pattern.peers[i];
        for (index_t r = offsets[i]; r < offsets[i + 1]; ++r) {
            for (index_t c = 0; c < num_cols; ++c) {
                m.at(r, c) = receive ? encode(peer, rank, r - offsets[i], c)
                                     : encode(rank, peer, r - offsets[i], c);
            }
        }
    }
    return m;
}

/// Runs one exchange of `pattern`; true when every received value is the expected one and
/// wait_any returned each peer exactly once.
bool exchange_ok(Backend& backend, NcclCommunicator& comm, const ExchangePattern& pattern) {
    const DenseMatrix send = DenseMatrix::upload(backend, encoded(pattern, comm.rank(), false));
    DenseMatrix recv(backend, pattern.num_recv_rows(), num_cols);
    backend.fill(recv.view(), -1.0f);
    auto exchange = comm.start_exchange(pattern, send.view(), recv.view());
    std::vector<int> seen(pattern.peers.size(), 0);
    while (const std::optional<int> peer = exchange->wait_any()) {
        seen.at(static_cast<std::size_t>(*peer)) += 1;
    }
    exchange->wait_all();
    bool ok = recv.download().values == encoded(pattern, comm.rank(), true).values;
    for (const int n : seen) {
        ok = ok && n == 1;
    }
    return ok;
}

}  // namespace

TEST_CASE("NCCL halo exchange delivers every peer's rows and skips zero-size peers", "[gpu][mpi]") {
    auto backend = make_cuda_backend(world_rank());
    NcclCommunicator comm(*backend);
    const ExchangePattern pattern = all_to_all(comm.rank(), comm.size());
    CHECK(test::all_ranks(exchange_ok(*backend, comm, pattern)));
    CHECK(test::all_ranks(exchange_ok(*backend, comm, pattern.reversed())));

    const CommStats& stats = comm.stats();
    const auto row_bytes = static_cast<std::int64_t>(num_cols * sizeof(float));
    const std::int64_t sent =
        (pattern.num_send_rows() + pattern.num_recv_rows()) * row_bytes;  // forward + reversed
    CHECK(test::all_ranks(stats.exchange_bytes_sent == sent && stats.bytes_sent == sent));
}

TEST_CASE("NCCL exchanges queued back to back arrive in order", "[gpu][mpi]") {
    auto backend = make_cuda_backend(world_rank());
    NcclCommunicator comm(*backend);
    const ExchangePattern pattern = all_to_all(comm.rank(), comm.size());
    const DenseMatrix send = DenseMatrix::upload(*backend, encoded(pattern, comm.rank(), false));
    DenseMatrix first(*backend, pattern.num_recv_rows(), num_cols);
    DenseMatrix second(*backend, pattern.num_recv_rows(), num_cols);
    auto a = comm.start_exchange(pattern, send.view(), first.view());
    auto b = comm.start_exchange(pattern, send.view(), second.view());
    b->wait_all();
    a->wait_all();
    const HostMatrix want = encoded(pattern, comm.rank(), true);
    CHECK(test::all_ranks(first.download().values == want.values &&
                          second.download().values == want.values));
}

TEST_CASE("NCCL all-reduces sum device data in place", "[gpu][mpi]") {
    auto backend = make_cuda_backend(world_rank());
    NcclCommunicator comm(*backend);
    const int size = comm.size();
    const std::size_t n = 1001;
    std::vector<float> host(n);
    for (std::size_t i = 0; i < n; ++i) {
        host[i] = static_cast<float>(comm.rank() + 1) * static_cast<float>(i % 7);
    }
    std::vector<float> want(n);
    for (std::size_t i = 0; i < n; ++i) {
        want[i] = static_cast<float>(size * (size + 1) / 2) * static_cast<float>(i % 7);
    }

    Buffer<float> started(*backend, std::span<const float>(host));
    auto reduction = comm.start_allreduce_sum(started.span());
    reduction->wait();
    CHECK(test::all_ranks(started.download() == want));

    Buffer<float> blocking(*backend, std::span<const float>(host));
    comm.allreduce_sum(blocking.span());
    CHECK(test::all_ranks(blocking.download() == want));

    std::vector<double> sums = {1.0, static_cast<double>(comm.rank())};
    comm.allreduce_sum(std::span<double>(sums));  // host data, through MPI
    CHECK(test::all_ranks(sums[0] == size && sums[1] == size * (size - 1) / 2.0));
    const auto float_bytes = static_cast<std::int64_t>(2 * n * sizeof(float));
    CHECK(test::all_ranks(comm.stats().collective_bytes ==
                          float_bytes + static_cast<std::int64_t>(2 * sizeof(double))));
}

TEST_CASE("NcclCommunicator needs the CUDA backend", "[gpu][mpi]") {
    auto cpu = make_cpu_backend(1);
    bool threw = false;
    try {
        NcclCommunicator comm(*cpu);
    } catch (const Error& e) {
        threw = std::string(e.what()).find("needs the CUDA backend") != std::string::npos;
    }
    CHECK(test::all_ranks(threw));
}

}  // namespace strata
