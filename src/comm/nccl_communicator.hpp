// NcclCommunicator: the Communicator for the CUDA backend. Halo exchanges and float all-reduces
// run on device memory with NCCL on the backend's communication stream; host-data collectives go
// to an inner MpiCommunicator. No CUDA or NCCL header is visible here.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <mpi.h>

#include "src/comm/communicator.hpp"
#include "src/comm/mpi_communicator.hpp"

namespace strata {

class Backend;

/// Communicator over NCCL, one rank per GPU, bootstrapped from an MPI communicator.
///
/// Memory: start_exchange(), start_allreduce_sum() and allreduce_sum(std::span<float>) take
/// DEVICE memory of the backend; the double/int64 all-reduces, broadcast(), gather() and barrier()
/// take host memory and are delegated to an inner MpiCommunicator.
///
/// Ordering: device operations start after all work already queued on the backend's compute
/// stream (an event), run on its communication stream, and are finished for the compute stream
/// by Exchange::wait_any()/wait_all() and Reduction::wait(), which make the compute stream wait
/// for an event and never block the host. Every rank must start the same device operations in
/// the same order (NCCL matches them by order on the communicator). Peers whose row count is 0
/// are skipped on both sides of an exchange, so the two ranks' patterns must agree.
///
/// Errors: NCCL failures throw strata::Error with ncclGetErrorString and ncclGetLastError; bad
/// patterns or shapes throw strata::Error. Lifetime: the backend and the MPI session outlive the
/// communicator, which outlives every Exchange and Reduction it started. Not thread-safe.
class NcclCommunicator final : public Communicator {
public:
    /// Collective over `parent`: duplicates it (inner MpiCommunicator), rank 0 creates the NCCL
    /// unique id, MPI_Bcast sends it to all, and ncclCommInitRank builds the NCCL communicator on
    /// the backend's device. Throws strata::Error when `backend` is not the CUDA backend or
    /// NCCL fails (e.g. two ranks on one GPU).
    explicit NcclCommunicator(Backend& backend, MPI_Comm parent = MPI_COMM_WORLD);
    NcclCommunicator(const NcclCommunicator&) = delete;
    NcclCommunicator& operator=(const NcclCommunicator&) = delete;
    NcclCommunicator(NcclCommunicator&&) = delete;
    NcclCommunicator& operator=(NcclCommunicator&&) = delete;
    /// Waits for the communication stream, then destroys the NCCL communicator (aborts it when
    /// an exception is unwinding). Never throws.
    ~NcclCommunicator() override;

    [[nodiscard]] int rank() const override { return mpi_.rank(); }
    [[nodiscard]] int size() const override { return mpi_.size(); }

    /// Grouped ncclRecv/ncclSend, one pair per peer with rows (same pattern rules as
    /// MpiCommunicator::start_exchange). wait_any() makes the compute stream wait for the whole
    /// group once and then returns every peer index in order, one per call. Stats as for MPI.
    [[nodiscard]] std::unique_ptr<Exchange> start_exchange(const ExchangePattern& pattern,
                                                           ConstMatrixView send,
                                                           MatrixView recv) override;
    /// In-place ncclAllReduce (sum) of device data on the communication stream; wait() makes the
    /// compute stream wait for it.
    [[nodiscard]] std::unique_ptr<Reduction> start_allreduce_sum(std::span<float> data) override;
    /// In-place ncclAllReduce of DEVICE data; returns when it is done (time added to wait_seconds).
    void allreduce_sum(std::span<float> data) override;
    /// Host data, through the inner MpiCommunicator (its stats are added to these).
    void allreduce_sum(std::span<double> data) override;
    void allreduce_sum(std::span<std::int64_t> data) override;
    void allreduce_max(std::span<double> data) override;
    void allreduce_max(std::span<std::int64_t> data) override;
    void broadcast(std::span<std::byte> data, int root) override;
    [[nodiscard]] std::vector<std::byte> gather(std::span<const std::byte> data, int root) override;
    void barrier() override;

    [[nodiscard]] const CommStats& stats() const override { return stats_; }
    void reset_stats() override { stats_ = CommStats{}; }

private:
    struct State;  ///< the NCCL communicator, streams and events (nccl_communicator.cpp)

    /// Adds the inner communicator's counters to stats_ and clears them.
    void absorb_mpi_stats();

    MpiCommunicator mpi_;
    std::unique_ptr<State> state_;
    CommStats stats_;
};

}  // namespace strata
