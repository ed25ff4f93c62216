// WireExchange: pack, exchange, unpack per arriving peer.
#include "src/comm/wire_exchange.hpp"

#include "src/base/error.hpp"
#include "src/base/trace.hpp"

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

bool WireExchange::prepare(Communicator& comm, index_t send_rows, index_t width,
                           std::span<float> packed) {
    bytes_sent_ = wire_bytes(precision_, send_rows, width);
    inter_node_bytes_sent_ = wire_bytes(precision_, rows_to_other_nodes(comm, pattern_), width);
    if (precision_ == HaloPrecision::fp32) {
        return false;
    }
    const index_t recv_rows = recv_.rows;
    STRATA_CHECK(packed.size() >= packed_floats(precision_, send_rows, recv_rows, width),
                 "halo exchange: ", packed.size(), " floats of scratch for the ",
                 to_string(precision_), " rows, needs ",
                 packed_floats(precision_, send_rows, recv_rows, width));
    const std::size_t record = packed_row_bytes(precision_, width);
    auto* base = reinterpret_cast<std::byte*>(packed.data());
    send_packed_ = PackedRows{base, send_rows, record};
    recv_packed_ =
        PackedRows{base + floats_for(send_packed_.size()) * sizeof(float), recv_rows, record};
    return true;
}

WireExchange::WireExchange(Communicator& comm, HaloPrecision precision,
                           const ExchangePattern& pattern, ConstMatrixView send, MatrixView recv,
                           std::span<float> packed, Arrival arrival, const HaloRounding* rounding)
    : precision_(precision),
      keep_packed_(arrival == Arrival::packed && precision != HaloPrecision::fp32),
      pattern_(pattern),
      recv_(recv) {
    if (!prepare(comm, send.rows, send.cols, packed)) {
        exchange_ = comm.start_exchange(pattern, send, recv);
        return;
    }
    {
        const trace::Span span("pack", "exchange", send.cols);
        pack_rows(precision, send, send_packed_.bytes(), rounding);
    }
    exchange_ = comm.start_packed_exchange(pattern, send_packed_, recv_packed_);
}

WireExchange::WireExchange(Communicator& comm, HaloPrecision precision,
                           const ExchangePattern& pattern, ConstMatrixView source,
                           std::span<const index_t> rows, MatrixView recv, std::span<float> packed,
                           Arrival arrival, const HaloRounding* rounding)
    : precision_(precision),
      keep_packed_(arrival == Arrival::packed && precision != HaloPrecision::fp32),
      pattern_(pattern),
      recv_(recv) {
    STRATA_CHECK(precision != HaloPrecision::fp32,
                 "halo exchange: fp32 rows are gathered by the caller, not packed");
    prepare(comm, static_cast<index_t>(rows.size()), source.cols, packed);
    {
        const trace::Span span("pack", "exchange", source.cols);
        pack_rows(precision, source, rows, send_packed_.bytes(), rounding);
    }
    exchange_ = comm.start_packed_exchange(pattern, send_packed_, recv_packed_);
}

ConstPackedMatrix WireExchange::received(int peer) const {
    STRATA_CHECK(keep_packed_, "halo exchange: received records are kept only with Arrival::packed",
                 " below fp32");
    const auto p = static_cast<std::size_t>(peer);
    const index_t first = pattern_.recv_offsets[p];
    const index_t count = pattern_.recv_offsets[p + 1] - first;
    return {.precision = precision_,
            .data = recv_packed_.row_range(first, count).data,
            .rows = count,
            .cols = recv_.cols};
}

void WireExchange::unpack(int peer) {
    if (precision_ == HaloPrecision::fp32 || keep_packed_) {
        return;
    }
    const auto p = static_cast<std::size_t>(peer);
    const index_t first = pattern_.recv_offsets[p];
    const index_t count = pattern_.recv_offsets[p + 1] - first;
    const trace::Span span("unpack", "exchange", pattern_.peers[p]);
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
