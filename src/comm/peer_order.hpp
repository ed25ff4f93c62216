// InPeerOrder: an exchange's arrivals handed out in peer order (0, 1, 2, ...), each as soon as it
// and every peer before it have arrived, so that sums over peers run in one fixed order whatever
// the network does: the same seed gives the same bits at any K, on every backend.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "src/comm/communicator.hpp"

namespace strata {

class InPeerOrder {
public:
    /// `exchange` of a pattern with `num_peers` peers; it must outlive this object.
    InPeerOrder(Exchange& exchange, std::size_t num_peers)
        : exchange_(exchange), arrived_(num_peers, false) {}

    /// The next peer index in order, waiting (wait_any) until it has arrived; std::nullopt once
    /// every peer has been returned.
    [[nodiscard]] std::optional<int> next() {
        while (next_ < arrived_.size() && !arrived_[next_]) {
            const std::optional<int> peer = exchange_.wait_any();
            if (!peer) {
                break;  // every arrival was seen: only already-returned peers remain
            }
            arrived_[static_cast<std::size_t>(*peer)] = true;
        }
        if (next_ < arrived_.size() && arrived_[next_]) {
            return static_cast<int>(next_++);
        }
        return std::nullopt;
    }

private:
    Exchange& exchange_;
    std::vector<bool> arrived_;
    std::size_t next_ = 0;
};

}  // namespace strata
