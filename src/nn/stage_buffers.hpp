// StageBuffers: the memory of one layer-pipeline stage as its StageStorage plans it — the
// whole-graph regions (values, aggregation gradients), the chunk arena (sized for the largest
// chunk), the T3 snapshot and the workspace — with the views a chunk's steps run on
// (StageViews, for the node runner) and the stage's history regions: what a PipelineHistory
// holds of them, downloaded and uploaded tensor by tensor.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "src/device/buffer.hpp"
#include "src/nn/executor.hpp"
#include "src/nn/node_runner.hpp"
#include "src/nn/pipeline_history.hpp"
#include "src/nn/stage_storage.hpp"

namespace strata {

class StageBuffers;

/// One call's views of a stage's slots: whole-graph buffers (and the model inputs) hold every
/// row, the chunk arena only the call's.
class StageViews final : public StepViews {
public:
    StageViews(const StageBuffers& buffers, RowRange chunk) : b_(buffers), r_(chunk) {}
    [[nodiscard]] RowRange range() const override { return r_; }
    [[nodiscard]] bool whole(int slot) const override;
    [[nodiscard]] MatrixView all(int slot) const override;
    [[nodiscard]] MatrixView rows(int slot) const override;
    [[nodiscard]] std::span<float> workspace(const PlanStep& step) const override;

private:
    const StageBuffers& b_;
    RowRange r_;
};

class StageBuffers {
public:
    /// Allocates the whole-graph regions (zeroed) and, when `snapshot`, the snapshot, touched now
    /// though first written at the first snapshot: the resident memory is the plan from the first
    /// epoch, so a run that does not fit fails at the start. `graph`, `aggregation` and the
    /// data's owner must outlive the buffers.
    StageBuffers(Backend& backend, const ModelGraph& graph, StageStorage storage,
                 const GraphOperator& aggregation, const TrainingData& data, bool snapshot);

    [[nodiscard]] const StageStorage& storage() const { return storage_; }
    /// Sizes the chunk arena, the chunk copies and the workspace for chunks of up to `rows`
    /// rows (only grows).
    void fit_chunks(index_t rows);
    /// The address of every chunk copy's region, in slot order (it moves when fit_chunks grows).
    [[nodiscard]] std::vector<const float*> chunk_regions() const;
    [[nodiscard]] StageViews views(RowRange chunk) const { return {*this, chunk}; }
    /// Every row of tensor t's value or gradient (a whole-graph buffer; a chunk copy's: its
    /// region with 0 rows, the same address for every chunk until fit_chunks grows it).
    [[nodiscard]] MatrixView value(TensorId t) const;
    [[nodiscard]] MatrixView grad(TensorId t) const;
    /// Every row of tensor t's snapshot (t an aggregation input of storage().snapshot; the
    /// snapshot allocated).
    [[nodiscard]] MatrixView snapshot_of(TensorId t) const;
    /// Zeroes every whole-graph row (values and gradients; not the snapshot).
    void zero();
    /// Receive rows (StageStorage::receive_per_row, past every chunk's arena rows): `rows` x
    /// `cols` starting `column` floats per row into them; column + cols <= receive_per_row,
    /// rows up to the chunks the arena was sized for.
    [[nodiscard]] MatrixView receive_rows(std::size_t column, index_t rows, index_t cols) const;
    /// Whether the stage keeps a snapshot (asked for, and aggregation inputs to keep; S x F's
    /// chunk copies keep theirs in the slices' mirrors only).
    [[nodiscard]] bool has_snapshot() const { return snapshot_ && !storage_.snapshot.empty(); }
    /// T3: copies the aggregation inputs' rows into the snapshot (`take`) or back from it.
    void copy_snapshot(bool take);

    /// A chunk copy's rows in a history (S x F): tensor t, part 0 (embeddings), 1 (snapshot)
    /// or 2 (gradients), every local row in host memory — the slices' mirror holds them.
    using ChunkRowsOut = std::function<void(TensorId, int, MatrixView)>;
    using ChunkRowsIn = std::function<void(TensorId, int, ConstMatrixView)>;
    /// The history regions into `history`: the aggregation inputs' rows, their snapshot (when
    /// `snapshot`) and the aggregation outputs' gradients (when `gradients`); chunk copies'
    /// rows from `chunk_rows`, every region's with `all_from_chunk_rows` (S x W x F: the
    /// mirrors hold the other ways' rows, which this rank's buffers never see).
    void download(PipelineHistory& history, bool snapshot, bool gradients,
                  const ChunkRowsOut& chunk_rows = {}, bool all_from_chunk_rows = false) const;
    /// The inverse: every tensor must match the region's name and shape; a format-4 history's
    /// rows are split by the regions; chunk copies' rows go to `chunk_rows`. Throws
    /// strata::Error naming the first that does not fit.
    void upload(const PipelineHistory& history, bool gradients, const ChunkRowsIn& chunk_rows = {});

    /// Floats of the chunk arena, the chunk copies and the workspace, and of the snapshot
    /// (memory plan).
    [[nodiscard]] std::size_t scratch_floats() const {
        return scratch_.size() + chunk_.size() + workspace_.size();
    }
    [[nodiscard]] std::size_t snapshot_floats() const { return backup_.size(); }

private:
    friend class StageViews;
    struct Region {
        const std::string* name;
        float* data;
        index_t rows;
        index_t cols;
        TensorId tensor;  ///< data null: a chunk copy (its rows in the slices' mirror)
        [[nodiscard]] std::size_t floats() const {
            return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
        }
    };
    /// The history's regions: embeddings, snapshot, gradients.
    [[nodiscard]] std::vector<std::vector<Region>> regions(bool snapshot, bool gradients) const;
    [[nodiscard]] const Location& at(int slot) const {
        return storage_.slots[static_cast<std::size_t>(slot)];
    }

    Backend& backend_;
    const ModelGraph& graph_;
    StageStorage storage_;
    const GraphOperator& aggregation_;
    const TrainingData& data_;
    Buffer<float> kept_;
    Buffer<float> kept_grad_;
    Buffer<float> backup_;
    Buffer<float> scratch_;
    Buffer<float> chunk_;  ///< chunk copies: slot at offset x scratch_rows_, chunk rows x cols
    Buffer<float> workspace_;
    bool snapshot_ = false;
    index_t scratch_rows_ = 0;  ///< rows the chunk arena was sized for
};

}  // namespace strata
