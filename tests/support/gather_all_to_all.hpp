// GatherAllToAll: a ForwardingCommunicator whose all_to_all is Communicator's default (P rounds of
// gather()), so that a test runs the default over an MpiCommunicator, whose own all_to_all is
// point-to-point, and can compare the two.
#pragma once

#include <cstddef>
#include <span>

#include "src/comm/forwarding_communicator.hpp"

namespace strata::test {

class GatherAllToAll final : public ForwardingCommunicator {
public:
    using ForwardingCommunicator::ForwardingCommunicator;

    [[nodiscard]] ReceivedBlocks all_to_all(std::span<const std::byte> send,
                                            std::span<const std::size_t> send_offsets) override {
        return Communicator::all_to_all(send, send_offsets);
    }
};

}  // namespace strata::test
