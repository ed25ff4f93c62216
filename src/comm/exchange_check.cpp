// check_exchange, check_all_to_all: argument validation shared by the communicators.
#include "src/comm/exchange_check.hpp"

#include <algorithm>

#include "src/base/error.hpp"

namespace strata {

namespace {

void check_offsets(const std::vector<index_t>& offsets, const char* name, std::size_t num_peers) {
    STRATA_CHECK(offsets.size() == num_peers + 1, "exchange pattern: ", name, " has ",
                 offsets.size(), " entries for ", num_peers, " peers (expected peers + 1)");
    STRATA_CHECK(offsets[0] == 0, "exchange pattern: ", name, "[0] is ", offsets[0],
                 " (expected 0)");
    for (std::size_t i = 0; i + 1 < offsets.size(); ++i) {
        STRATA_CHECK(offsets[i] <= offsets[i + 1], "exchange pattern: ", name,
                     " not monotone at index ", i + 1, " (", offsets[i], " > ", offsets[i + 1],
                     ")");
    }
}

void check_pattern(const ExchangePattern& pattern, int rank, int size) {
    const std::size_t num_peers = pattern.peers.size();
    check_offsets(pattern.send_offsets, "send_offsets", num_peers);
    check_offsets(pattern.recv_offsets, "recv_offsets", num_peers);
    for (std::size_t i = 0; i < num_peers; ++i) {
        const int peer = pattern.peers[i];
        STRATA_CHECK(peer >= 0 && peer < size, "exchange pattern: peers[", i, "] = ", peer,
                     " is not a rank of a communicator of size ", size);
        STRATA_CHECK(peer != rank, "exchange pattern: peers[", i, "] = ", peer,
                     " is this rank itself");
        STRATA_CHECK(i == 0 || pattern.peers[i - 1] < peer, "exchange pattern: peers not strictly ",
                     "ascending at index ", i, " (", pattern.peers[i - 1], " then ", peer, ")");
    }
}

}  // namespace

void check_exchange(const ExchangePattern& pattern, ConstMatrixView send, MatrixView recv, int rank,
                    int size) {
    check_pattern(pattern, rank, size);
    STRATA_CHECK(send.rows == pattern.num_send_rows(), "exchange: send matrix has ", send.rows,
                 " rows but the pattern sends ", pattern.num_send_rows());
    STRATA_CHECK(recv.rows == pattern.num_recv_rows(), "exchange: recv matrix has ", recv.rows,
                 " rows but the pattern receives ", pattern.num_recv_rows());
    STRATA_CHECK(send.cols == recv.cols, "exchange: send matrix has ", send.cols,
                 " columns but recv matrix has ", recv.cols);
    STRATA_CHECK(send.cols >= 0, "exchange: negative column count ", send.cols);
    STRATA_CHECK(send.size() == 0 || send.data != nullptr, "exchange: send matrix of ", send.rows,
                 " x ", send.cols, " has no data");
    STRATA_CHECK(recv.size() == 0 || recv.data != nullptr, "exchange: recv matrix of ", recv.rows,
                 " x ", recv.cols, " has no data");
}

void check_packed_exchange(const ExchangePattern& pattern, ConstPackedRows send, PackedRows recv,
                           int rank, int size) {
    check_pattern(pattern, rank, size);
    STRATA_CHECK(send.rows == pattern.num_send_rows(), "packed exchange: ", send.rows,
                 " send rows but the pattern sends ", pattern.num_send_rows());
    STRATA_CHECK(recv.rows == pattern.num_recv_rows(), "packed exchange: ", recv.rows,
                 " recv rows but the pattern receives ", pattern.num_recv_rows());
    STRATA_CHECK(send.row_bytes == recv.row_bytes, "packed exchange: send rows of ", send.row_bytes,
                 " bytes but recv rows of ", recv.row_bytes);
    STRATA_CHECK(send.size() == 0 || send.data != nullptr, "packed exchange: ", send.rows,
                 " send rows of ", send.row_bytes, " bytes have no data");
    STRATA_CHECK(recv.size() == 0 || recv.data != nullptr, "packed exchange: ", recv.rows,
                 " recv rows of ", recv.row_bytes, " bytes have no data");
}

void check_all_to_all(std::size_t send_bytes, std::span<const std::size_t> send_offsets, int size) {
    STRATA_CHECK(send_offsets.size() == static_cast<std::size_t>(size) + 1 &&
                     send_offsets.front() == 0 && send_offsets.back() == send_bytes &&
                     std::is_sorted(send_offsets.begin(), send_offsets.end()),
                 "all_to_all: send offsets must be ", size + 1, " non-decreasing values from 0 to ",
                 send_bytes, " (got ", send_offsets.size(), " values)");
}

}  // namespace strata
