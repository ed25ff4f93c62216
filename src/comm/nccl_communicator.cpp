// NcclCommunicator: MPI bootstrap of the NCCL communicator, grouped ncclSend/ncclRecv halo
// exchanges and ncclAllReduce on the CUDA backend's communication stream, ordered against the
// compute stream with events. The only file that includes <nccl.h>.
#include "src/comm/nccl_communicator.hpp"

#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "src/base/error.hpp"
#include "src/base/timer.hpp"
#include "src/base/unique.hpp"
#include "src/comm/exchange_check.hpp"
#include "src/device/cuda/cuda_backend.hpp"
#include "src/device/cuda/cuda_check.hpp"
#include "src/device/cuda/cuda_handles.hpp"

namespace strata {
namespace {

/// Does nothing on ncclSuccess; otherwise throws strata::Error "NCCL call failed: <expr>:
/// <ncclGetErrorString>: <ncclGetLastError>" located at file:line.
void nccl_check(ncclResult_t result, const char* expr, const char* file, int line) {
    if (result == ncclSuccess) [[likely]] {
        return;
    }
    const char* last = ncclGetLastError(nullptr);
    detail::throw_error(detail::concat("NCCL call failed: ", expr, ": ", ncclGetErrorString(result),
                                       (last != nullptr && last[0] != '\0') ? ": " : "",
                                       last != nullptr ? last : ""),
                        file, line);
}

#define STRATA_NCCL_CHECK(expr) nccl_check((expr), #expr, __FILE__, __LINE__)

void destroy_comm(ncclComm_t comm) noexcept {
    (void)ncclCommDestroy(comm);
}
using NcclComm = Unique<ncclComm_t, destroy_comm>;

/// Makes `compute` wait for `done` on wait(); the destructor does it too if nobody did, so
/// later compute work can never overwrite buffers NCCL still uses.
class StreamJoin {
public:
    StreamJoin(cudaStream_t compute, cuda::Event done)
        : compute_(compute), done_(std::move(done)) {}
    StreamJoin(const StreamJoin&) = delete;
    StreamJoin& operator=(const StreamJoin&) = delete;
    ~StreamJoin() {
        if (!joined_) {
            (void)cudaStreamWaitEvent(compute_, done_.get(), 0);
        }
    }
    void join() {
        if (!joined_) {
            STRATA_CUDA_CHECK(cudaStreamWaitEvent(compute_, done_.get(), 0));
            joined_ = true;
        }
    }

private:
    cudaStream_t compute_;
    cuda::Event done_;
    bool joined_ = false;
};

class NcclExchange final : public Exchange {
public:
    NcclExchange(cudaStream_t compute, cuda::Event done, int num_peers)
        : join_(compute, std::move(done)), num_peers_(num_peers) {}

    std::optional<int> wait_any() override {
        join_.join();
        if (next_ < num_peers_) {
            return next_++;
        }
        return std::nullopt;
    }
    void wait_all() override { join_.join(); }

private:
    StreamJoin join_;
    int num_peers_;
    int next_ = 0;
};

class NcclReduction final : public Reduction {
public:
    NcclReduction(cudaStream_t compute, cuda::Event done) : join_(compute, std::move(done)) {}
    void wait() override { join_.join(); }

private:
    StreamJoin join_;
};

}  // namespace

struct NcclCommunicator::State {
    CudaBackend* backend = nullptr;
    NcclComm comm;
    cuda::Event ready;  ///< recorded on the compute stream before each device operation

    cudaStream_t compute() const { return backend->compute_stream(); }
    cudaStream_t stream() const { return backend->comm_stream(); }

    /// The communication stream waits for everything queued on the compute stream so far.
    void follow_compute() {
        STRATA_CUDA_CHECK(cudaEventRecord(ready.get(), compute()));
        STRATA_CUDA_CHECK(cudaStreamWaitEvent(stream(), ready.get(), 0));
    }

    /// An event recorded on the communication stream now.
    cuda::Event record_done() {
        cuda::Event done = cuda::make_event();
        STRATA_CUDA_CHECK(cudaEventRecord(done.get(), stream()));
        return done;
    }

    void allreduce(std::span<float> data) {
        follow_compute();
        if (!data.empty()) {
            STRATA_NCCL_CHECK(ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat,
                                            ncclSum, comm.get(), stream()));
        }
    }
};

NcclCommunicator::NcclCommunicator(Backend& backend, MPI_Comm parent)
    : mpi_(parent), state_(std::make_unique<State>()) {
    auto* cuda_backend = dynamic_cast<CudaBackend*>(&backend);
    STRATA_CHECK(cuda_backend != nullptr,
                 "NcclCommunicator: needs the CUDA backend (make_cuda_backend), got another one");
    state_->backend = cuda_backend;
    STRATA_CUDA_CHECK(cudaSetDevice(cuda_backend->device()));
    state_->ready = cuda::make_event();

    // Rank 0 makes the id; a failure there is broadcast too, so that no rank waits forever.
    struct Bootstrap {
        int ok;
        ncclUniqueId id;
    } boot{};
    std::string failure;
    if (mpi_.rank() == 0) {
        try {
            STRATA_NCCL_CHECK(ncclGetUniqueId(&boot.id));
            boot.ok = 1;
        } catch (const Error& e) {
            failure = e.what();
        }
    }
    mpi_.broadcast(std::as_writable_bytes(std::span<Bootstrap>(&boot, 1)), 0);
    mpi_.reset_stats();
    STRATA_CHECK(boot.ok == 1, "NcclCommunicator: rank 0 could not create the NCCL unique id",
                 failure.empty() ? "" : ": ", failure);
    ncclComm_t comm = nullptr;
    STRATA_NCCL_CHECK(ncclCommInitRank(&comm, mpi_.size(), boot.id, mpi_.rank()));
    state_->comm = NcclComm(comm);
}

NcclCommunicator::~NcclCommunicator() {
    if (!state_->comm) {
        return;
    }
    if (std::uncaught_exceptions() > 0) {
        // A peer may never join the outstanding operations: do not wait for them.
        (void)ncclCommAbort(state_->comm.release());
        return;
    }
    (void)cudaStreamSynchronize(state_->stream());
    state_->comm.reset();
}

std::unique_ptr<Exchange> NcclCommunicator::start_exchange(const ExchangePattern& pattern,
                                                           ConstMatrixView send, MatrixView recv) {
    check_exchange(pattern, send, recv, rank(), size());
    State& s = *state_;
    s.follow_compute();
    STRATA_NCCL_CHECK(ncclGroupStart());
    try {
        for (std::size_t i = 0; i < pattern.peers.size(); ++i) {
            const index_t rows = pattern.recv_offsets[i + 1] - pattern.recv_offsets[i];
            if (rows > 0 && recv.cols > 0) {
                const MatrixView part = recv.row_range(pattern.recv_offsets[i], rows);
                STRATA_NCCL_CHECK(ncclRecv(part.data, part.size(), ncclFloat, pattern.peers[i],
                                           s.comm.get(), s.stream()));
            }
        }
        for (std::size_t i = 0; i < pattern.peers.size(); ++i) {
            const index_t rows = pattern.send_offsets[i + 1] - pattern.send_offsets[i];
            if (rows > 0 && send.cols > 0) {
                const ConstMatrixView part = send.row_range(pattern.send_offsets[i], rows);
                STRATA_NCCL_CHECK(ncclSend(part.data, part.size(), ncclFloat, pattern.peers[i],
                                           s.comm.get(), s.stream()));
            }
        }
    } catch (...) {
        (void)ncclGroupEnd();
        throw;
    }
    STRATA_NCCL_CHECK(ncclGroupEnd());
    auto exchange = std::make_unique<NcclExchange>(s.compute(), s.record_done(),
                                                   static_cast<int>(pattern.peers.size()));
    stats_.count_exchange(send.size() * sizeof(float), recv.size() * sizeof(float));
    return exchange;
}

std::unique_ptr<Reduction> NcclCommunicator::start_allreduce_sum(std::span<float> data) {
    state_->allreduce(data);
    auto reduction = std::make_unique<NcclReduction>(state_->compute(), state_->record_done());
    stats_.count_collective(data.size_bytes());
    return reduction;
}

void NcclCommunicator::allreduce_sum(std::span<float> data) {
    state_->allreduce(data);
    {
        const ScopedTimer timer(stats_.wait_seconds);
        STRATA_CUDA_CHECK(cudaStreamSynchronize(state_->stream()));
    }
    stats_.count_collective(data.size_bytes());
}

void NcclCommunicator::allreduce_sum(std::span<double> data) {
    mpi_.allreduce_sum(data);
    absorb_mpi_stats();
}

void NcclCommunicator::allreduce_sum(std::span<std::int64_t> data) {
    mpi_.allreduce_sum(data);
    absorb_mpi_stats();
}

void NcclCommunicator::allreduce_max(std::span<double> data) {
    mpi_.allreduce_max(data);
    absorb_mpi_stats();
}

void NcclCommunicator::allreduce_max(std::span<std::int64_t> data) {
    mpi_.allreduce_max(data);
    absorb_mpi_stats();
}

void NcclCommunicator::broadcast(std::span<std::byte> data, int root) {
    mpi_.broadcast(data, root);
    absorb_mpi_stats();
}

std::vector<std::byte> NcclCommunicator::gather(std::span<const std::byte> data, int root) {
    std::vector<std::byte> all = mpi_.gather(data, root);
    absorb_mpi_stats();
    return all;
}

void NcclCommunicator::barrier() {
    mpi_.barrier();
    absorb_mpi_stats();
}

void NcclCommunicator::absorb_mpi_stats() {
    const CommStats& inner = mpi_.stats();
    stats_.bytes_sent += inner.bytes_sent;
    stats_.bytes_received += inner.bytes_received;
    stats_.exchange_bytes_sent += inner.exchange_bytes_sent;
    stats_.exchange_bytes_received += inner.exchange_bytes_received;
    stats_.collective_bytes += inner.collective_bytes;
    stats_.wait_seconds += inner.wait_seconds;
    mpi_.reset_stats();
}

}  // namespace strata
