// PipelineExecutor: the GPipe wave, stage transfers, the hybrid's mirror exchange, the
// techniques' bookkeeping and the history; a chunk's steps run through the node runner.
#include "src/nn/pipeline_executor.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <numeric>
#include <type_traits>

#include "src/base/error.hpp"
#include "src/base/timer.hpp"
#include "src/device/counter_rng.hpp"
#include "src/nn/node_runner.hpp"
#include "src/nn/stage_storage.hpp"

namespace strata {
namespace {

/// A point-to-point message in flight (the pattern outlives the exchange that reads it).
struct Message {
    ExchangePattern pattern;
    std::unique_ptr<Exchange> exchange;
};

}  // namespace

struct PipelineExecutor::Storage : StageStorage {
    std::size_t workspace_floats = 0;
    index_t scratch_rows = 0;  ///< rows the scratch was sized for
    Buffer<float> kept;
    Buffer<float> kept_grad;
    Buffer<float> scratch;
    Buffer<float> backup;
    Buffer<float> workspace;
    std::vector<std::unique_ptr<Message>> sends;  ///< forward values in flight
    std::vector<std::unique_ptr<Message>> grad_sends;
    /// Hybrid: every mirror list of the initial chunks in one buffer, way-major: list (c, w)
    /// starts at offsets[w C + c], so the lists of consecutive chunks (a merged chunk) for one
    /// way are contiguous.
    Buffer<index_t> mirror_rows;
    std::vector<std::size_t> forward_offsets;   ///< W C + 1
    std::vector<std::size_t> backward_offsets;  ///< W C + 1, after the forward lists
    Buffer<float> mirror_send;
    Buffer<float> mirror_recv;
    std::int64_t way_bytes = 0;
    std::int64_t stage_bytes = 0;
    double wait_s = 0.0;
    double bubble_s = 0.0;
};

/// The stage's slots for one call of a chunk: whole-graph buffers (and the model inputs) hold
/// every row, scratch only the chunk's. The executor's buffers are written through these views
/// (the ops' calls take mutable views), hence the casts.
class PipelineExecutor::ChunkViews final : public StepViews {
public:
    ChunkViews(const PipelineExecutor& e, RowRange chunk) : e_(e), st_(*e.storage_), r_(chunk) {}
    [[nodiscard]] RowRange range() const override { return r_; }
    [[nodiscard]] bool whole(int slot) const override {
        return slot >= 0 && at(slot).place != Place::scratch;
    }
    [[nodiscard]] MatrixView all(int slot) const override {
        if (slot < 0) {
            return {};
        }
        const Location& l = at(slot);
        const index_t rows = e_.aggregation_.num_rows();
        switch (l.place) {
            case Place::input: {
                const ConstMatrixView in = e_.data_.inputs[static_cast<std::size_t>(l.input)];
                return {const_cast<float*>(in.data), in.rows, in.cols};  // read only
            }
            case Place::kept:
                return {const_cast<float*>(st_.kept.data()) + l.offset, rows, l.cols};
            case Place::kept_grad:
                return {const_cast<float*>(st_.kept_grad.data()) + l.offset, rows, l.cols};
            default:
                STRATA_FAIL("pipeline: slot ", slot, " holds one chunk's rows only");
        }
    }
    [[nodiscard]] MatrixView rows(int slot) const override {
        if (slot < 0) {
            return {};
        }
        const Location& l = at(slot);
        if (l.place == Place::scratch) {
            return {const_cast<float*>(st_.scratch.data()) +
                        l.offset * static_cast<std::size_t>(r_.count),
                    r_.count, l.cols};
        }
        return all(slot).rows_of(r_);
    }
    [[nodiscard]] std::span<float> workspace(const PlanStep&) const override {
        return {const_cast<float*>(st_.workspace.data()), st_.workspace.size()};
    }

private:
    [[nodiscard]] const Location& at(int slot) const {
        return st_.slots[static_cast<std::size_t>(slot)];
    }
    const PipelineExecutor& e_;
    const Storage& st_;
    RowRange r_;
};

namespace {

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
      aggregation_(aggregation),
      data_(std::move(data)),
      options_(options),
      base_offsets_(options.chunk_offsets),
      offsets_(options.chunk_offsets),
      snapshot_period_(options.snapshot_period),
      storage_(std::make_unique<Storage>()) {
    const index_t rows = aggregation.num_rows();
    STRATA_CHECK_OPTION(data_.sparse_input == nullptr, "sparse_features", "on",
                        "the layer pipeline reads dense features");
    STRATA_CHECK_OPTION(options.ways >= 1, "ways", options.ways, "must be at least 1");
    STRATA_CHECK_OPTION(options.stages * options.ways == world.size(), "stages", options.stages,
                        "with ways = ", options.ways, " the pipeline runs ",
                        options.stages * options.ways,
                        " ranks (one per stage and way), but the job has ", world.size());
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
    layout_ = plan_stages(graph, options.stages, StageCostInputs{.rows = rows, .nnz = options.nnz});
    // Where every tensor of this stage lives (stage_storage.hpp, shared with the planner).
    Storage& st = *storage_;
    static_cast<StageStorage&>(st) =
        plan_stage_storage(graph, layout_, this->stage(), rows, options.recompute);
    st.kept = Buffer<float>(backend, st.kept_floats);
    st.kept_grad = Buffer<float>(backend, st.kept_grad_floats);
    if (snapshot_period_ > 0 && st.snapshot_floats > 0) {
        st.backup = Buffer<float>(backend, st.snapshot_floats);
        // Touched now, though first written at the first snapshot (epoch 23 by default): the
        // resident memory is the plan from the first epoch, so a run that does not fit fails
        // at the start and bench/plan's short runs measure what the planner predicts.
        for (std::size_t done = 0; done < st.snapshot_floats;) {
            const std::size_t n = std::min(st.snapshot_floats - done, std::size_t{1} << 30);
            backend.fill({st.backup.data() + done, static_cast<index_t>(n), 1}, 0.0f);
            done += n;
        }
    }
    reset_history();
    allocate_scratch();
    if (options.ways > 1) {
        STRATA_CHECK(options.structure != nullptr, "pipeline: ways = ", options.ways,
                     " needs the graph's structure for the mirror exchange");
        mirrors_ = way_mirrors(*options.structure, base_offsets_, options.ways);
        std::vector<index_t> all;
        std::size_t send = 0;
        std::size_t recv = 0;
        for (const bool forward : {true, false}) {
            const auto& lists = forward ? mirrors_.forward : mirrors_.backward;
            auto& offsets = forward ? st.forward_offsets : st.backward_offsets;
            const auto ways = static_cast<std::size_t>(options.ways);
            const auto num_chunks = static_cast<std::size_t>(mirrors_.chunks);
            std::vector<std::size_t> out(num_chunks, 0);
            for (std::size_t w = 0; w < ways; ++w) {
                std::size_t in_way = 0;  // a merged chunk may span all of a way's chunks
                for (std::size_t c = 0; c < num_chunks; ++c) {
                    const std::vector<index_t>& list = lists[c * ways + w];
                    offsets.push_back(all.size());
                    all.insert(all.end(), list.begin(), list.end());
                    out[c] += list.size();
                    in_way += list.size();
                }
                recv = std::max(recv, in_way);
            }
            offsets.push_back(all.size());
            // Send bound: all of one way's chunks to every other way.
            const std::size_t per_way = num_chunks / ways;
            for (std::size_t w = 0; w < ways; ++w) {
                std::size_t total = 0;
                for (std::size_t c = w * per_way; c < (w + 1) * per_way; ++c) {
                    total += out[c];
                }
                send = std::max(send, total);
            }
        }
        st.mirror_rows = Buffer<index_t>(backend, std::span<const index_t>(all));
        index_t widest = 0;
        for (const TensorId t : st.kept_grads) {  // the aggregation outputs
            widest = std::max(widest, graph.tensor(t).cols);
        }
        const auto cols = static_cast<std::size_t>(widest);
        st.mirror_send = Buffer<float>(backend, send * cols);
        st.mirror_recv =
            Buffer<float>(backend, recv * static_cast<std::size_t>(options.ways - 1) * cols);
    }
    if (world.rank() == 0) {
        evaluation_ =
            std::make_unique<FullGraphExecutor>(backend, self, graph, parameters, aggregation,
                                                data_, ExecutorOptions{.training = false});
    }
}

PipelineExecutor::~PipelineExecutor() = default;

void PipelineExecutor::allocate_scratch() {
    Storage& st = *storage_;
    const index_t rows = largest_chunk(offsets_);
    if (rows <= st.scratch_rows) {
        return;
    }
    st.scratch_rows = rows;
    st.scratch = Buffer<float>(backend_, st.scratch_per_row * static_cast<std::size_t>(rows));
    const std::size_t workspace = stage_workspace_floats(graph_, st, rows, aggregation_);
    st.workspace_floats = workspace;
    st.workspace = Buffer<float>(backend_, workspace);
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
    if (snapshot_period_ == 0 || (storage_->backup.size() == 0 && storage_->snapshot_floats > 0)) {
        snapshot_period = 0;
    }
    snapshot_period_ = snapshot_period;
    allocate_scratch();
}

MatrixView PipelineExecutor::whole_value(TensorId t) const {
    const ChunkViews views(*this, {0, 0});
    return views.all(storage_->schedule.values[static_cast<std::size_t>(t)]);
}

MatrixView PipelineExecutor::whole_grad(TensorId t) const {
    const ChunkViews views(*this, {0, 0});
    return views.all(storage_->schedule.grads[static_cast<std::size_t>(t)]);
}

void PipelineExecutor::reset_history() {
    const Storage& st = *storage_;
    const ChunkViews views(*this, {0, 0});
    for (std::size_t s = 0; s < st.slots.size(); ++s) {
        const Place place = st.slots[s].place;
        if (place == Place::kept || place == Place::kept_grad) {
            backend_.fill(views.all(static_cast<int>(s)), 0.0f);
        }
    }
    have_snapshot_ = false;
}

void PipelineExecutor::copy_snapshot(bool take) {
    Storage& st = *storage_;
    std::size_t offset = 0;
    for (const TensorId t : st.snapshot) {
        const MatrixView v = whole_value(t);
        float* backup = st.backup.data() + offset;
        const std::size_t bytes = v.size() * sizeof(float);
        if (take) {
            backend_.copy(backup, v.data, bytes);
        } else {
            backend_.copy(v.data, backup, bytes);
        }
        offset += aligned_floats(v.size());
    }
}

/// The stage's history regions: the aggregation inputs' rows, their snapshot (when one is held)
/// and the aggregation outputs' gradients (T2 off).
struct PipelineExecutor::HistoryLayout {
    /// One tensor's rows as the stage holds them.
    struct HistoryRegion {
        const std::string* name;
        float* data;
        index_t rows;
        index_t cols;

        [[nodiscard]] std::size_t floats() const {
            return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
        }
    };
    std::vector<HistoryRegion> embeddings;
    std::vector<HistoryRegion> snapshot;
    std::vector<HistoryRegion> gradients;
};

PipelineExecutor::HistoryLayout PipelineExecutor::history_layout(bool with_snapshot) const {
    const Storage& st = *storage_;
    HistoryLayout layout;
    std::size_t offset = 0;
    for (const TensorId t : st.snapshot) {
        const MatrixView v = whole_value(t);
        layout.embeddings.push_back({&graph_.tensor(t).name, v.data, v.rows, v.cols});
        if (with_snapshot) {
            layout.snapshot.push_back({&graph_.tensor(t).name,
                                       const_cast<float*>(st.backup.data()) + offset, v.rows,
                                       v.cols});
        }
        offset += aligned_floats(v.size());
    }
    if (!options_.grad_zero_scale) {
        for (const TensorId t : st.kept_grads) {
            const MatrixView g = whole_grad(t);
            layout.gradients.push_back({&graph_.tensor(t).name, g.data, g.rows, g.cols});
        }
    }
    return layout;
}

PipelineHistory PipelineExecutor::history() const {
    PipelineHistory h{
        .chunks = chunks(), .snapshot_period = snapshot_period_, .has_snapshot = have_snapshot_};
    const HistoryLayout layout = history_layout(have_snapshot_);
    const auto take = [&](const std::vector<HistoryLayout::HistoryRegion>& regions,
                          std::vector<HistoryTensor>& out) {
        for (const HistoryLayout::HistoryRegion& r : regions) {
            HistoryTensor tensor{.name = *r.name, .rows = r.rows, .cols = r.cols};
            tensor.values.resize(r.floats());
            if (!tensor.values.empty()) {
                backend_.download(tensor.values.data(), r.data, r.floats() * sizeof(float));
            }
            out.push_back(std::move(tensor));
        }
    };
    take(layout.embeddings, h.embeddings);
    take(layout.snapshot, h.snapshot);
    take(layout.gradients, h.gradients);
    return h;
}

void PipelineExecutor::restore_history(const PipelineHistory& h) {
    const Storage& st = *storage_;
    const auto setting = [](std::int64_t v, const char* what) {
        STRATA_CHECK(v >= 0 && v <= std::numeric_limits<int>::max(), "pipeline history: ", what,
                     " = ", v);
        return static_cast<int>(v);
    };
    set_staleness(setting(h.chunks, "chunks"), setting(h.snapshot_period, "snapshot period"));
    reset_history();
    STRATA_CHECK(!h.has_snapshot || st.backup.size() > 0 || st.snapshot_floats == 0,
                 "pipeline history: a snapshot for a run without one");
    const HistoryLayout layout = history_layout(h.has_snapshot);
    if (h.from_format4) {  // the rows in one array, split by this layout
        std::size_t at = 0;
        for (const auto* part : {&layout.embeddings, &layout.snapshot, &layout.gradients}) {
            for (const HistoryLayout::HistoryRegion& r : *part) {
                STRATA_CHECK(at + r.floats() <= h.format4_rows.size(),
                             "pipeline history: ", h.format4_rows.size(),
                             " values do not fit this stage's layout");
                if (r.floats() > 0) {
                    backend_.upload(r.data, h.format4_rows.data() + at, r.floats() * sizeof(float));
                }
                at += r.floats();
            }
        }
        STRATA_CHECK(at == h.format4_rows.size(), "pipeline history: ", h.format4_rows.size(),
                     " values, this stage's layout holds ", at);
    } else {
        const auto put = [&](const std::vector<HistoryTensor>& given,
                             const std::vector<HistoryLayout::HistoryRegion>& want,
                             const char* what) {
            STRATA_CHECK(given.size() == want.size(), "pipeline history: ", given.size(), " ", what,
                         " tensors, this stage holds ", want.size());
            for (std::size_t i = 0; i < want.size(); ++i) {
                const HistoryTensor& g = given[i];
                const HistoryLayout::HistoryRegion& w = want[i];
                STRATA_CHECK(g.name == *w.name && g.rows == w.rows && g.cols == w.cols &&
                                 g.values.size() == w.floats(),
                             "pipeline history: ", what, " '", g.name, "' ", g.rows, " x ", g.cols,
                             " (", g.values.size(), " values), this stage holds '", *w.name, "' ",
                             w.rows, " x ", w.cols);
                if (!g.values.empty()) {
                    backend_.upload(w.data, g.values.data(), g.values.size() * sizeof(float));
                }
            }
        };
        put(h.embeddings, layout.embeddings, "embedding");
        put(h.snapshot, layout.snapshot, "snapshot");
        put(h.gradients, layout.gradients, "gradient");
    }
    have_snapshot_ = h.has_snapshot;
}

RowRange PipelineExecutor::range(int chunk) const {
    const auto i = static_cast<std::size_t>(chunk);
    return RowRange{offsets_[i], offsets_[i + 1] - offsets_[i]};
}

void PipelineExecutor::exchange_mirrors(MatrixView buffer, std::span<const int> step,
                                        bool forward) {
    Storage& st = *storage_;
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
    for (int w = 0; w < ways; ++w) {
        if (w != me) {
            pattern.peers.push_back(stage() * ways + w);
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
        const int w = pattern.peers[p] - stage() * ways;
        backend_.gather_rows(buffer, list(chunk_of(me), w), segment(send, pattern.send_offsets, p));
    }
    Stopwatch watch;
    auto exchange = world_.start_exchange(pattern, send, recv);
    st.way_bytes += static_cast<std::int64_t>(send.size() * sizeof(float));
    exchange->wait_all();
    st.wait_s += watch.seconds();
    for (std::size_t p = 0; p < pattern.peers.size(); ++p) {
        const int w = pattern.peers[p] - stage() * ways;
        backend_.scatter_rows(segment(recv, pattern.recv_offsets, p), list(chunk_of(w), me),
                              buffer);
    }
}

void PipelineExecutor::forward_chunk(std::span<const int> step, std::uint64_t epoch) {
    const Storage& st = *storage_;
    const ChunkViews views(*this, range(step[static_cast<std::size_t>(way())]));
    const OpContext context{.backend = backend_,
                            .graph = &aggregation_,
                            .row_ids = data_.row_ids,
                            .training = true,
                            .epoch = epoch,
                            .comm = &world_};
    PhaseClock untimed(backend_, world_, nullptr);
    for (int k = 0; k < st.schedule.boundary; ++k) {
        const PlanStep& s = st.schedule.steps[static_cast<std::size_t>(k)];
        if (options_.ways > 1 && !graph_.node(s.node).op->row_local()) {
            for (const int slot : s.x) {  // the other ways' fresh rows of the chunks in flight
                if (st.slots[static_cast<std::size_t>(slot)].place == Place::kept) {
                    exchange_mirrors(views.all(slot), step, /*forward=*/true);
                }
            }
        }
        run_forward(graph_, s, views, context, untimed);
    }
}

double PipelineExecutor::backward_chunk(std::span<const int> step, std::uint64_t epoch) {
    const Storage& st = *storage_;
    const ChunkViews views(*this, range(step[static_cast<std::size_t>(way())]));
    const OpContext context{.backend = backend_,
                            .graph = &aggregation_,
                            .row_ids = data_.row_ids,
                            .training = true,
                            .epoch = epoch,
                            .comm = &world_};
    OpContext recompute = context;
    recompute.recompute = true;
    PhaseClock untimed(backend_, world_, nullptr);
    double loss = 0.0;
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
                if (options_.ways > 1 && !graph_.node(s.node).op->row_local()) {
                    exchange_mirrors(views.all(s.dy), step, /*forward=*/false);
                }
                run_backward(graph_, s, views, context, untimed);
                break;
        }
    }
    if (options_.grad_zero_scale) {  // T2: processed chunks (every way's) count twice
        for (const TensorId t : st.kept_grads) {
            for (const int c : step) {
                const MatrixView g = whole_grad(t).rows_of(range(c));
                backend_.axpby(0.0f, g, 2.0f, g);
            }
        }
    }
    return loss;
}

namespace {

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
    Storage& st = *storage_;
    const int s = stage();
    const int num_stages = options_.stages;
    const Stage& stage_ = layout_.stages[static_cast<std::size_t>(s)];
    const int ways = options_.ways;
    const int previous = (s - 1) * ways + way();
    const int next = (s + 1) * ways + way();
    const auto key = static_cast<std::uint64_t>(epoch);
    const auto value_slot = [&](TensorId t) {
        return st.schedule.values[static_cast<std::size_t>(t)];
    };
    const auto grad_slot = [&](TensorId t) {
        return st.schedule.grads[static_cast<std::size_t>(t)];
    };
    st.stage_bytes = 0;
    st.way_bytes = 0;
    st.wait_s = 0.0;
    st.bubble_s = 0.0;
    parameters_.zero_grads();

    // T3: historical embeddings come from the snapshot, except right after it was taken.
    if (snapshot_period_ > 0 && have_snapshot_ && (epoch - 1) % snapshot_period_ != 0) {
        copy_snapshot(/*take=*/false);
    }

    auto receive = [&](MatrixView into, int peer, bool first) {
        Message m{one_way(peer, 0, into.rows), nullptr};
        Stopwatch watch;
        m.exchange = world_.start_exchange(m.pattern, ConstMatrixView{nullptr, 0, into.cols}, into);
        m.exchange->wait_all();
        const double waited = watch.seconds();
        st.wait_s += waited;
        if (first) {
            st.bubble_s += waited;
        }
    };
    auto send = [&](ConstMatrixView rows, int peer, std::vector<std::unique_ptr<Message>>& out) {
        auto m = std::make_unique<Message>();
        m->pattern = one_way(peer, rows.rows, 0);
        m->exchange = world_.start_exchange(m->pattern, rows, MatrixView{nullptr, 0, rows.cols});
        st.stage_bytes += static_cast<std::int64_t>(rows.size() * sizeof(float));
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
    // Forward wave.
    for (std::size_t k = 0; k < num_steps; ++k) {
        const std::vector<int> step = step_of(k);
        const ChunkViews views(*this, range(step[static_cast<std::size_t>(way())]));
        if (s > 0) {
            for (const TensorId t : stage_.incoming) {
                receive(views.rows(value_slot(t)), previous, k == 0);
            }
        }
        forward_chunk(step, key);
        if (s + 1 < num_stages) {
            for (const TensorId t : stage_.outgoing) {
                send(views.rows(value_slot(t)), next, st.sends);
            }
        }
    }
    // Backward wave, in reverse order.
    double loss = 0.0;
    for (std::size_t k = num_steps; k-- > 0;) {
        const std::vector<int> step = step_of(k);
        const ChunkViews views(*this, range(step[static_cast<std::size_t>(way())]));
        st.grad_sends.clear();  // the scratch gradients are about to be rewritten
        if (s + 1 < num_stages) {
            for (const TensorId t : stage_.outgoing) {
                receive(views.rows(grad_slot(t)), next, k + 1 == num_steps);
            }
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
        for (const TensorId t : st.kept_grads) {
            backend_.fill(whole_grad(t), 0.0f);
        }
    }
    if (snapshot_period_ > 0 && epoch % snapshot_period_ == 0) {  // T3: take the snapshot
        copy_snapshot(/*take=*/true);
        have_snapshot_ = true;
    }
    if (world_.size() > 1) {
        world_.start_allreduce_sum(parameters_.grads())->wait();
    }
    std::array<double, 1> sum{loss};
    world_.allreduce_sum(sum);
    std::array<std::int64_t, 2> bytes{st.stage_bytes, st.way_bytes};
    world_.allreduce_sum(bytes);
    std::array<double, 2> waits{st.bubble_s, st.wait_s};
    world_.allreduce_max(waits);
    last_ = PipelineEpochStats{.stage_bytes = bytes[0],
                               .way_bytes = bytes[1],
                               .bubble_s = waits[0],
                               .stage_wait_s = waits[1],
                               .chunks = chunks,
                               .snapshot_period = snapshot_period_};
    return sum[0] / static_cast<double>(data_.global_train);
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
    const Storage& st = *storage_;
    return stage_memory_lines(StageMemory{
        .stage = stage(),
        .kept_floats = st.kept_floats,
        .kept_grad_floats = st.kept_grad_floats,
        .scratch_floats = st.scratch.size() + st.workspace.size(),
        .snapshot_floats = st.backup.size(),
        .mirror_bytes = static_cast<std::int64_t>((st.mirror_send.size() + st.mirror_recv.size()) *
                                                      sizeof(float) +
                                                  st.mirror_rows.size() * sizeof(index_t)),
        .parameters = parameters_.size(),
        .evaluation_floats = evaluation_ ? evaluation_->plan().arena_floats() : 0,
        .evaluates = evaluation_ != nullptr});
}

HaloBytes PipelineExecutor::halo_bytes() const {
    return aggregation_.bytes_sent();
}

}  // namespace strata
