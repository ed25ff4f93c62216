// PipelineExecutor: storage per stage, the GPipe wave, and the techniques' bookkeeping.
#include "src/nn/pipeline_executor.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <type_traits>

#include "src/base/error.hpp"
#include "src/base/timer.hpp"
#include "src/device/counter_rng.hpp"
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
    STRATA_CHECK(data_.sparse_input == nullptr,
                 "the layer pipeline reads dense features (run it with --sparse-features off)");
    STRATA_CHECK(options.ways >= 1, "--ways ", options.ways, ": must be at least 1");
    STRATA_CHECK(options.stages * options.ways == world.size(), "--stages ", options.stages,
                 " x --ways ", options.ways, " = ", options.stages * options.ways,
                 " ranks, but the job has ", world.size(),
                 " (the pipeline runs one rank per stage and way)");
    STRATA_CHECK(options.snapshot_period >= 0, "--snapshot-period ", options.snapshot_period,
                 ": must be 0 (off) or positive");
    STRATA_CHECK(
        base_offsets_.size() >= 2 && base_offsets_.front() == 0 && base_offsets_.back() == rows,
        "pipeline: chunk offsets do not cover the ", rows, " rows");
    for (std::size_t c = 0; c + 1 < base_offsets_.size(); ++c) {
        STRATA_CHECK(base_offsets_[c] < base_offsets_[c + 1], "pipeline: chunk ", c, " is empty");
    }
    STRATA_CHECK(chunks() % options.ways == 0, "--chunks ", chunks(), " with --ways ", options.ways,
                 ": every way needs the same number of chunks (a multiple of ", options.ways, ")");
    chunk_base_.resize(base_offsets_.size());
    std::iota(chunk_base_.begin(), chunk_base_.end(), std::size_t{0});
    STRATA_CHECK(data_.inputs.size() == graph.inputs().size(), "pipeline: ", data_.inputs.size(),
                 " data inputs for a model with ", graph.inputs().size());
    STRATA_CHECK(data_.global_train > 0, "training set is empty (no vertex has train_mask = 1)");
    for (int n = 0; n < graph.num_nodes(); ++n) {
        const Op& op = *graph.node(n).op;
        STRATA_CHECK(op.row_local() || op.kind() == OpKind::aggregate, "--parallel pipeline: op '",
                     graph.node(n).name, "' (", op.describe(),
                     ") is neither row-local nor an aggregation, so it cannot run chunk by chunk");
    }
    layout_ = plan_stages(graph, options.stages, StageCostInputs{.rows = rows, .nnz = options.nnz});
    // Where every tensor of this stage lives (stage_storage.hpp, shared with the planner).
    Storage& st = *storage_;
    static_cast<StageStorage&>(st) = plan_stage_storage(graph, layout_, this->stage(), rows);
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
        STRATA_CHECK(options.structure != nullptr, "pipeline: --ways ", options.ways,
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
        for (const int n : st.nodes) {
            if (graph.node(n).op->kind() == OpKind::aggregate) {
                widest = std::max(widest, graph.tensor(graph.node(n).output).cols);
            }
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

void PipelineExecutor::reset_history() {
    Storage& st = *storage_;
    const index_t rows = aggregation_.num_rows();
    for (std::size_t t = 0; t < st.value.size(); ++t) {  // per tensor: sizes stay in index_t
        if (st.value[t].place == Place::kept) {
            backend_.fill({st.kept.data() + st.value[t].offset, rows, st.value[t].cols}, 0.0f);
        }
        if (st.grad[t].place == Place::kept) {
            backend_.fill({st.kept_grad.data() + st.grad[t].offset, rows, st.grad[t].cols}, 0.0f);
        }
    }
    have_snapshot_ = false;
}

std::vector<float> PipelineExecutor::history() const {
    const Storage& st = *storage_;
    const index_t rows = aggregation_.num_rows();
    std::vector<float> out{static_cast<float>(chunks()), static_cast<float>(snapshot_period_),
                           have_snapshot_ ? 1.0f : 0.0f};
    const auto append = [&](const float* data, std::size_t floats) {
        if (floats == 0) {  // a stage without rows to keep
            return;
        }
        const std::size_t at = out.size();
        out.resize(at + floats);
        backend_.download(out.data() + at, data, floats * sizeof(float));
    };
    for (const TensorId t : st.snapshot) {
        const Location& l = st.value[static_cast<std::size_t>(t)];
        append(st.kept.data() + l.offset, static_cast<std::size_t>(rows) * l.cols);
    }
    if (have_snapshot_) {
        append(st.backup.data(), st.backup.size());
    }
    if (!options_.grad_zero_scale) {
        for (const TensorId t : st.kept_grads) {
            const Location& l = st.grad[static_cast<std::size_t>(t)];
            append(st.kept_grad.data() + l.offset, static_cast<std::size_t>(rows) * l.cols);
        }
    }
    return out;
}

void PipelineExecutor::restore_history(std::span<const float> history) {
    Storage& st = *storage_;
    STRATA_CHECK(history.size() >= 3, "pipeline history: ", history.size(), " values");
    set_staleness(static_cast<int>(history[0]), static_cast<int>(history[1]));
    reset_history();
    const bool snapshot = history[2] != 0.0f;
    const index_t rows = aggregation_.num_rows();
    std::size_t at = 3;
    const auto take = [&](float* data, std::size_t floats) {
        STRATA_CHECK(at + floats <= history.size(), "pipeline history: ", history.size(),
                     " values do not fit this stage's layout");
        if (floats == 0) {
            return;
        }
        backend_.upload(data, history.data() + at, floats * sizeof(float));
        at += floats;
    };
    for (const TensorId t : st.snapshot) {
        const Location& l = st.value[static_cast<std::size_t>(t)];
        take(st.kept.data() + l.offset, static_cast<std::size_t>(rows) * l.cols);
    }
    if (snapshot) {
        STRATA_CHECK(st.backup.size() > 0 || st.snapshot_floats == 0,
                     "pipeline history: a snapshot for a run without one");
        take(st.backup.data(), st.backup.size());
        have_snapshot_ = true;
    }
    if (!options_.grad_zero_scale) {
        for (const TensorId t : st.kept_grads) {
            const Location& l = st.grad[static_cast<std::size_t>(t)];
            take(st.kept_grad.data() + l.offset, static_cast<std::size_t>(rows) * l.cols);
        }
    }
    STRATA_CHECK(at == history.size(), "pipeline history: ", history.size(),
                 " values, this stage's layout holds ", at);
}

namespace {

/// Views of one tensor location.
struct Views {
    const std::vector<Location>& where;
    float* kept;
    float* scratch;
    const TrainingData& data;
    index_t rows;

    [[nodiscard]] MatrixView whole(TensorId t) const {
        const Location& l = where[static_cast<std::size_t>(t)];
        if (l.place == Place::input) {
            const ConstMatrixView in = data.inputs[static_cast<std::size_t>(l.input)];
            return {const_cast<float*>(in.data), in.rows, in.cols};  // read only, as executors do
        }
        STRATA_ASSERT(l.place == Place::kept);
        return {kept + l.offset, rows, l.cols};
    }
    [[nodiscard]] MatrixView chunk(TensorId t, RowRange r) const {
        const Location& l = where[static_cast<std::size_t>(t)];
        if (l.place == Place::scratch) {
            return {scratch + l.offset * static_cast<std::size_t>(r.count), r.count, l.cols};
        }
        return whole(t).rows_of(r);
    }
};

}  // namespace

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

void PipelineExecutor::forward_chunk(std::span<const int> step, std::uint64_t epoch,
                                     bool recompute_only) {
    Storage& st = *storage_;
    const RowRange r = range(step[static_cast<std::size_t>(way())]);
    const Views values{st.value, st.kept.data(), st.scratch.data(), data_, aggregation_.num_rows()};
    OpContext context{.backend = backend_,
                      .graph = &aggregation_,
                      .training = true,
                      .epoch = epoch,
                      .recompute = recompute_only,
                      .comm = &world_};
    const std::span<float> workspace = st.workspace.span();
    for (const int n : recompute_only ? st.recompute : st.nodes) {
        Node& node = graph_.node(n);
        std::vector<ConstMatrixView> x;
        if (node.op->row_local()) {
            for (const TensorId t : node.inputs) {
                x.push_back(values.chunk(t, r));
            }
            context.row_ids = data_.row_ids.subspan(static_cast<std::size_t>(r.first),
                                                    static_cast<std::size_t>(r.count));
            node.op->forward(context, ForwardArgs{.x = x,
                                                  .y = values.chunk(node.output, r),
                                                  .rows = {0, r.count},
                                                  .workspace = workspace});
        } else {
            for (const TensorId t : node.inputs) {
                x.push_back(values.whole(t));
                if (options_.ways > 1 &&
                    st.value[static_cast<std::size_t>(t)].place == Place::kept) {
                    exchange_mirrors(values.whole(t), step, /*forward=*/true);
                }
            }
            context.row_ids = data_.row_ids;
            node.op->forward(
                context,
                ForwardArgs{
                    .x = x, .y = values.whole(node.output), .rows = r, .workspace = workspace});
        }
    }
}

double PipelineExecutor::backward_chunk(std::span<const int> step, std::uint64_t epoch) {
    Storage& st = *storage_;
    const RowRange r = range(step[static_cast<std::size_t>(way())]);
    const index_t n_rows = aggregation_.num_rows();
    const Views values{st.value, st.kept.data(), st.scratch.data(), data_, n_rows};
    const Views grads{st.grad, st.kept_grad.data(), st.scratch.data(), data_, n_rows};
    forward_chunk(step, epoch, /*recompute_only=*/true);
    double loss = 0.0;
    if (layout_.stages.back().end == layout_.stages[static_cast<std::size_t>(stage())].end) {
        const TensorId out = graph_.output();
        const auto first = static_cast<std::size_t>(r.first);
        const auto count = static_cast<std::size_t>(r.count);
        loss = backend_
                   .softmax_cross_entropy(values.chunk(out, r), data_.labels.subspan(first, count),
                                          data_.train_mask.subspan(first, count),
                                          1.0f / static_cast<float>(data_.global_train),
                                          grads.chunk(out, r))
                   .loss;
    }
    OpContext context{.backend = backend_,
                      .graph = &aggregation_,
                      .training = true,
                      .epoch = epoch,
                      .comm = &world_};
    const std::span<float> workspace = st.workspace.span();
    for (std::size_t k = st.nodes.size(); k-- > 0;) {
        Node& node = graph_.node(st.nodes[k]);
        const std::vector<GradMode>& modes = st.modes[k];
        std::vector<ConstMatrixView> x;
        std::vector<MatrixView> dx;
        if (node.op->row_local()) {
            for (std::size_t i = 0; i < node.inputs.size(); ++i) {
                x.push_back(values.chunk(node.inputs[i], r));
                dx.push_back(modes[i] == GradMode::skip ? MatrixView{}
                                                        : grads.chunk(node.inputs[i], r));
            }
            context.row_ids = data_.row_ids.subspan(static_cast<std::size_t>(r.first),
                                                    static_cast<std::size_t>(r.count));
            node.op->backward(context, BackwardArgs{.x = x,
                                                    .y = values.chunk(node.output, r),
                                                    .dy = grads.chunk(node.output, r),
                                                    .dx = dx,
                                                    .modes = modes,
                                                    .rows = {0, r.count},
                                                    .workspace = workspace});
        } else {
            // The pull dx[rows] = (Âᵀ dy)[rows] reads the output gradient's whole-graph buffer;
            // dx is the chunk's rows (scratch) or a whole-graph buffer.
            for (std::size_t i = 0; i < node.inputs.size(); ++i) {
                const TensorId t = node.inputs[i];
                x.push_back(values.whole(t));
                if (modes[i] == GradMode::skip) {
                    dx.push_back(MatrixView{});
                } else if (st.grad[static_cast<std::size_t>(t)].place == Place::kept) {
                    dx.push_back(grads.whole(t));
                } else {
                    dx.push_back(grads.chunk(t, r));
                }
            }
            if (options_.ways > 1) {
                exchange_mirrors(grads.whole(node.output), step, /*forward=*/false);
            }
            context.row_ids = data_.row_ids;
            node.op->backward(context, BackwardArgs{.x = x,
                                                    .y = values.whole(node.output),
                                                    .dy = grads.whole(node.output),
                                                    .dx = dx,
                                                    .modes = modes,
                                                    .rows = r,
                                                    .workspace = workspace});
        }
    }
    if (options_.grad_zero_scale) {  // T2: processed chunks (every way's) count twice
        for (const TensorId t : st.kept_grads) {
            for (const int c : step) {
                const MatrixView g = grads.chunk(t, range(c));
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
    const index_t n_rows = aggregation_.num_rows();
    const Views values{st.value, st.kept.data(), st.scratch.data(), data_, n_rows};
    const Views grads{st.grad, st.kept_grad.data(), st.scratch.data(), data_, n_rows};
    const auto key = static_cast<std::uint64_t>(epoch);
    st.stage_bytes = 0;
    st.way_bytes = 0;
    st.wait_s = 0.0;
    st.bubble_s = 0.0;
    parameters_.zero_grads();

    // T3: historical embeddings come from the snapshot, except right after it was taken.
    if (snapshot_period_ > 0 && have_snapshot_ && (epoch - 1) % snapshot_period_ != 0) {
        std::size_t offset = 0;
        for (const TensorId t : st.snapshot) {
            const MatrixView v = values.whole(t);
            backend_.copy(v.data, st.backup.data() + offset, v.size() * sizeof(float));
            offset += aligned_floats(v.size());
        }
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
        const RowRange r = range(step[static_cast<std::size_t>(way())]);
        if (s > 0) {
            for (const TensorId t : stage_.incoming) {
                receive(values.chunk(t, r), previous, k == 0);
            }
        }
        forward_chunk(step, key, /*recompute_only=*/false);
        if (s + 1 < num_stages) {
            for (const TensorId t : stage_.outgoing) {
                send(values.chunk(t, r), next, st.sends);
            }
        }
    }
    // Backward wave, in reverse order.
    double loss = 0.0;
    for (std::size_t k = num_steps; k-- > 0;) {
        const std::vector<int> step = step_of(k);
        const RowRange r = range(step[static_cast<std::size_t>(way())]);
        st.grad_sends.clear();  // the scratch gradients are about to be rewritten
        if (s + 1 < num_stages) {
            for (const TensorId t : stage_.outgoing) {
                receive(grads.chunk(t, r), next, k + 1 == num_steps);
            }
        }
        loss += backward_chunk(step, key);
        if (s > 0) {
            for (const TensorId t : stage_.incoming) {
                send(grads.chunk(t, r), previous, st.grad_sends);
            }
        }
    }
    st.grad_sends.clear();
    st.sends.clear();

    if (options_.grad_zero_scale) {  // T2: no historical gradient survives the epoch
        for (const TensorId t : st.kept_grads) {
            backend_.fill(grads.whole(t), 0.0f);
        }
    }
    if (snapshot_period_ > 0 && epoch % snapshot_period_ == 0) {  // T3: take the snapshot
        std::size_t offset = 0;
        for (const TensorId t : st.snapshot) {
            const MatrixView v = values.whole(t);
            backend_.copy(st.backup.data() + offset, v.data, v.size() * sizeof(float));
            offset += aligned_floats(v.size());
        }
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
