// StagedCommunicator: a host-memory Communicator (MPI) serving a device backend through
// page-locked staging buffers (`strata train --device cuda --comm mpi`). Several ranks can then
// share one GPU, which NCCL refuses; on the CPU backend staging is a plain copy.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "src/comm/forwarding_communicator.hpp"
#include "src/device/buffer.hpp"

namespace strata {

/// Memory: start_exchange(), start_allreduce_sum() and allreduce_sum(std::span<float>) take
/// memory of `backend` (like NcclCommunicator); the double/int64 reductions, broadcast() and
/// barrier() take host memory and go straight to the host communicator.
///
/// Exchange: the send rows are downloaded into a staging buffer (which waits for the work
/// queued on the backend), the host communicator's exchange is started on staging buffers, and
/// wait_any() uploads each peer's rows into `recv` as they arrive, so the caller's halo SpMM of
/// that peer finds them in place. Reductions: download, host reduction, upload in wait().
///
/// Staging buffers come from a pool that grows to the largest set in flight and is reused.
/// Every other call (stats, progress, the other reductions) is the host communicator's. Lifetime:
/// `backend` outlives the communicator, which outlives every Exchange and Reduction it started. Not
/// thread-safe.
class StagedCommunicator final : public ForwardingCommunicator {
public:
    StagedCommunicator(Backend& backend, std::unique_ptr<Communicator> host);
    StagedCommunicator(const StagedCommunicator&) = delete;
    StagedCommunicator& operator=(const StagedCommunicator&) = delete;
    ~StagedCommunicator() override;

    [[nodiscard]] std::unique_ptr<Exchange> start_exchange(const ExchangePattern& pattern,
                                                           ConstMatrixView send,
                                                           MatrixView recv) override;
    /// Not staged: device rows are not packed yet (Communicator's default, which throws).
    [[nodiscard]] std::unique_ptr<Exchange> start_packed_exchange(const ExchangePattern& pattern,
                                                                  ConstPackedRows send,
                                                                  PackedRows recv) override {
        return Communicator::start_packed_exchange(pattern, send, recv);
    }
    [[nodiscard]] std::unique_ptr<Reduction> start_allreduce_sum(std::span<float> data) override;
    void allreduce_sum(std::span<float> data) override;
    using ForwardingCommunicator::allreduce_sum;  // double and int64: the host's, unstaged

    /// A staging buffer of at least `count` floats, lent until the lease dies.
    class Lease {
    public:
        Lease(StagedCommunicator& owner, std::size_t count);
        Lease(const Lease&) = delete;
        Lease& operator=(const Lease&) = delete;
        ~Lease();
        [[nodiscard]] float* data() { return buffer_.data(); }

    private:
        StagedCommunicator& owner_;
        HostBuffer<float> buffer_;
    };

    /// Staging buffers allocated so far (for tests: reuse keeps this small).
    [[nodiscard]] std::size_t staging_buffers() const { return allocated_; }

private:
    Backend& backend_;
    std::unique_ptr<Communicator> host_;
    std::vector<HostBuffer<float>> free_;  ///< returned leases, reused by size
    std::size_t allocated_ = 0;
};

}  // namespace strata
