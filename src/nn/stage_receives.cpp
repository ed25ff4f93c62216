// StageReceives: post a step's receives ahead, finish them when the step begins (header).
#include "src/nn/stage_receives.hpp"

#include "src/base/error.hpp"
#include "src/base/timer.hpp"

namespace strata {

StageReceives::StageReceives(Communicator& comm, Backend& backend, int peer)
    : comm_(comm), backend_(backend), peer_(peer) {}

StageReceives::~StageReceives() = default;

void StageReceives::post(std::vector<MatrixView> staging, HaloPrecision precision) {
    STRATA_CHECK(messages_.empty(), "pipeline: a step's receives posted twice");
    staging_ = std::move(staging);
    for (const MatrixView& into : staging_) {
        auto m = std::make_unique<StageMessage>();
        m->pattern = ExchangePattern{
            .peers = {peer_}, .send_offsets = {0, 0}, .recv_offsets = {0, into.rows}};
        m->packed.resize(WireExchange::packed_floats(precision, 0, into.rows, into.cols));
        m->exchange = std::make_unique<WireExchange>(
            comm_, precision, m->pattern, ConstMatrixView{nullptr, 0, into.cols}, into, m->packed);
        messages_.push_back(std::move(m));
    }
}

double StageReceives::finish(std::span<const MatrixView> into) {
    STRATA_CHECK(messages_.size() == into.size(), "pipeline: ", into.size(),
                 " tensors to receive, ", messages_.size(), " posted");
    Stopwatch watch;
    for (const auto& m : messages_) {
        m->exchange->wait_all();  // unpacks the records into the staging view
    }
    const double waited = watch.seconds();
    messages_.clear();
    for (std::size_t i = 0; i < into.size(); ++i) {
        STRATA_ASSERT(into[i].rows == staging_[i].rows && into[i].cols == staging_[i].cols);
        if (into[i].size() > 0) {
            backend_.copy(into[i].data, staging_[i].data, into[i].size() * sizeof(float));
        }
    }
    return waited;
}

}  // namespace strata
