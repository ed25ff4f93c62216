// Checkpointer: snapshot on rank 0.
#include "training/checkpointer.hpp"

#include <array>
#include <cstring>
#include <span>

#include "src/base/error.hpp"
#include "training/checkpoint_pack.hpp"

namespace strata {

Checkpointer::Checkpointer(CheckpointDir dir, int every, bool root, Checkpoint base,
                           ModelParameters& parameters, Optimizer& optimizer,
                           const BestTracker& best)
    : dir_(std::move(dir)),
      every_(every),
      root_(root),
      state_(std::move(base)),
      parameters_(parameters),
      optimizer_(optimizer),
      best_(best) {}

namespace {

/// Rank 0 returns every rank's history in rank order; the others nothing.
std::vector<PipelineHistory> gather_histories(const PipelineHistory& mine, Communicator& comm) {
    Packer packer;
    put(packer, mine);
    const std::vector<std::byte>& bytes = packer.bytes();
    const std::array<std::int64_t, 1> size{static_cast<std::int64_t>(bytes.size())};
    const std::vector<std::byte> sizes = comm.gather(std::as_bytes(std::span(size)), 0);
    const std::vector<std::byte> data = comm.gather(bytes, 0);
    std::vector<PipelineHistory> out;
    if (comm.rank() != 0) {
        return out;
    }
    std::vector<std::int64_t> counts(static_cast<std::size_t>(comm.size()));
    STRATA_CHECK(sizes.size() == counts.size() * sizeof(std::int64_t), "checkpoint: gathered ",
                 sizes.size(), " bytes of history sizes");
    std::memcpy(counts.data(), sizes.data(), sizes.size());
    std::size_t at = 0;
    for (const std::int64_t count : counts) {
        const auto n = static_cast<std::size_t>(count);
        STRATA_CHECK(at + n <= data.size(), "checkpoint: gathered ", data.size(),
                     " bytes of pipeline history, short of the sizes");
        Unpacker unpacker(std::span<const std::byte>(data).subspan(at, n),
                          "checkpoint: gathered pipeline history");
        out.emplace_back();
        get(unpacker, out.back());
        at += n;
    }
    return out;
}

}  // namespace

void Checkpointer::add_pipeline_state(Communicator& comm,
                                      std::function<PipelineCheckpointState()> source) {
    STRATA_CHECK(root_ == (comm.rank() == 0), "checkpointer: rank ", comm.rank(),
                 " writes, but pipeline state is gathered to rank 0");
    comm_ = &comm;
    pipeline_ = std::move(source);
}

void Checkpointer::end_epoch(const EpochStats& stats, FitState& state) {
    const bool due =
        (every_ > 0 && stats.epoch % every_ == 0) || state.last_epoch() || state.stopping();
    if (!due) {
        return;
    }
    if (pipeline_) {  // collective: every rank is here at the same epochs
        PipelineCheckpointState mine = pipeline_();
        state_.pipeline_history = gather_histories(mine.history, *comm_);
        if (root_) {
            state_.guard = std::move(mine.guard);
        }
    }
    if (!root_) {
        return;
    }
    state_.epoch = state.epoch;
    state_.early_stopped = state.early_stopped;
    state_.params = parameters_.download();
    state_.optimizer_state = optimizer_.state();
    state_.selection = best_.selection();
    state_.best_params = best_.download();
    state_.best = state.best;
    state_.history = state.history;
    if (switched_) {
        state_.halo_precision_switched = switched_();
    }
    dir_.save(state_);
    state_.pipeline_history.clear();  // rank 0 holds every rank's rows only while it writes
    state_.pipeline_history.shrink_to_fit();
}

void restore(const Checkpoint& checkpoint, ModelParameters& parameters, Optimizer& optimizer,
             BestTracker& best, FitState& state) {
    parameters.upload(checkpoint.params);
    optimizer.set_state(checkpoint.optimizer_state);
    best.upload(checkpoint.best_params);
    state.epoch = checkpoint.epoch;
    state.best = checkpoint.best;
    state.history = checkpoint.history;
    state.early_stopped = checkpoint.early_stopped;
}

}  // namespace strata
