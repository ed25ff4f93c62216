// StageReceives: one wave's receives of a pipeline stage — forward values from the stage before,
// or backward gradients from the stage after — posted one step ahead, so that step k+1's rows
// cross the link while step k computes (over TCP, MPI moves bytes only inside MPI calls: the
// executor calls progress() between a chunk's steps). Rows land in staging views (the chunk
// arena's receive rows, StageStorage::receive_per_row) and are copied into their slots when
// their step begins: an aggregation of step k reads every row of its input, so step k+1's rows
// must not change under it.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "src/comm/communicator.hpp"
#include "src/comm/wire_exchange.hpp"
#include "src/device/backend.hpp"
#include "src/tensor/matrix_view.hpp"

namespace strata {

/// A point-to-point message in flight (the pattern and the packed records outlive the exchange
/// that reads them; `packed` is empty at fp32).
struct StageMessage {
    ExchangePattern pattern;
    std::vector<float> packed;
    std::unique_ptr<WireExchange> exchange;
};

class StageReceives {
public:
    /// Receives from rank `peer` of `comm`; both must outlive it.
    StageReceives(Communicator& comm, Backend& backend, int peer);
    StageReceives(const StageReceives&) = delete;
    StageReceives& operator=(const StageReceives&) = delete;
    ~StageReceives();

    /// Posts one step's receives, one message per view, in order (the sender sends them in the
    /// same order, at `precision`: the records are unpacked into the views). Nothing may be
    /// posted already. The views must stay alive until finish().
    void post(std::vector<MatrixView> staging, HaloPrecision precision);
    /// Waits for the posted receives and copies staging view i into `into[i]` (the same shape);
    /// returns the seconds spent waiting (the copies not included).
    double finish(std::span<const MatrixView> into);
    [[nodiscard]] bool posted() const { return !messages_.empty(); }

private:
    Communicator& comm_;
    Backend& backend_;
    int peer_;
    std::vector<MatrixView> staging_;
    std::vector<std::unique_ptr<StageMessage>> messages_;
};

}  // namespace strata
