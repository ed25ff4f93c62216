// ForwardingCommunicator: a Communicator that passes every call to another one, the base of
// decorators that change a few calls (StagedCommunicator stages exchanges and reductions through
// host memory; tests reorder arrivals or count progress calls). A call the Communicator interface
// gains is forwarded here once, for all of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "src/comm/communicator.hpp"

namespace strata {

/// Lifetime: `inner` outlives this communicator.
class ForwardingCommunicator : public Communicator {
public:
    explicit ForwardingCommunicator(Communicator& inner) : inner_(&inner) {}

    [[nodiscard]] int rank() const override { return inner_->rank(); }
    [[nodiscard]] int size() const override { return inner_->size(); }
    [[nodiscard]] std::unique_ptr<Exchange> start_exchange(const ExchangePattern& pattern,
                                                           ConstMatrixView send,
                                                           MatrixView recv) override {
        return inner_->start_exchange(pattern, send, recv);
    }
    [[nodiscard]] std::unique_ptr<Exchange> start_packed_exchange(const ExchangePattern& pattern,
                                                                  ConstPackedRows send,
                                                                  PackedRows recv) override {
        return inner_->start_packed_exchange(pattern, send, recv);
    }
    [[nodiscard]] std::unique_ptr<Reduction> start_allreduce_sum(std::span<float> data) override {
        return inner_->start_allreduce_sum(data);
    }
    void allreduce_sum(std::span<float> data) override { inner_->allreduce_sum(data); }
    void allreduce_sum(std::span<double> data) override { inner_->allreduce_sum(data); }
    void allreduce_sum(std::span<std::int64_t> data) override { inner_->allreduce_sum(data); }
    void allreduce_max(std::span<double> data) override { inner_->allreduce_max(data); }
    void allreduce_max(std::span<std::int64_t> data) override { inner_->allreduce_max(data); }
    void broadcast(std::span<std::byte> data, int root) override { inner_->broadcast(data, root); }
    [[nodiscard]] std::vector<std::byte> gather(std::span<const std::byte> data,
                                                int root) override {
        return inner_->gather(data, root);
    }
    [[nodiscard]] ReceivedBlocks all_to_all(std::span<const std::byte> send,
                                            std::span<const std::size_t> send_offsets) override {
        return inner_->all_to_all(send, send_offsets);
    }
    void barrier() override { inner_->barrier(); }
    [[nodiscard]] std::int64_t agree_max(std::int64_t value, const char* what) override {
        return inner_->agree_max(value, what);
    }
    void set_wait_limit(double seconds) override { inner_->set_wait_limit(seconds); }
    [[nodiscard]] double wait_limit() const override { return inner_->wait_limit(); }
    [[nodiscard]] bool needs_progress() const override { return inner_->needs_progress(); }
    void progress() override { inner_->progress(); }
    [[nodiscard]] int node_of(int rank) const override { return inner_->node_of(rank); }
    [[nodiscard]] int num_nodes() const override { return inner_->num_nodes(); }
    [[nodiscard]] const CommStats& stats() const override { return inner_->stats(); }
    void reset_stats() override { inner_->reset_stats(); }

protected:
    [[nodiscard]] Communicator& inner() const { return *inner_; }

private:
    Communicator* inner_;
};

}  // namespace strata
