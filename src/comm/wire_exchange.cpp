// WireExchange: pack, exchange, unpack per arriving peer.
#include "src/comm/wire_exchange.hpp"

#include "src/base/error.hpp"

namespace strata {
namespace {

std::size_t floats_for(std::size_t bytes) {
    return (bytes + sizeof(float) - 1) / sizeof(float);
}

}  // namespace

std::size_t WireExchange::packed_floats(HaloPrecision precision, index_t send_rows,
                                        index_t recv_rows, index_t width) {
    if (precision == HaloPrecision::fp32) {
        return 0;
    }
    const std::size_t record = packed_row_bytes(precision, width);
    return floats_for(static_cast<std::size_t>(send_rows) * record) +
           floats_for(static_cast<std::size_t>(recv_rows) * record);
}

std::int64_t WireExchange::wire_bytes(HaloPrecision precision, index_t rows, index_t width) {
    return static_cast<std::int64_t>(rows) *
           static_cast<std::int64_t>(packed_row_bytes(precision, width));
}

WireExchange::WireExchange(Communicator& comm, HaloPrecision precision,
                           const ExchangePattern& pattern, ConstMatrixView send, MatrixView recv,
                           std::span<float> packed)
    : precision_(precision), pattern_(pattern), recv_(recv) {
    bytes_sent_ = wire_bytes(precision, send.rows, send.cols);
    inter_node_bytes_sent_ = wire_bytes(precision, rows_to_other_nodes(comm, pattern), send.cols);
    if (precision == HaloPrecision::fp32) {
        exchange_ = comm.start_exchange(pattern, send, recv);
        return;
    }
    STRATA_CHECK(packed.size() >= packed_floats(precision, send.rows, recv.rows, send.cols),
                 "halo exchange: ", packed.size(), " floats of scratch for the ",
                 to_string(precision), " rows, needs ",
                 packed_floats(precision, send.rows, recv.rows, send.cols));
    const std::size_t record = packed_row_bytes(precision, send.cols);
    auto* base = reinterpret_cast<std::byte*>(packed.data());
    const PackedRows send_packed{base, send.rows, record};
    recv_packed_ =
        PackedRows{base + floats_for(send_packed.size()) * sizeof(float), recv.rows, record};
    pack_rows(precision, send, send_packed.bytes());
    exchange_ = comm.start_packed_exchange(pattern, send_packed, recv_packed_);
}

void WireExchange::unpack(int peer) {
    if (precision_ == HaloPrecision::fp32) {
        return;
    }
    const auto p = static_cast<std::size_t>(peer);
    const index_t first = pattern_.recv_offsets[p];
    const index_t count = pattern_.recv_offsets[p + 1] - first;
    unpack_rows(precision_, recv_packed_.row_range(first, count).bytes(),
                recv_.row_range(first, count));
}

std::optional<int> WireExchange::wait_any() {
    if (!ready_.empty()) {
        const int peer = ready_.front();
        ready_.pop_front();
        return peer;
    }
    const std::optional<int> peer = exchange_->wait_any();
    if (peer) {
        unpack(*peer);
    }
    return peer;
}

void WireExchange::wait_all() {
    if (precision_ != HaloPrecision::fp32) {
        while (const std::optional<int> peer = exchange_->wait_any()) {
            unpack(*peer);
            ready_.push_back(*peer);
        }
    }
    exchange_->wait_all();
}

}  // namespace strata
