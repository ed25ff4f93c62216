// PipelineExecutor: the GPipe wave, stage transfers, the hybrid's mirror exchange, the
// techniques' bookkeeping and the history; a chunk's steps run through the node runner.
#include "src/nn/pipeline_executor.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>

#include "src/base/error.hpp"
#include "src/base/timer.hpp"
#include "src/comm/wire_exchange.hpp"
#include "src/device/counter_rng.hpp"
#include "src/nn/node_runner.hpp"
#include "src/nn/stage_buffers.hpp"
#include "src/nn/stage_receives.hpp"

namespace strata {

/// The pipeline's own state beside the stage's buffers: messages in flight, the hybrid's mirror
/// lists and buffers, this step's figures.
/// Feature slices: the rank's rows of the training data (every chunk's share, chunk after chunk).
struct PipelineExecutor::ShareRows {
    std::vector<Buffer<float>> inputs;
    Buffer<index_t> labels;
    Buffer<std::uint8_t> train_mask;
    Buffer<std::uint8_t> val_mask;
    Buffer<std::uint8_t> test_mask;
    Buffer<global_id> row_ids;

    std::vector<index_t> input_cols;

    /// What strata plan prices (stage_storage.hpp).
    [[nodiscard]] std::int64_t bytes() const {
        return slice_share_bytes(static_cast<index_t>(row_ids.size()), input_cols);
    }
};

struct PipelineExecutor::WaveState {
    std::vector<std::unique_ptr<StageMessage>> sends;  ///< forward values in flight
    std::vector<std::unique_ptr<StageMessage>> grad_sends;
    /// Hybrid: per step of the stage's schedule, the slots exchanged before it
    /// (way_mirror_slots, stage_storage.hpp); empty with one way.
    std::vector<std::vector<int>> mirrored_slots;
    /// Hybrid: every mirror list of the initial chunks (pack_mirror_lists, way_mirrors.hpp).
    Buffer<index_t> mirror_rows;
    std::vector<std::size_t> forward_offsets;   ///< W C + 1
    std::vector<std::size_t> backward_offsets;  ///< W C + 1, after the forward lists
    Buffer<float> mirror_send;
    Buffer<float> mirror_recv;
    std::vector<float> mirror_packed;  ///< the mirror rows' records below fp32 (host)
    /// S x W x F: the buffers (whole-graph views' addresses) whose mirrors the ways exchange
    /// in the aggregation about to run (PipelineSlices::set_mirror_hook), and the chunks each
    /// way processes now.
    std::vector<const float*> mirror_due;
    std::vector<int> step;
    std::int64_t way_bytes = 0;
    std::int64_t stage_bytes = 0;
    std::int64_t inter_node_bytes = 0;  ///< of the two, sent to ranks on another node
    double wait_s = 0.0;
    double bubble_s = 0.0;
};

namespace {

/// Feature slices: this rank's share of every chunk of `full`, chunk after chunk (local rows).
template <typename T>
Buffer<T> gather_shares(Backend& backend, std::span<const T> full, std::size_t width,
                        const PipelineSlices& slices) {
    const auto chunks = static_cast<int>(slices.local_offsets().size()) - 1;
    Buffer<T> out(backend, static_cast<std::size_t>(slices.num_rows()) * width);
    for (int c = 0; c < chunks; ++c) {
        const RowRange share = slices.share(c);
        const auto at =
            static_cast<std::size_t>(slices.local_offsets()[static_cast<std::size_t>(c)]);
        if (share.count > 0) {
            backend.copy(out.data() + at * width,
                         full.data() + static_cast<std::size_t>(share.first) * width,
                         static_cast<std::size_t>(share.count) * width * sizeof(T));
        }
    }
    return out;
}

index_t largest_chunk(const std::vector<index_t>& offsets) {
    index_t largest = 0;
    for (std::size_t c = 0; c + 1 < offsets.size(); ++c) {
        largest = std::max(largest, offsets[c + 1] - offsets[c]);
    }
    return largest;
}

}  // namespace

PipelineExecutor::PipelineExecutor(Backend& backend, Communicator& world, Communicator& self,
                                   ModelGraph& graph, ModelParameters& parameters,
                                   GraphOperator& aggregation, TrainingData data,
                                   const PipelineOptions& options)
    : backend_(backend),
      world_(world),
      graph_(graph),
      parameters_(parameters),
      aggregation_(options.slices ? static_cast<GraphOperator&>(*options.slices) : aggregation),
      data_(data),
      options_(options),
      base_offsets_(options.slices ? options.slices->local_offsets() : options.chunk_offsets),
      offsets_(base_offsets_),
      snapshot_period_(options.snapshot_period),
      wave_(std::make_unique<WaveState>()),
      precision_(options.precision) {
    const index_t rows = aggregation_.num_rows();  // this rank's (its slice's share)
    STRATA_CHECK_OPTION(data_.sparse_input == nullptr, "sparse_features", "on",
                        "the layer pipeline reads dense features");
    STRATA_CHECK_OPTION(options.ways >= 1, "ways", options.ways, "must be at least 1");
    const int slices = this->slices();
    if (slices == 1) {
        STRATA_CHECK_OPTION(options.stages * options.ways == world.size(), "stages", options.stages,
                            "with ways = ", options.ways, " the pipeline runs ",
                            options.stages * options.ways,
                            " ranks (one per stage and way), but the job has ", world.size());
    } else if (options.ways == 1) {
        STRATA_CHECK_OPTION(options.stages * slices == world.size(), "stages", options.stages,
                            "with feature_slices = ", slices, " the pipeline runs ",
                            options.stages * slices,
                            " ranks (one per stage and slice), but the job has ", world.size());
    } else {
        STRATA_CHECK_OPTION(
            options.stages * options.ways * slices == world.size(), "stages", options.stages,
            "with ways = ", options.ways, " and feature_slices = ", slices, " the pipeline runs ",
            options.stages * options.ways * slices,
            " ranks (one per stage, way and slice), but the job has ", world.size());
    }
    if (slices > 1) {
        STRATA_CHECK(options.slices->slice() == world.rank() % slices &&
                         options.slices->global_rows() == aggregation.num_rows(),
                     "pipeline: rank ", world.rank(), " holds feature slice ",
                     options.slices->slice(), " of ", options.slices->global_rows(),
                     " rows; expected slice ", world.rank() % slices, " of ",
                     aggregation.num_rows());
        // The rank's share of every chunk: its rows of the inputs, labels, masks and ids.
        share_ = std::make_unique<ShareRows>();
        const PipelineSlices& sl = *options.slices;
        for (ConstMatrixView& input : data_.inputs) {
            share_->inputs.push_back(gather_shares(backend,
                                                   std::span<const float>(input.data, input.size()),
                                                   static_cast<std::size_t>(input.cols), sl));
            input = ConstMatrixView{share_->inputs.back().data(), rows, input.cols};
            share_->input_cols.push_back(input.cols);
        }
        share_->labels = gather_shares(backend, data.labels, 1, sl);
        share_->train_mask = gather_shares(backend, data.train_mask, 1, sl);
        share_->val_mask = gather_shares(backend, data.val_mask, 1, sl);
        share_->test_mask = gather_shares(backend, data.test_mask, 1, sl);
        share_->row_ids = gather_shares(backend, data.row_ids, 1, sl);
        const auto n = static_cast<std::size_t>(rows);
        data_.labels = {share_->labels.data(), n};
        data_.train_mask = {share_->train_mask.data(), n};
        data_.val_mask = {share_->val_mask.data(), n};
        data_.test_mask = {share_->test_mask.data(), n};
        data_.row_ids = {share_->row_ids.data(), n};
    }
    STRATA_CHECK_OPTION(options.snapshot_period >= 0, "snapshot_period", options.snapshot_period,
                        "must be 0 (off) or positive");
    STRATA_CHECK(
        base_offsets_.size() >= 2 && base_offsets_.front() == 0 && base_offsets_.back() == rows,
        "pipeline: chunk offsets do not cover the ", rows, " rows");
    for (std::size_t c = 0; c + 1 < base_offsets_.size(); ++c) {
        STRATA_CHECK(base_offsets_[c] < base_offsets_[c + 1], "pipeline: chunk ", c, " is empty");
    }
    STRATA_CHECK_OPTION(
        chunks() % options.ways == 0, "chunks", chunks(),
        "every way needs the same number of chunks (a multiple of ways = ", options.ways, ")");
    chunk_base_.resize(base_offsets_.size());
    std::iota(chunk_base_.begin(), chunk_base_.end(), std::size_t{0});
    STRATA_CHECK(data_.inputs.size() == graph.inputs().size(), "pipeline: ", data_.inputs.size(),
                 " data inputs for a model with ", graph.inputs().size());
    STRATA_CHECK(data_.global_train > 0, "training set is empty (no vertex has train_mask = 1)");
    for (int n = 0; n < graph.num_nodes(); ++n) {
        const Op& op = *graph.node(n).op;
        STRATA_CHECK_OPTION(op.row_local() || op.kind() == OpKind::aggregate, "parallel",
                            "pipeline", "op '", graph.node(n).name, "' (", op.describe(),
                            ") is neither row-local nor an aggregation, so it cannot run chunk by "
                            "chunk");
    }
    // The whole graph's rows: every slice (and F = 1) splits the layers the same way.
    layout_ = plan_stages(graph, options.stages,
                          StageCostInputs{.rows = aggregation.num_rows(), .nnz = options.nnz});
    // Where every tensor of this stage lives (stage_storage.hpp, shared with strata plan's layout
    // planner).
    buffers_ = std::make_unique<StageBuffers>(
        backend, graph,
        plan_stage_storage(graph, layout_, this->stage(), rows, options.recompute,
                           options.slices != nullptr),
        aggregation_, data_, snapshot_period_ > 0);
    buffers_->fit_chunks(largest_chunk(offsets_));
    if (options.slices != nullptr) {  // a mirror (all rows, slice f) for every buffer aggregated
        PipelineSlices& sl = *options.slices;
        const StageStorage& st = buffers_->storage();
        const StageViews whole = buffers_->views({0, 0});
        // The list strata plan sizes the mirrors from (stage_storage.hpp).
        for (const SliceMirror& m : slice_mirrors(graph, st, buffers_->has_snapshot())) {
            sl.attach(whole.all(m.slot), m.snapshot);
            if (st.slots[static_cast<std::size_t>(m.slot)].place == Place::input) {
                sl.resync(whole.all(m.slot), whole.all(m.slot), false);  // never changes
            }
        }
    }
    if (options.ways > 1) {
        STRATA_CHECK(options.structure != nullptr, "pipeline: ways = ", options.ways,
                     " needs the graph's structure for the mirror exchange");
        // The lists number whole-graph rows: with feature slices, the mirrors' (the chunks'
        // global offsets; base_offsets_ then counts this rank's local rows).
        const std::vector<index_t>& global =
            options.slices != nullptr ? options.chunk_offsets : base_offsets_;
        STRATA_CHECK(
            global.size() == base_offsets_.size() && global.back() == aggregation.num_rows(),
            "pipeline: ", global.size(), " global chunk offsets for ", base_offsets_.size() - 1,
            " chunks of ", aggregation.num_rows(), " rows");
        const MirrorLists lists =
            pack_mirror_lists(way_mirrors(*options.structure, global, options.ways));
        WaveState& st = *wave_;
        st.mirrored_slots = way_mirror_slots(graph, buffers_->storage());
        st.mirror_rows = Buffer<index_t>(backend, std::span<const index_t>(lists.rows));
        st.forward_offsets = lists.forward_offsets;
        st.backward_offsets = lists.backward_offsets;
        // With feature slices, rows travel at the slice's width, in the mirrors.
        const index_t widest = way_mirror_width(graph, buffers_->storage(), slices,
                                                options.slices ? options.slices->slice() : 0);
        if (options.slices != nullptr) {
            options.slices->set_mirror_hook(
                [this](ConstMatrixView whole, MatrixView mirror, bool forward) {
                    std::vector<const float*>& due = wave_->mirror_due;
                    const auto it = std::find(due.begin(), due.end(), whole.data);
                    if (it != due.end()) {
                        due.erase(it);
                        exchange_mirrors(mirror, wave_->step, forward);
                    }
                });
        }
        const auto cols = static_cast<std::size_t>(widest);
        st.mirror_send = Buffer<float>(backend, lists.send_rows * cols);
        st.mirror_recv = Buffer<float>(
            backend, lists.recv_rows * static_cast<std::size_t>(options.ways - 1) * cols);
    }
    if (world.rank() == 0) {
        evaluation_ =
            std::make_unique<FullGraphExecutor>(backend, self, graph, parameters, aggregation, data,
                                                ExecutorOptions{.training = false});
    }
}

PipelineExecutor::~PipelineExecutor() {
    if (options_.slices != nullptr && options_.ways > 1) {  // the hook calls into this executor
        options_.slices->set_mirror_hook({});
    }
}

void PipelineExecutor::set_staleness(int chunks, int snapshot_period) {
    const int base = static_cast<int>(base_offsets_.size()) - 1;
    STRATA_CHECK(chunks >= min_chunks() && chunks <= base && chunks % min_chunks() == 0,
                 "pipeline: ", chunks, " chunks (a multiple of ", min_chunks(), " up to ", base,
                 ")");
    STRATA_CHECK(snapshot_period >= 0, "pipeline: snapshot period ", snapshot_period);
    offsets_.clear();
    chunk_base_.clear();
    for (int c = 0; c <= chunks; ++c) {  // way blocks stay whole: c W-aligned maps to W-aligned
        chunk_base_.push_back(static_cast<std::size_t>(c * base / chunks));
        offsets_.push_back(base_offsets_[chunk_base_.back()]);
    }
    // Never had a snapshot buffer, though there are rows to keep: no snapshots. A stage with no
    // rows to keep (no aggregation) follows the period like the others (so every rank reports
    // the same settings, and a resumed run has those of the uninterrupted one).
    if (snapshot_period_ == 0 ||
        (!buffers_->has_snapshot() && buffers_->storage().snapshot_floats > 0)) {
        snapshot_period = 0;
    }
    snapshot_period_ = snapshot_period;
    const std::vector<const float*> before = buffers_->chunk_regions();
    buffers_->fit_chunks(largest_chunk(offsets_));
    const std::vector<const float*> after = buffers_->chunk_regions();
    for (std::size_t i = 0; i < before.size(); ++i) {  // S x F: the mirrors follow their regions
        if (before[i] != after[i]) {
            options_.slices->rebind(before[i], after[i]);
        }
    }
}

void PipelineExecutor::reset_history() {
    buffers_->zero();
    if (options_.slices != nullptr) {
        for (const TensorId t : buffers_->storage().snapshot) {
            options_.slices->fill(buffers_->value(t), 0.0f);
        }
        for (const TensorId t : buffers_->storage().kept_grads) {
            options_.slices->fill(buffers_->grad(t), 0.0f);
        }
    }
    have_snapshot_ = false;
}

void PipelineExecutor::resync_slices() {
    PipelineSlices& sl = *options_.slices;
    const StageStorage& st = buffers_->storage();
    for (const TensorId t : st.snapshot) {
        if (st.chunk_only(t)) {
            continue;  // restore_history wrote its mirror
        }
        sl.resync(buffers_->value(t), buffers_->value(t), false);
        if (have_snapshot_) {
            sl.resync(buffers_->value(t), buffers_->snapshot_of(t), true);
        }
    }
    for (const TensorId t : st.kept_grads) {
        if (st.grad(t).place != Place::chunk) {
            sl.resync(buffers_->grad(t), buffers_->grad(t), false);
        }
    }
}

PipelineHistory PipelineExecutor::history() const {
    PipelineHistory h{
        .chunks = chunks(), .snapshot_period = snapshot_period_, .has_snapshot = have_snapshot_};
    // S x F: a chunk copy's every row is in its mirror (collective over the feature group).
    // S x W x F: every row from the mirrors, which hold the other ways' rows too.
    buffers_->download(
        h, have_snapshot_, !options_.grad_zero_scale,
        [this](TensorId t, int part, MatrixView rows) {
            options_.slices->gather(part == 2 ? buffers_->grad(t) : buffers_->value(t), rows,
                                    part == 1);
        },
        options_.slices != nullptr && options_.ways > 1);
    return h;
}

void PipelineExecutor::restore_history(const PipelineHistory& h) {
    const auto setting = [](std::int64_t v, const char* what) {
        STRATA_CHECK(v >= 0 && v <= std::numeric_limits<int>::max(), "pipeline history: ", what,
                     " = ", v);
        return static_cast<int>(v);
    };
    set_staleness(setting(h.chunks, "chunks"), setting(h.snapshot_period, "snapshot period"));
    reset_history();
    buffers_->upload(h, !options_.grad_zero_scale,
                     [this](TensorId t, int part, ConstMatrixView rows) {
                         options_.slices->resync(part == 2 ? buffers_->grad(t) : buffers_->value(t),
                                                 rows, part == 1);
                     });
    have_snapshot_ = h.has_snapshot;
    if (options_.slices != nullptr) {
        resync_slices();
    }
}

RowRange PipelineExecutor::range(int chunk) const {
    const auto i = static_cast<std::size_t>(chunk);
    return RowRange{offsets_[i], offsets_[i + 1] - offsets_[i]};
}

void PipelineExecutor::exchange_mirrors(MatrixView buffer, std::span<const int> step,
                                        bool forward) {
    WaveState& st = *wave_;
    const int ways = options_.ways;
    const int me = way();
    const std::vector<std::size_t>& offsets = forward ? st.forward_offsets : st.backward_offsets;
    const auto base_chunks = static_cast<std::size_t>(base_offsets_.size() - 1);
    const auto list = [&](int chunk, int w) {  // the initial chunks merged into `chunk`
        const std::size_t first = static_cast<std::size_t>(w) * base_chunks +
                                  chunk_base_[static_cast<std::size_t>(chunk)];
        const std::size_t end = static_cast<std::size_t>(w) * base_chunks +
                                chunk_base_[static_cast<std::size_t>(chunk) + 1];
        return std::span<const index_t>(st.mirror_rows.data() + offsets[first],
                                        offsets[end] - offsets[first]);
    };
    const auto chunk_of = [&](int w) { return step[static_cast<std::size_t>(w)]; };
    ExchangePattern pattern;
    std::vector<int> peer_ways;
    for (int w = 0; w < ways; ++w) {
        if (w != me) {
            peer_ways.push_back(w);
            pattern.peers.push_back(way_rank(w));
            pattern.send_offsets.push_back(pattern.send_offsets.back() +
                                           static_cast<index_t>(list(chunk_of(me), w).size()));
            pattern.recv_offsets.push_back(pattern.recv_offsets.back() +
                                           static_cast<index_t>(list(chunk_of(w), me).size()));
        }
    }
    const index_t cols = buffer.cols;
    const MatrixView send{st.mirror_send.data(), pattern.num_send_rows(), cols};
    const MatrixView recv{st.mirror_recv.data(), pattern.num_recv_rows(), cols};
    const auto segment = [](MatrixView m, const std::vector<index_t>& o, std::size_t p) {
        return m.row_range(o[p], o[p + 1] - o[p]);
    };
    for (std::size_t p = 0; p < pattern.peers.size(); ++p) {
        const int w = peer_ways[p];
        backend_.gather_rows(buffer, list(chunk_of(me), w), segment(send, pattern.send_offsets, p));
    }
    Stopwatch watch;
    st.mirror_packed.resize(
        std::max(st.mirror_packed.size(),
                 WireExchange::packed_floats(precision_, send.rows, recv.rows, cols)));
    WireExchange exchange(world_, precision_, pattern, send, recv, st.mirror_packed);
    st.way_bytes += exchange.bytes_sent();  // rows x the precision's record bytes
    st.inter_node_bytes += exchange.inter_node_bytes_sent();
    exchange.wait_all();
    st.wait_s += watch.seconds();
    for (std::size_t p = 0; p < pattern.peers.size(); ++p) {
        const int w = peer_ways[p];
        backend_.scatter_rows(segment(recv, pattern.recv_offsets, p), list(chunk_of(w), me),
                              buffer);
    }
}

void PipelineExecutor::exchange_before(std::size_t k, const StageViews& views,
                                       std::span<const int> step, bool forward) {
    if (options_.ways == 1) {
        return;
    }
    WaveState& st = *wave_;
    STRATA_ASSERT(st.mirror_due.empty());
    for (const int slot : st.mirrored_slots[k]) {  // the chunks in flight, fresh
        if (options_.slices != nullptr) {          // in the aggregation, on the slice's mirror
            st.mirror_due.push_back(views.all(slot).data);
        } else {
            exchange_mirrors(views.all(slot), step, forward);
        }
    }
    st.step.assign(step.begin(), step.end());
}

void PipelineExecutor::check_mirrors_taken() const {
    STRATA_CHECK(wave_->mirror_due.empty(), "pipeline: ", wave_->mirror_due.size(),
                 " mirror exchange(s) of the ways not taken by the step's aggregation");
}

OpContext PipelineExecutor::chunk_context(std::uint64_t epoch, bool recompute) {
    return OpContext{.backend = backend_,
                     .graph = &aggregation_,
                     .row_ids = data_.row_ids,
                     .training = true,
                     .epoch = epoch,
                     .recompute = recompute,
                     .comm = &world_};
}

void PipelineExecutor::forward_chunk(std::span<const int> step, std::uint64_t epoch) {
    const StageStorage& st = buffers_->storage();
    const StageViews views = buffers_->views(range(step[static_cast<std::size_t>(way())]));
    const OpContext context = chunk_context(epoch, /*recompute=*/false);
    PhaseClock untimed(backend_, world_, nullptr);
    for (int k = 0; k < st.schedule.boundary; ++k) {
        const PlanStep& s = st.schedule.steps[static_cast<std::size_t>(k)];
        exchange_before(static_cast<std::size_t>(k), views, step, /*forward=*/true);
        run_forward(graph_, s, views, context, untimed);
        check_mirrors_taken();
        progress();
    }
}

double PipelineExecutor::backward_chunk(std::span<const int> step, std::uint64_t epoch) {
    const StageStorage& st = buffers_->storage();
    const StageViews views = buffers_->views(range(step[static_cast<std::size_t>(way())]));
    const OpContext context = chunk_context(epoch, /*recompute=*/false);
    const OpContext recompute = chunk_context(epoch, /*recompute=*/true);
    PhaseClock untimed(backend_, world_, nullptr);
    double loss = 0.0;
    for (const TensorId t : st.refill) {  // S x F: the chunk's rows back from the mirror
        options_.slices->refill(buffers_->value(t),
                                views.rows(st.schedule.values[static_cast<std::size_t>(t)]),
                                views.range());
    }
    for (std::size_t k = static_cast<std::size_t>(st.schedule.boundary);
         k < st.schedule.steps.size(); ++k) {
        const PlanStep& s = st.schedule.steps[k];
        switch (s.kind) {
            case StepKind::forward:
            case StepKind::recompute:
                run_forward(graph_, s, views, recompute, untimed);
                break;
            case StepKind::loss:
                loss = run_loss(backend_, s, views, data_, untimed);
                break;
            case StepKind::backward:
                // The pull dx[rows] = (Âᵀ dy)[rows] reads every row of dy: the other ways'
                // fresh rows first.
                exchange_before(k, views, step, /*forward=*/false);
                run_backward(graph_, s, views, context, untimed);
                check_mirrors_taken();
                break;
        }
        progress();
    }
    if (options_.grad_zero_scale) {  // T2: processed chunks (every way's) count twice
        for (const TensorId t : st.kept_grads) {
            for (const int c : step) {
                if (st.grad(t).place != Place::chunk) {  // a chunk copy: its mirror only
                    const MatrixView g = buffers_->grad(t).rows_of(range(c));
                    backend_.axpby(0.0f, g, 2.0f, g);
                }
                if (options_.slices != nullptr) {
                    options_.slices->scale(buffers_->grad(t), range(c), 2.0f);
                }
            }
        }
    }
    return loss;
}

namespace {

/// ||a - b|| / ||b|| (the guards' gradient gaps).
double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
    double difference = 0.0;
    double norm = 0.0;
    for (std::size_t i = 0; i < b.size(); ++i) {
        const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
        difference += d * d;
        norm += static_cast<double>(b[i]) * static_cast<double>(b[i]);
    }
    return std::sqrt(difference / norm);
}

/// Way w's chunks [w C/W, (w+1) C/W) in this epoch's order (the same on every stage).
std::vector<int> chunk_order(int chunks, int ways, int w, bool shuffle, std::uint64_t seed,
                             std::int64_t epoch) {
    std::vector<int> order(static_cast<std::size_t>(chunks / ways));
    std::iota(order.begin(), order.end(), w * (chunks / ways));
    if (shuffle) {  // Fisher-Yates
        std::uint64_t state =
            mix64(mix64(mix64(seed ^ 0x70697065ULL) ^ static_cast<std::uint64_t>(epoch)) ^
                  static_cast<std::uint64_t>(w));
        for (std::size_t i = order.size(); i > 1; --i) {
            state = mix64(state);
            std::swap(order[i - 1], order[static_cast<std::size_t>(state % i)]);
        }
    }
    return order;
}

ExchangePattern one_way(int peer, index_t send_rows, index_t recv_rows) {
    return ExchangePattern{
        .peers = {peer}, .send_offsets = {0, send_rows}, .recv_offsets = {0, recv_rows}};
}

}  // namespace

double PipelineExecutor::train_step(std::int64_t epoch) {
    WaveState& st = *wave_;
    const int s = stage();
    const int num_stages = options_.stages;
    const Stage& stage_ = layout_.stages[static_cast<std::size_t>(s)];
    const int ways = options_.ways;
    const int previous = rank_of(s - 1);
    const int next = rank_of(s + 1);
    const auto key = static_cast<std::uint64_t>(epoch);
    const Schedule& schedule = buffers_->storage().schedule;
    const auto value_slot = [&](TensorId t) {
        return schedule.values[static_cast<std::size_t>(t)];
    };
    const auto grad_slot = [&](TensorId t) { return schedule.grads[static_cast<std::size_t>(t)]; };
    st.stage_bytes = 0;
    st.way_bytes = 0;
    st.inter_node_bytes = 0;
    st.wait_s = 0.0;
    st.bubble_s = 0.0;
    parameters_.zero_grads();

    // T3: historical embeddings come from the snapshot, except right after it was taken.
    if (snapshot_period_ > 0 && have_snapshot_ && (epoch - 1) % snapshot_period_ != 0) {
        buffers_->copy_snapshot(/*take=*/false);
        if (options_.slices != nullptr) {
            options_.slices->snapshot(/*take=*/false);
        }
    }

    // Receives of the next step are posted before this step computes (stage_receives.hpp).
    const auto staged = [&](const std::vector<TensorId>& tensors, const StageViews& views,
                            const auto& slot_of) {
        std::vector<MatrixView> into;
        std::vector<MatrixView> staging;
        std::size_t column = 0;
        for (const TensorId t : tensors) {
            const MatrixView rows = views.rows(slot_of(t));
            into.push_back(rows);
            staging.push_back(buffers_->receive_rows(column, rows.rows, rows.cols));
            column += static_cast<std::size_t>(rows.cols);
        }
        return std::pair{std::move(into), std::move(staging)};
    };
    // Step k's rows in: finished (posted at step k - 1, or now at the first step), and step
    // k + 1's posted.
    const auto receive = [&](StageReceives& receives, const std::vector<TensorId>& tensors,
                             const auto& slot_of, const auto& views_of, std::size_t k,
                             std::size_t next_k, bool first) {
        auto [into, staging] = staged(tensors, views_of(k), slot_of);
        if (!receives.posted()) {
            receives.post(std::move(staging), precision_);
        }
        const double waited = receives.finish(into);
        st.wait_s += waited;
        if (first) {
            st.bubble_s += waited;
        }
        if (next_k != k) {
            receives.post(staged(tensors, views_of(next_k), slot_of).second, precision_);
        }
    };
    auto send = [&](ConstMatrixView rows, int peer,
                    std::vector<std::unique_ptr<StageMessage>>& out) {
        auto m = std::make_unique<StageMessage>();
        m->pattern = one_way(peer, rows.rows, 0);
        m->packed.resize(WireExchange::packed_floats(precision_, rows.rows, 0, rows.cols));
        m->exchange = std::make_unique<WireExchange>(world_, precision_, m->pattern, rows,
                                                     MatrixView{nullptr, 0, rows.cols}, m->packed);
        st.stage_bytes += m->exchange->bytes_sent();  // rows x the precision's record bytes
        st.inter_node_bytes += m->exchange->inter_node_bytes_sent();
        out.push_back(std::move(m));
    };

    const int chunks = this->chunks();
    // Step k: way w processes orders[w][k].
    std::vector<std::vector<int>> orders;
    for (int w = 0; w < ways; ++w) {
        orders.push_back(chunk_order(chunks, ways, w, options_.shuffle, options_.seed, epoch));
    }
    const std::size_t num_steps = orders[0].size();
    auto step_of = [&](std::size_t k) {
        std::vector<int> step;
        for (const auto& order : orders) {
            step.push_back(order[k]);
        }
        return step;
    };
    const auto views_of = [&](std::size_t k) {
        return buffers_->views(range(step_of(k)[static_cast<std::size_t>(way())]));
    };
    // Forward wave.
    StageReceives values(world_, backend_, previous);
    for (std::size_t k = 0; k < num_steps; ++k) {
        const std::vector<int> step = step_of(k);
        const StageViews views = views_of(k);
        if (s > 0) {
            receive(values, stage_.incoming, value_slot, views_of, k, k + 1 < num_steps ? k + 1 : k,
                    k == 0);
        }
        forward_chunk(step, key);
        if (s + 1 < num_stages) {
            for (const TensorId t : stage_.outgoing) {
                send(views.rows(value_slot(t)), next, st.sends);
            }
        }
    }
    // Backward wave, in reverse order.
    StageReceives grads(world_, backend_, next);
    double loss = 0.0;
    for (std::size_t k = num_steps; k-- > 0;) {
        const std::vector<int> step = step_of(k);
        const StageViews views = views_of(k);
        st.grad_sends.clear();  // the scratch gradients are about to be rewritten
        if (s + 1 < num_stages) {
            receive(grads, stage_.outgoing, grad_slot, views_of, k, k > 0 ? k - 1 : k,
                    k + 1 == num_steps);
        }
        loss += backward_chunk(step, key);
        if (s > 0) {
            for (const TensorId t : stage_.incoming) {
                send(views.rows(grad_slot(t)), previous, st.grad_sends);
            }
        }
    }
    st.grad_sends.clear();
    st.sends.clear();

    if (options_.grad_zero_scale) {  // T2: no historical gradient survives the epoch
        for (const TensorId t : buffers_->storage().kept_grads) {
            if (buffers_->storage().grad(t).place != Place::chunk) {
                backend_.fill(buffers_->grad(t), 0.0f);
            }
            if (options_.slices != nullptr) {
                options_.slices->fill(buffers_->grad(t), 0.0f);
            }
        }
    }
    if (snapshot_period_ > 0 && epoch % snapshot_period_ == 0) {  // T3: take the snapshot
        buffers_->copy_snapshot(/*take=*/true);
        if (options_.slices != nullptr) {
            options_.slices->snapshot(/*take=*/true);
        }
        have_snapshot_ = true;
    }
    if (world_.size() > 1) {
        world_.start_allreduce_sum(parameters_.grads())->wait();
    }
    std::array<double, 1> sum{loss};
    world_.allreduce_sum(sum);
    std::array<std::int64_t, 3> bytes{st.stage_bytes, st.way_bytes, st.inter_node_bytes};
    world_.allreduce_sum(bytes);
    std::array<double, 2> waits{st.bubble_s, st.wait_s};
    world_.allreduce_max(waits);
    last_ = PipelineEpochStats{.stage_bytes = bytes[0],
                               .way_bytes = bytes[1],
                               .inter_node_bytes = bytes[2],
                               .bubble_s = waits[0],
                               .stage_wait_s = waits[1],
                               .chunks = chunks,
                               .snapshot_period = snapshot_period_};
    return sum[0] / static_cast<double>(data_.global_train);
}

StalenessLosses PipelineExecutor::staleness_losses(std::int64_t epoch) {
    const PipelineHistory before = history();  // put back below: the run goes on as without
    const std::optional<PipelineEpochStats> figures = last_;
    StalenessLosses out;
    out.stale = train_step(epoch);  // the next step itself, bit for bit
    std::vector<float> stale = parameters_.download_grads();
    restore_history(before);
    // One chunk per way: nothing stale. The chunk arena grows to a way's rows (as the guard's
    // last rollback, to exact execution, would make it).
    set_staleness(min_chunks(), snapshot_period_);
    out.fresh = train_step(epoch);
    std::vector<float> fresh = parameters_.download_grads();
    restore_history(before);  // the chunks, period and rows in force
    last_ = figures;
    parameters_.zero_grads();
    out.gradient_error = relative_difference(stale, fresh);
    out.stale_gradient = std::move(stale);
    out.fresh_gradient = std::move(fresh);
    return out;
}

PrecisionLosses PipelineExecutor::precision_losses(std::int64_t epoch) {
    const PipelineHistory before = history();  // put back below: the run goes on as without
    const std::optional<PipelineEpochStats> figures = last_;
    const HaloPrecision in_force = precision_;
    PrecisionLosses out;
    out.packed = train_step(epoch);  // the next step itself, bit for bit
    const std::vector<float> packed = parameters_.download_grads();
    restore_history(before);
    precision_ = HaloPrecision::fp32;
    out.fp32 = train_step(epoch);
    const std::vector<float> exact = parameters_.download_grads();
    precision_ = in_force;
    restore_history(before);
    last_ = figures;
    parameters_.zero_grads();
    out.gradient_error = relative_difference(packed, exact);
    return out;
}

Evaluation PipelineExecutor::evaluate() {
    static_assert(std::is_trivially_copyable_v<Evaluation>, "broadcast as bytes");
    Evaluation e;
    if (evaluation_) {
        e = evaluation_->evaluate();
    }
    world_.broadcast(std::as_writable_bytes(std::span<Evaluation>(&e, 1)), 0);
    return e;
}

std::vector<MemoryLine> PipelineExecutor::memory_plan() const {
    const WaveState& st = *wave_;
    const StageStorage& planned = buffers_->storage();
    return stage_memory_lines(StageMemory{
        .stage = stage(),
        .kept_floats = planned.kept_floats,
        .kept_grad_floats = planned.kept_grad_floats,
        .scratch_floats = buffers_->scratch_floats(),
        .snapshot_floats = buffers_->snapshot_floats(),
        .mirror_bytes = static_cast<std::int64_t>((st.mirror_send.size() + st.mirror_recv.size()) *
                                                      sizeof(float) +
                                                  st.mirror_rows.size() * sizeof(index_t)),
        .slice_mirror_floats = options_.slices != nullptr ? options_.slices->mirror_floats() : 0,
        .share_bytes = share_ ? share_->bytes() : 0,
        .parameters = parameters_.size(),
        .evaluation_floats = evaluation_ ? evaluation_->plan().arena_floats() : 0,
        .evaluates = evaluation_ != nullptr});
}

HaloBytes PipelineExecutor::halo_bytes() const {
    return aggregation_.bytes_sent();
}

}  // namespace strata
