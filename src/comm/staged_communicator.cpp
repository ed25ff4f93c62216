// StagedCommunicator: download → host exchange/reduction → upload, with pooled staging buffers.
#include "src/comm/staged_communicator.hpp"

#include <optional>
#include <utility>

#include "src/base/error.hpp"
#include "src/comm/exchange_check.hpp"

namespace strata {
namespace {

/// A host exchange on staging buffers; uploads each peer's rows when wait_any() returns it.
class StagedExchange final : public Exchange {
public:
    StagedExchange(Backend& backend, StagedCommunicator& owner, const ExchangePattern& pattern,
                   ConstMatrixView send, MatrixView recv, Communicator& host)
        : backend_(backend),
          recv_offsets_(pattern.recv_offsets),
          recv_(recv),
          uploaded_(pattern.peers.size(), false),
          send_stage_(owner, send.size()),
          recv_stage_(owner, recv.size()) {
        if (send.size() > 0) {
            backend_.download(send_stage_.data(), send.data, send.size() * sizeof(float));
        }
        host_recv_ = {recv_stage_.data(), recv.rows, recv.cols};
        exchange_ =
            host.start_exchange(pattern, {send_stage_.data(), send.rows, send.cols}, host_recv_);
    }

    std::optional<int> wait_any() override {
        const std::optional<int> peer = exchange_->wait_any();
        if (peer) {
            upload(static_cast<std::size_t>(*peer));
        }
        return peer;
    }

    void wait_all() override {
        exchange_->wait_all();
        for (std::size_t p = 0; p < uploaded_.size(); ++p) {
            upload(p);
        }
    }

private:
    void upload(std::size_t p) {
        if (uploaded_[p]) {
            return;
        }
        uploaded_[p] = true;
        const index_t first = recv_offsets_[p];
        const index_t rows = recv_offsets_[p + 1] - first;
        const MatrixView rows_view = recv_.row_range(first, rows);
        if (rows_view.size() > 0) {
            backend_.upload(rows_view.data, host_recv_.row_range(first, rows).data,
                            rows_view.size() * sizeof(float));
        }
    }

    Backend& backend_;
    std::vector<index_t> recv_offsets_;
    MatrixView recv_;
    MatrixView host_recv_;
    std::vector<bool> uploaded_;
    // The leases outlive the host exchange, whose destructor waits for its requests.
    StagedCommunicator::Lease send_stage_;
    StagedCommunicator::Lease recv_stage_;
    std::unique_ptr<Exchange> exchange_;
};

/// A host all-reduce of a staged copy; wait() uploads the sums.
class StagedReduction final : public Reduction {
public:
    StagedReduction(Backend& backend, StagedCommunicator& owner, std::span<float> data,
                    Communicator& host)
        : backend_(backend), data_(data), stage_(owner, data.size()) {
        if (!data.empty()) {
            backend_.download(stage_.data(), data.data(), data.size_bytes());
        }
        reduction_ = host.start_allreduce_sum({stage_.data(), data.size()});
    }

    void wait() override {
        reduction_->wait();
        if (!data_.empty()) {
            backend_.upload(data_.data(), stage_.data(), data_.size_bytes());
        }
    }

private:
    Backend& backend_;
    std::span<float> data_;
    StagedCommunicator::Lease stage_;
    std::unique_ptr<Reduction> reduction_;
};

}  // namespace

StagedCommunicator::Lease::Lease(StagedCommunicator& owner, std::size_t count) : owner_(owner) {
    if (count == 0) {
        return;
    }
    auto& pool = owner.free_;
    // The smallest free buffer that fits; else a new one.
    auto best = pool.end();
    for (auto it = pool.begin(); it != pool.end(); ++it) {
        if (it->size() >= count && (best == pool.end() || it->size() < best->size())) {
            best = it;
        }
    }
    if (best != pool.end()) {
        buffer_ = std::move(*best);
        pool.erase(best);
    } else {
        buffer_ = HostBuffer<float>(owner.backend_, count);
        ++owner.allocated_;
    }
}

StagedCommunicator::Lease::~Lease() {
    if (buffer_.size() > 0) {
        try {
            owner_.free_.push_back(std::move(buffer_));
        } catch (...) {  // out of memory growing the pool: the buffer is simply freed
        }
    }
}

namespace {

Communicator& checked_host(const std::unique_ptr<Communicator>& host) {
    STRATA_CHECK(host != nullptr, "StagedCommunicator: no host communicator");
    return *host;
}

}  // namespace

StagedCommunicator::StagedCommunicator(Backend& backend, std::unique_ptr<Communicator> host)
    : ForwardingCommunicator(checked_host(host)), backend_(backend), host_(std::move(host)) {}

StagedCommunicator::~StagedCommunicator() = default;

std::unique_ptr<Exchange> StagedCommunicator::start_exchange(const ExchangePattern& pattern,
                                                             ConstMatrixView send,
                                                             MatrixView recv) {
    // Checked before the staging copy reads `send` with the pattern's sizes.
    check_exchange(pattern, send, recv, rank(), size());
    return std::make_unique<StagedExchange>(backend_, *this, pattern, send, recv, *host_);
}

std::unique_ptr<Reduction> StagedCommunicator::start_allreduce_sum(std::span<float> data) {
    return std::make_unique<StagedReduction>(backend_, *this, data, *host_);
}

void StagedCommunicator::allreduce_sum(std::span<float> data) {
    if (data.empty()) {
        host_->allreduce_sum(data);
        return;
    }
    Lease stage(*this, data.size());
    backend_.download(stage.data(), data.data(), data.size_bytes());
    host_->allreduce_sum(std::span<float>(stage.data(), data.size()));
    backend_.upload(data.data(), stage.data(), data.size_bytes());
}

}  // namespace strata
