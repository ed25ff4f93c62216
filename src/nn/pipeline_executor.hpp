// PipelineExecutor: layer-pipeline parallelism for deep GNNs (GNNPipe, Chen et al. 2023, with
// its three convergence techniques switchable). Rank s runs stage s of a StageLayout on the whole
// graph, chunk by chunk: a GPipe wave per epoch — every chunk forward in a (shuffled) order,
// staggered one chunk per stage, then backward in reverse — with one optimizer step per epoch, so
// weights are never stale. Only the tensors crossing a stage cut travel: 2 x |V| x their widths x
// 4 bytes per cut and epoch, independent of depth (graph parallelism sends halo rows at every
// layer); at PipelineOptions::precision bf16 or int8 each row is a packed record instead (2 x
// width, or width + 4 bytes; src/comm/wire_exchange.hpp), the hybrid's mirror rows too.
//
// Staleness: an aggregation of chunk c reads its in-neighbours' rows from whole-graph buffers:
// fresh for chunks already processed this epoch, historical (last epoch's, or a snapshot's) for
// the others; the backward pull reads out-neighbours' gradients likewise. With one chunk nothing
// is stale and the run equals the exact executor (tests/layers/test_pipeline_executor.cpp).
//
// What is the pipeline's own: the waves, the chunks, the stage-to-stage transfers, the hybrid's
// mirror exchange and the history. What each chunk computes is the stage's memory plan
// (plan_stage_schedule, execution_plan.hpp) run through the node runner (node_runner.hpp), the
// same code as the full-graph executor: steps [0, boundary) when the chunk goes forward, the
// rest (recomputations, the loss, backward) when it comes back. Memory per stage
// (stage_storage.hpp): whole-graph buffers where whole-graph rows are read — aggregation inputs
// and outputs, tensors crossing a cut, aggregation outputs' gradients — and for the values
// `recompute` keeps from a chunk's forward to its backward; chunk-sized scratch for the rest,
// which backward recomputes chunk by chunk (row-local ops only: `all` keeps layer inputs,
// `none` and `aggregation` keep every value backward reads, since the pipeline never
// recomputes an aggregation). Every mode gives the same bits.
// Evaluation is exact and full-graph: rank 0 runs the model's evaluation schedule alone
// (FullGraphExecutor, whole graph, replicated weights) and broadcasts the figures.
// What staleness changes (staleness_losses, for the accuracy guard): the next training step run
// twice on the current weights, without an update — as it will run (its chunk order, dropout
// masks, snapshot and historical rows) and with one chunk per way (every row fresh, the same
// masks) — and the relative difference of the two parameter gradients; every buffer is put back
// as it was.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "src/comm/communicator.hpp"
#include "src/comm/halo_packing.hpp"
#include "src/device/buffer.hpp"
#include "src/nn/executor.hpp"
#include "src/nn/full_graph_executor.hpp"
#include "src/nn/model_parameters.hpp"
#include "src/nn/pipeline_history.hpp"
#include "src/nn/pipeline_slices.hpp"
#include "src/nn/stage_layout.hpp"
#include "src/nn/way_mirrors.hpp"

namespace strata {

/// GNNPipe's convergence techniques and the chunking (`strata train --parallel pipeline`).
struct PipelineOptions {
    int stages = 1;  ///< S
    /// W ranks per stage (the hybrid): world = S x W ranks, rank = stage x W + way; way w owns
    /// chunks [w C/W, (w+1) C/W) and exchanges mirror rows with the other ways of its stage
    /// before each aggregation (way_mirrors.hpp). W = 1: the pure pipeline.
    int ways = 1;
    /// The operator's structure (any matrix with Â's off-diagonal pattern, rows in chunk order);
    /// required when ways > 1. Read in the constructor only.
    const HostCsr* structure = nullptr;
    std::vector<index_t> chunk_offsets{};  ///< C + 1 row offsets: chunk c = [o[c], o[c+1])
    bool shuffle = true;                   ///< T1: a new chunk order every epoch
    bool grad_zero_scale = true;  ///< T2: historical gradients zeroed each epoch, processed
                                  ///< chunks' aggregation-output gradients scaled by 2
    int snapshot_period = 23;     ///< T3: historical embeddings from a snapshot refreshed every
                                  ///< P epochs (0: last epoch's)
    std::uint64_t seed = 0;       ///< chunk order
    std::int64_t nnz = 0;         ///< entries of the aggregation operator (stage cost model)
    /// What backward recomputes chunk by chunk instead of keeping whole-graph rows (above).
    Recompute recompute = Recompute::none;
    /// Feature slices inside each stage (S x F): world = S x F ranks, rank = stage x F + slice;
    /// the rank holds its slice's share of every chunk (pipeline_slices.hpp), and its
    /// aggregations run through `slices` (over the stage's F ranks). With W ways (S x W x F):
    /// rank = (stage x W + way) x F + slice, way w's F ranks of a stage are the feature group
    /// (it switches way w's chunks only), and the ways' mirror rows travel in the slices'
    /// mirrors at the slice's width (`chunk_offsets`: the global chunks). Null: F = 1. Must
    /// outlive the executor.
    PipelineSlices* slices = nullptr;
    /// Calls the communicator's progress() after each of a chunk's steps (when it
    /// needs_progress()), so that stage transfers in flight and the next step's receives, posted
    /// ahead, advance while the chunk computes; false: bytes move only inside the waits. The
    /// same bits either way (the run option overlap).
    bool progress = true;
    /// The wire format of the stage transfers (activations forward, gradients backward) and the
    /// hybrid's mirror rows (run option halo_precision; halo_packing.hpp). Host memory unless
    /// fp32; the layout switches of feature slices stay fp32.
    HaloPrecision precision = HaloPrecision::fp32;
};

/// The next training step of the same weights and dropout masks from stale and from fresh rows:
/// the losses, the two gradients (host, summed over ranks: every rank holds the same) and their
/// difference ||g_stale - g_fresh|| / ||g_fresh||.
struct StalenessLosses {
    double stale = 0.0;
    double fresh = 0.0;
    double gradient_error = 0.0;
    std::vector<float> stale_gradient;
    std::vector<float> fresh_gradient;
};

/// The next training step of the same weights, history and dropout masks with stage transfers
/// (and mirror rows) at the run's precision and at fp32: the two losses and the gradients'
/// difference ||g_packed - g_fp32|| / ||g_fp32|| (the precision guard's measure).
struct PrecisionLosses {
    double packed = 0.0;
    double fp32 = 0.0;
    double gradient_error = 0.0;
};

/// What an accuracy guard may turn down (training/accuracy_guard.hpp).
class StalenessControl {
public:
    virtual ~StalenessControl() = default;
    [[nodiscard]] virtual int chunks() const = 0;
    [[nodiscard]] virtual int snapshot_period() const = 0;
    /// The fewest chunks, where nothing is stale (one per way).
    [[nodiscard]] virtual int min_chunks() const { return 1; }
    /// `chunks` (a multiple of min_chunks(), up to the initial C) chunks made of consecutive
    /// initial chunks, and the snapshot period (0: off). min_chunks() chunks are exact.
    virtual void set_staleness(int chunks, int snapshot_period) = 0;
    /// Forgets every historical row (embeddings, gradients, the snapshot): after the weights
    /// were rolled back, what the abandoned epochs left must not be read.
    virtual void reset_history() = 0;
    /// Training epoch `epoch`'s step on the current weights as it would run (its chunk order,
    /// dropout masks, snapshot and historical rows) and with min_chunks() chunks (every row
    /// fresh, the same masks), without an update: the losses and the gradients' relative
    /// difference, the same on every rank; collective. Leaves the history, the settings and the
    /// figures as it found them (the gradients zeroed), so that the run goes on as without.
    [[nodiscard]] virtual StalenessLosses staleness_losses(std::int64_t epoch) = 0;
};

class StageBuffers;
class StageViews;

class PipelineExecutor final : public Executor, public StalenessControl {
public:
    /// `world`: S x W ranks (stage = rank / W, way = rank % W), or S x W x F with feature
    /// slices (stage = rank / (W F), way = rank / F % W; `aggregation` and `data` then cover the
    /// whole graph, for rank 0's evaluation, and the rank trains on its slice's share of them).
    /// `self`: a one-rank communicator for rank 0's evaluation. `aggregation`: Â over the whole
    /// graph (no halo peers), rows in chunk order, as `data`. Everything must outlive the executor.
    /// Throws strata::OptionError naming the option ("ways = 0: must be at least 1") on a layout
    /// that does not fit (stages vs ranks or layers, chunks vs ways) or a model with an op that is
    /// neither row-local nor an aggregation (attention, batch norm); strata::Error on offsets that
    /// do not cover the rows.
    PipelineExecutor(Backend& backend, Communicator& world, Communicator& self, ModelGraph& graph,
                     ModelParameters& parameters, GraphOperator& aggregation, TrainingData data,
                     const PipelineOptions& options);
    ~PipelineExecutor() override;

    /// One GPipe wave; the parameter gradients are summed over stages (every rank then holds the
    /// whole gradient, so every rank's optimizer makes the same step).
    double train_step(std::int64_t epoch) override;
    Evaluation evaluate() override;
    [[nodiscard]] std::vector<MemoryLine> memory_plan() const override;
    [[nodiscard]] HaloBytes halo_bytes() const override;
    /// Feature slices: the stage's layout switches (pipeline_slices.hpp); else none.
    [[nodiscard]] HaloBytes switch_bytes() const override { return aggregation_.switch_bytes(); }
    [[nodiscard]] std::optional<PipelineEpochStats> pipeline_epoch() const override {
        return last_;
    }

    /// What a resumed run needs to continue this one exactly: the settings in force (chunks,
    /// snapshot period, whether a snapshot exists) and this rank's historical rows (aggregation
    /// inputs, the snapshot, and aggregation-output gradients unless T2 zeroes them), tensor by
    /// tensor. Differs per rank; does not depend on `recompute`.
    [[nodiscard]] PipelineHistory history() const;
    /// The inverse of history(), on the same rank of the same layout (a format-4 history's
    /// untyped rows are split by this layout). Throws strata::Error naming the first tensor,
    /// size or setting that does not fit.
    void restore_history(const PipelineHistory& history);

    [[nodiscard]] const StageLayout& layout() const { return layout_; }
    [[nodiscard]] int stage() const { return world_.rank() / (options_.ways * slices()); }
    [[nodiscard]] int way() const { return (world_.rank() / slices()) % options_.ways; }
    /// F (1 without feature slices).
    [[nodiscard]] int slices() const { return options_.slices ? options_.slices->slices() : 1; }
    [[nodiscard]] int chunks() const override { return static_cast<int>(offsets_.size()) - 1; }
    [[nodiscard]] int snapshot_period() const override { return snapshot_period_; }
    [[nodiscard]] int min_chunks() const override { return options_.ways; }
    void set_staleness(int chunks, int snapshot_period) override;
    void reset_history() override;
    [[nodiscard]] StalenessLosses staleness_losses(std::int64_t epoch) override;

    /// The wire format of the stage transfers and mirror rows from the next step on.
    void set_precision(HaloPrecision precision) { precision_ = precision; }
    [[nodiscard]] HaloPrecision precision() const { return precision_; }
    /// Training epoch `epoch`'s step on the current weights at precision() and at fp32, without
    /// an update; collective. Leaves the history, the settings and the figures as it found them
    /// (the gradients zeroed), as staleness_losses does.
    [[nodiscard]] PrecisionLosses precision_losses(std::int64_t epoch);

private:
    struct WaveState;
    /// One chunk's forward steps; `step`: the chunk each way processes now (hybrid), this
    /// way's is step[way()].
    void forward_chunk(std::span<const int> step, std::uint64_t epoch);
    /// One chunk's backward steps (recomputations and the loss included); returns its loss.
    double backward_chunk(std::span<const int> step, std::uint64_t epoch);
    [[nodiscard]] RowRange range(int chunk) const;
    /// Advances the messages in flight (PipelineOptions::progress).
    void progress() {
        if (options_.progress && world_.needs_progress()) {
            world_.progress();
        }
    }
    /// What a chunk's op calls get (a training call; `recompute`: a forward re-run in backward).
    [[nodiscard]] OpContext chunk_context(std::uint64_t epoch, bool recompute);
    /// Hybrid: the mirror rows of the chunks the ways process now, into `buffer` (whole graph).
    void exchange_mirrors(MatrixView buffer, std::span<const int> step, bool forward);
    /// Hybrid: exchange_mirrors for every slot step k of the stage's schedule reads whole
    /// (way_mirror_slots); nothing with one way.
    void exchange_before(std::size_t k, const StageViews& views, std::span<const int> step,
                         bool forward);
    /// S x W x F: every exchange exchange_before left to the step's aggregation happened.
    void check_mirrors_taken() const;
    /// The world rank of (stage, this rank's way and slice).
    [[nodiscard]] int rank_of(int stage) const {
        return (stage * options_.ways + way()) * slices() + world_.rank() % slices();
    }
    /// The world rank of (this rank's stage, way w, this rank's slice).
    [[nodiscard]] int way_rank(int w) const {
        return (stage() * options_.ways + w) * slices() + world_.rank() % slices();
    }
    /// Feature slices: every mirror rewritten from the whole-graph buffers (a restored history).
    void resync_slices();
    struct ShareRows;

    Backend& backend_;
    Communicator& world_;
    ModelGraph& graph_;
    ModelParameters& parameters_;
    GraphOperator& aggregation_;
    TrainingData data_;
    std::unique_ptr<ShareRows> share_;  ///< feature slices: this rank's rows of the data
    PipelineOptions options_;
    StageLayout layout_;
    std::vector<index_t> base_offsets_;
    std::vector<index_t> offsets_;
    std::vector<std::size_t> chunk_base_;  ///< per chunk, its first initial chunk (C + 1)
    int snapshot_period_ = 0;
    std::unique_ptr<StageBuffers> buffers_;  ///< the stage's memory (stage_buffers.hpp)
    std::unique_ptr<WaveState> wave_;        ///< messages in flight, mirror buffers, figures
    std::unique_ptr<FullGraphExecutor> evaluation_;  ///< rank 0 only
    std::optional<PipelineEpochStats> last_;
    bool have_snapshot_ = false;
    HaloPrecision precision_ = HaloPrecision::fp32;
};

}  // namespace strata
