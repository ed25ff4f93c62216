// WireExchange: one halo exchange at a HaloPrecision, for the callers that hold fp32 rows on both
// sides (the overlapped aggregation, the attention halo exchange). fp32 sends the rows as they
// are (Communicator::start_exchange, bit for bit as before); bf16 and int8 pack the fp32 send rows
// (or gather them from a larger matrix as they pack) into the caller's scratch, send the packed
// records (start_packed_exchange) and unpack a peer's records into its fp32 receive rows before
// handing that peer out — or, with Arrival::packed, hand the peer out with its records as they
// are (received(peer)), for a caller that reads them directly (the aggregation's halo SpMM and
// gradient sum: no fp32 receive rows at all). An Exchange itself, so that InPeerOrder consumes
// it as any other.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>

#include "src/comm/communicator.hpp"
#include "src/comm/halo_packing.hpp"

namespace strata {

class WireExchange final : public Exchange {
public:
    /// What a peer's arrival leaves for the caller below fp32: its rows unpacked into `recv`, or
    /// its packed records (received(peer); `recv` then gives only the shape, its data unused).
    enum class Arrival { unpacked, packed };

    /// Floats of scratch for the packed records of `send_rows` and `recv_rows` rows of `width`
    /// (send records first, each part rounded up to whole floats); 0 at fp32.
    [[nodiscard]] static std::size_t packed_floats(HaloPrecision precision, index_t send_rows,
                                                   index_t recv_rows, index_t width);
    /// Bytes that `rows` rows of `width` values take on the wire.
    [[nodiscard]] static std::int64_t wire_bytes(HaloPrecision precision, index_t rows,
                                                 index_t width);

    /// Starts the exchange of `send` into `recv` (host memory unless fp32). `packed`: at least
    /// packed_floats(...) floats (unused at fp32). `rounding`: stochastic rounding of the send
    /// rows below fp32 (its ids one per send row; null: to nearest; unused at fp32). Everything
    /// must outlive the exchange.
    WireExchange(Communicator& comm, HaloPrecision precision, const ExchangePattern& pattern,
                 ConstMatrixView send, MatrixView recv, std::span<float> packed,
                 Arrival arrival = Arrival::unpacked, const HaloRounding* rounding = nullptr);
    /// The same for the send rows gathered from `source` (send row r = source[rows[r]], host
    /// memory), below fp32 only: packed from `source` in one pass, no fp32 copy of the rows
    /// (at fp32 the caller gathers them, as MPI sends contiguous rows). Throws strata::Error at
    /// fp32.
    WireExchange(Communicator& comm, HaloPrecision precision, const ExchangePattern& pattern,
                 ConstMatrixView source, std::span<const index_t> rows, MatrixView recv,
                 std::span<float> packed, Arrival arrival = Arrival::unpacked,
                 const HaloRounding* rounding = nullptr);

    /// A peer whose rows are in `recv` (unpacked; packed: in received(peer)), as
    /// Exchange::wait_any.
    std::optional<int> wait_any() override;
    /// Every peer's rows in `recv`; the peers not yet handed out stay available to wait_any.
    void wait_all() override;

    /// The records `peer` (an index into the pattern's peers) sent, once it has arrived; only
    /// with Arrival::packed below fp32 (throws strata::Error otherwise).
    [[nodiscard]] ConstPackedMatrix received(int peer) const;

    /// Payload bytes this exchange sends (send rows x the precision's record bytes).
    [[nodiscard]] std::int64_t bytes_sent() const { return bytes_sent_; }
    /// Of bytes_sent(), those sent to ranks on another node (rows_to_other_nodes).
    [[nodiscard]] std::int64_t inter_node_bytes_sent() const { return inter_node_bytes_sent_; }

private:
    /// Sizes, byte counts and the receive records; false at fp32 (nothing to pack).
    bool prepare(Communicator& comm, index_t send_rows, index_t width, std::span<float> packed);
    void unpack(int peer);

    HaloPrecision precision_;
    bool keep_packed_ = false;
    const ExchangePattern& pattern_;
    MatrixView recv_;
    PackedRows recv_packed_;
    PackedRows send_packed_;
    std::unique_ptr<Exchange> exchange_;
    std::deque<int> ready_;  ///< unpacked by wait_all, not yet handed out
    std::int64_t bytes_sent_ = 0;
    std::int64_t inter_node_bytes_sent_ = 0;
};

}  // namespace strata
