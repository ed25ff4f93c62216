// The cost model: each planned step priced on the machine model.
#include "planner/cost_model.hpp"

#include <algorithm>
#include <cmath>

#include "layers/sparse_linear_op.hpp"
#include "planner/shape_operator.hpp"
#include "src/nn/model_parameters.hpp"

namespace strata::planner {
namespace {

/// threads x ranks on the node / cores: 1 when this rank has the node to itself.
double shared_fraction(const RunShape& shape) {
    if (shape.ranks_per_node <= 1) {
        return 1.0;
    }
    return std::min(1.0, static_cast<double>(shape.threads) /
                             static_cast<double>(std::max(1, shape.machine->cores)));
}

/// Prices one rank's steps.
class Pricer {
public:
    Pricer(const ModelGraph& graph, const RankStats& rank, const RunShape& shape)
        : graph_(graph),
          rank_(rank),
          shape_(shape),
          rates_(shape.machine->rates(shape.threads)),
          node_(shape.machine->rates(shape.machine->cores)),
          share_(shared_fraction(shape)) {}

    /// The evaluation's metrics pass over the logits (softmax, loss and accuracy on every row):
    /// as the loss step.
    [[nodiscard]] double metrics(EpochTerms& terms) const {
        const double t = loss_seconds();
        terms.elementwise_s += t;
        return t;
    }

    /// Seconds of `schedule`'s steps, into `terms`; returns (busy, exposed wait).
    /// Only the steps of nodes in [first, end), and the loss when `loss` (a pipeline stage).
    std::pair<double, double> price(const Schedule& schedule, EpochTerms& terms, int first = 0,
                                    int end = -1, bool loss = true,
                                    Phase phase = Phase::all) const {
        double busy = 0.0;
        double wait = 0.0;
        // The training schedule has the loss step; the evaluation's has none (no dropout).
        const bool training =
            std::any_of(schedule.steps.begin(), schedule.steps.end(),
                        [](const PlanStep& s) { return s.kind == StepKind::loss; });
        for (const PlanStep& step : schedule.steps) {
            if (step.kind == StepKind::loss ? !loss
                                            : step.node < first || (end >= 0 && step.node >= end)) {
                continue;
            }
            if (phase != Phase::all &&
                (step.kind == StepKind::forward) != (phase == Phase::forward)) {
                continue;
            }
            terms.steps_s += rates_.step_s;
            busy += rates_.step_s;
            if (step.kind == StepKind::loss) {
                const double t = loss_seconds();
                terms.elementwise_s += t;
                busy += t;
                continue;
            }
            const Node& node = graph_.node(step.node);
            const OpKind kind = node.op->kind();
            const bool backward = step.kind == StepKind::backward;
            const double out = cols(node.output);
            const std::vector<index_t> in = graph_.input_cols(step.node);
            if (backward && step.folded >= 0) {  // G = Âᵀ dy at the linear's output width
                const auto [t, w] = aggregation(out, true);
                busy += t;
                wait += w;
                terms.spmm_s += t;
                terms.exposed_s += w;
            }
            const auto* sparse = dynamic_cast<const SparseLinearOp*>(node.op.get());
            if (kind == OpKind::linear && sparse != nullptr) {
                // y = dropout(x) W, x sparse: an SpMM over the rank's feature non-zeros at
                // width `out`, gathering rows of W (in x out); backward dW = dropout(x)ᵀ dy
                // gathering rows of dy, no dx (x is an input). In training both regenerate the
                // dropout: copy the values, a hash per entry (backward also gathers them into
                // xᵀ: 12 bytes per entry in all).
                const double entries = static_cast<double>(rank_.feature_nnz);
                const double gathered = backward ? rows() : static_cast<double>(in.at(0));
                double t = spmm_seconds(entries, out, size_hit(gathered * out * 4.0));
                if (training && sparse->dropout() > 0.0f) {
                    t += entries * (rates_.dropout_entry_s + (backward ? 12.0 : 8.0) / bandwidth());
                }
                terms.spmm_s += t;
                busy += t;
            } else if (kind == OpKind::linear) {
                // Forward x W, backward dW = xᵀ dy (the reduction's own rate) and, when the plan
                // reads it, dx = dy Wᵀ.
                const double k = in.at(0);
                const double flops = 2.0 * rows() * k * out;
                const double width = std::min(k, out);
                const double nn = flops / (interpolate(rates_.gemm, width) * giga);
                const double gemms =
                    backward ? (step.dx.empty() || step.dx[0] < 0 ? 1.0 : 2.0) : 1.0;
                const double t = backward ? flops / (interpolate(rates_.gemm_tn, width) * giga) +
                                                (gemms - 1.0) * nn
                                          : nn;
                terms.gemm_s += t;
                busy += t;
                // A threaded GEMM between OpenMP kernels pays the thread pools' hand-over.
                if (flops / 2.0 > blas_threading_flops) {
                    terms.steps_s += gemms * rates_.blas_switch_s;
                    busy += gemms * rates_.blas_switch_s;
                }
            } else if (kind == OpKind::aggregate || kind == OpKind::attention) {
                // Attention is priced as an aggregation (its edge softmax is not modelled).
                const auto [t, w] = aggregation(out, backward);
                busy += t;
                wait += w;
                terms.spmm_s += t;
                terms.exposed_s += w;
                terms.exchange_s += exchange_time(out, backward);
            } else {
                const double bytes = rows() * out * 4.0 * (static_cast<double>(in.size()) + 1.0);
                const double t = (backward ? 2.0 : 1.0) * stream_seconds(bytes);
                terms.elementwise_s += t;
                busy += t;
            }
        }
        return {busy, wait};
    }

private:
    [[nodiscard]] double rows() const { return static_cast<double>(rank_.owned); }
    /// Softmax cross-entropy over the rank's logits: the measured cost per logit, or (an
    /// older machine model) streaming 12 bytes per logit.
    [[nodiscard]] double loss_seconds() const {
        const double logits = rows() * cols(graph_.output());
        return rates_.softmax_entry_s > 0.0 ? logits * rates_.softmax_entry_s
                                            : logits * 12.0 / bandwidth();
    }
    [[nodiscard]] double cols(TensorId t) const { return graph_.tensor(t).cols; }
    [[nodiscard]] double bandwidth() const {
        return shared(rates_.memory_gbs, node_.memory_gbs) * giga;
    }
    /// Seconds to stream `bytes` (one pass over a pointwise op's operands): at the in-cache
    /// rate as far as they fit in the cache (size_hit), else at the memory's.
    [[nodiscard]] double stream_seconds(double bytes) const {
        if (rates_.cache_gbs <= 0.0) {  // an older machine model
            return bytes / bandwidth();
        }
        const double hit = size_hit(bytes);
        const double cache_bandwidth = shared(rates_.cache_gbs, node_.cache_gbs) * giga;
        return bytes * (hit / cache_bandwidth + (1.0 - hit) / bandwidth());
    }
    /// A memory-bound rate of this rank: its own, at most its share of the node's.
    [[nodiscard]] double shared(double own, double node) const {
        return share_ < 1.0 ? std::min(own, node * share_) : own;
    }

    /// Seconds of an SpMM over `entries` at `width` whose gathered rows are in the cache with
    /// probability `hit`: each entry x column at the in-cache rate when it hits, at the
    /// out-of-cache rate when it misses.
    [[nodiscard]] double spmm_seconds(double entries, double width, double hit) const {
        const double in = shared(interpolate(rates_.spmm_in_cache, width),
                                 interpolate(node_.spmm_in_cache, width));
        const double out = shared(interpolate(rates_.spmm_out_of_cache, width),
                                  interpolate(node_.spmm_out_of_cache, width));
        return rates_.spmm_scale * entries * width * (hit / in + (1.0 - hit) / out) / giga;
    }

    /// This rank's share of the last-level cache (ranks on one node share it).
    [[nodiscard]] double cache() const {
        return std::max(1.0, shape_.machine->cache_bytes) /
               static_cast<double>(std::max(1, shape_.ranks_per_node));
    }

    /// Hit probability of a random access into `bytes`: the share of them half the rank's
    /// cache holds (the other half: the streams around them).
    [[nodiscard]] double size_hit(double bytes) const {
        return std::min(1.0, 0.5 * cache() / std::max(1.0, bytes));
    }

    /// Bytes an SpMM at `width` keeps hot: the rows it gathers (owned and received) and the
    /// rows it writes.
    [[nodiscard]] double spmm_bytes(double width) const {
        return (2.0 * rows() + static_cast<double>(rank_.recv_rows)) * width * 4.0;
    }

    /// Hit probability of the inner block's gathers at `width`: an entry near its row hits
    /// (each thread's rows are a band of the local order, and row j gathered for row i is
    /// still cached when |i - j| is within half the rows, of x and y, a thread's share of half
    /// the cache holds: RankStats::inner_near); the others hit as random accesses do (size_hit).
    [[nodiscard]] double inner_hit(double width) const {
        const double by_size = size_hit(spmm_bytes(width));
        const std::vector<double>& near = rank_.inner_near;
        if (near.empty()) {
            return by_size;
        }
        // Rows of x gathered and of y written both pass through the cache (as spmm_bytes).
        const double band = 0.5 * cache() / (2.0 * width * 4.0 * std::max(1, shape_.threads));
        const double b = std::clamp(std::log2(std::max(1.0, band / 2.0)), 0.0,
                                    static_cast<double>(near.size() - 1));
        const auto lo = static_cast<std::size_t>(b);
        const std::size_t hi = std::min(lo + 1, near.size() - 1);
        const double by_order = near[lo] + (b - static_cast<double>(lo)) * (near[hi] - near[lo]);
        return by_order + (1.0 - by_order) * by_size;
    }

    /// One exchange's transfer time at `width` (backward: the reversed pattern).
    [[nodiscard]] double exchange_time(double width, bool backward) const {
        if (rank_.peers == 0) {
            return 0.0;
        }
        const double sent = static_cast<double>(backward ? rank_.recv_rows : rank_.send_rows);
        const double received = static_cast<double>(backward ? rank_.send_rows : rank_.recv_rows);
        const double row_bytes = static_cast<double>(
            packed_row_bytes(shape_.halo_precision, static_cast<index_t>(width)));
        return rank_.peers * shape_.network.latency_s +
               link_share_time(std::max(sent, received) * row_bytes, shape_);
    }

    /// (SpMM seconds, exposed exchange seconds) of one aggregation at `width`.
    [[nodiscard]] std::pair<double, double> aggregation(double width, bool backward) const {
        double inner = spmm_seconds(static_cast<double>(rank_.inner_nnz), width, inner_hit(width));
        const double halo =
            spmm_seconds(static_cast<double>(rank_.halo_nnz), width, size_hit(spmm_bytes(width)));
        const double transfer = exchange_time(width, backward);
        if (transfer > 0.0) {
            inner *= shape_.machine->overlap_slowdown;
        }
        // Packing the send rows and scattering the received ones stream them once more; at
        // every precision (bf16 and int8 pack by converting, and their receivers read records
        // where fp32's read rows: about even, measured over the emulated links, docs/planner.md).
        const double pack =
            static_cast<double>(rank_.send_rows + rank_.recv_rows) * width * 8.0 / bandwidth();
        return {inner + halo + pack, std::max(0.0, transfer - inner)};
    }

    const ModelGraph& graph_;
    const RankStats& rank_;
    const RunShape& shape_;
    const ThreadRates& rates_;
    const ThreadRates& node_;  ///< all cores of the node in one process
    double share_;             ///< this rank's share of the node's bandwidth (1: all of it)
};

}  // namespace

ExecutionPlan rank_plan(const ModelGraph& graph, const RankStats& rank, Recompute recompute,
                        HaloPrecision precision) {
    const ShapeOperator op(static_cast<index_t>(rank.owned), rank.send_rows, rank.recv_rows,
                           precision);
    PlanOptions options;
    options.rows = static_cast<index_t>(rank.owned);
    options.recompute = recompute;
    options.graph = &op;
    return plan_execution(graph, options);
}

ScheduleBytes schedule_halo_bytes(const ModelGraph& graph, const Schedule& schedule,
                                  const RankStats& rank, HaloPrecision precision) {
    ScheduleBytes bytes;
    const auto add = [&](StepKind kind, double width) {
        const std::int64_t rows = kind == StepKind::backward ? rank.recv_rows : rank.send_rows;
        const auto b = rows * static_cast<std::int64_t>(
                                  packed_row_bytes(precision, static_cast<index_t>(width)));
        (kind == StepKind::recompute ? bytes.recompute : bytes.sent) += b;
    };
    for (const PlanStep& step : schedule.steps) {
        if (step.kind == StepKind::loss) {
            continue;
        }
        const Node& node = graph.node(step.node);
        if (step.kind == StepKind::backward && step.folded >= 0) {
            add(StepKind::backward, graph.tensor(node.output).cols);
        }
        if (node.op->kind() == OpKind::aggregate) {
            add(step.kind, graph.tensor(node.output).cols);
        }
    }
    return bytes;
}

double link_share_time(double bytes, const RunShape& shape) {
    const double across = bytes * shape.cross_share * std::max(1, shape.link_ranks) /
                          (shape.network.bandwidth_gbs * giga);
    if (shape.cross_share >= 1.0) {
        return across;
    }
    const double inside =
        bytes * (1.0 - shape.cross_share) / (shape.machine->shared_memory.bandwidth_gbs * giga);
    return std::max(across, inside);
}

double allreduce_seconds(double params, int ranks, const Network& network) {
    if (ranks <= 1) {
        return 0.0;
    }
    const double k = ranks;
    return 2.0 * std::ceil(std::log2(k)) * network.latency_s +
           2.0 * (k - 1.0) / k * params * 4.0 / (network.bandwidth_gbs * giga);
}

double streaming_gbs(const RunShape& shape) {
    const ThreadRates& rates = shape.machine->rates(shape.threads);
    const double share = shared_fraction(shape);
    return share < 1.0 ? std::min(rates.memory_gbs,
                                  shape.machine->rates(shape.machine->cores).memory_gbs * share)
                       : rates.memory_gbs;
}

double time_share(const RunShape& shape) {
    const double load = static_cast<double>(std::max(1, shape.ranks_per_node)) *
                        static_cast<double>(std::max(1, shape.threads));
    return std::max(1.0, load / static_cast<double>(std::max(1, shape.machine->cores)));
}

double optimizer_seconds(double params, const RunShape& shape) {
    return params * 28.0 / (streaming_gbs(shape) * giga) +
           shape.machine->rates(shape.threads).step_s;
}

double price_stage(const ModelGraph& graph, const Schedule& schedule, const RankStats& rank,
                   const RunShape& shape, int first, int end, Phase phase, EpochTerms& terms) {
    const Pricer pricer(graph, rank, shape);
    return pricer.price(schedule, terms, first, end, end == graph.num_nodes(), phase).first;
}

double price_recompute(const ModelGraph& graph, const Schedule& schedule, const RankStats& rank,
                       const RunShape& shape, const std::vector<int>& nodes, EpochTerms& terms) {
    const Pricer pricer(graph, rank, shape);
    double busy = 0.0;
    for (const int n : nodes) {
        busy += pricer.price(schedule, terms, n, n + 1, /*loss=*/false, Phase::forward).first;
    }
    return busy;
}

double price_evaluation(const ModelGraph& graph, const ExecutionPlan& plan, const RankStats& rank,
                        const RunShape& shape, EpochTerms& terms) {
    const Pricer pricer(graph, rank, shape);
    const double busy = pricer.price(plan.evaluation(), terms).first;
    return busy + pricer.metrics(terms);
}

EpochPrediction predict_graph_epoch(const ModelGraph& graph, Recompute recompute,
                                    const PartitionStats& stats, const RunShape& shape) {
    EpochPrediction best;
    const double params = static_cast<double>(ModelParameters::count(graph));
    const int k = stats.parts;
    const ThreadRates& rates = shape.machine->rates(shape.threads);
    const double allreduce_bytes = params * 4.0;
    const double allreduce = allreduce_seconds(params, k, shape.network);
    const double optimizer = optimizer_seconds(params, shape);
    const double scale = rates.time_scale * time_share(shape);
    EpochPrediction out;
    out.allreduce_bytes = k <= 1 ? 0 : static_cast<std::int64_t>(allreduce_bytes);
    // Every rank of the statistics (the all-reduce spans stats.parts ranks: the grid's model
    // passes one representative rank per part).
    for (int r = 0; r < static_cast<int>(stats.ranks.size()); ++r) {
        const RankStats& rank = stats.ranks[static_cast<std::size_t>(r)];
        const ExecutionPlan plan = rank_plan(graph, rank, recompute);
        const Pricer pricer(graph, rank, shape);
        EpochTerms terms;
        const auto [train_busy, train_wait] = pricer.price(plan.training(), terms);
        terms.optimizer_s = optimizer;
        terms.allreduce_s = allreduce;
        const EpochTerms train_terms = terms;
        EpochTerms eval_terms;
        const auto [eval_steps, eval_wait] = pricer.price(plan.evaluation(), eval_terms);
        const double eval_busy = eval_steps + pricer.metrics(eval_terms);
        terms.gemm_s += eval_terms.gemm_s;
        terms.spmm_s += eval_terms.spmm_s;
        terms.elementwise_s += eval_terms.elementwise_s;
        terms.steps_s += eval_terms.steps_s;
        terms.exchange_s += eval_terms.exchange_s;
        terms.exposed_s += eval_terms.exposed_s;
        EpochPrediction p;
        p.train_terms = train_terms;
        p.compute_s = scale * (train_busy + optimizer);
        p.wait_s = train_wait + allreduce;
        p.eval_s = scale * eval_busy + eval_wait;
        p.epoch_s = p.compute_s + p.wait_s + p.eval_s;
        p.slowest_rank = r;
        p.terms = terms;
        if (r == 0 || p.epoch_s > best.epoch_s) {
            best = p;
        }
        const ScheduleBytes train =
            schedule_halo_bytes(graph, plan.training(), rank, shape.halo_precision);
        const ScheduleBytes eval =
            schedule_halo_bytes(graph, plan.evaluation(), rank, shape.halo_precision);
        out.halo_bytes += train.sent + eval.sent;
        out.recompute_halo_bytes += train.recompute + eval.recompute;
    }
    best.halo_bytes = out.halo_bytes;
    best.recompute_halo_bytes = out.recompute_halo_bytes;
    best.allreduce_bytes = out.allreduce_bytes;
    return best;
}

}  // namespace strata::planner
