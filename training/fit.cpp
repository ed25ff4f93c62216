// fit: one epoch at a time, global figures, hooks.
#include "training/fit.hpp"

#include <array>
#include <cmath>
#include <optional>

#include "src/base/error.hpp"
#include "src/base/log.hpp"
#include "src/base/timer.hpp"
#include "src/base/trace.hpp"

namespace strata {

bool evaluation_due(std::int64_t epoch, std::int64_t epochs, int eval_every) {
    return epoch == epochs || (eval_every > 0 && epoch % eval_every == 0);
}

void fit(const FitContext& context, const FitOptions& options, std::span<FitHook* const> hooks,
         FitState& state) {
    STRATA_CHECK_OPTION(options.eval_every >= 1, "eval_every", options.eval_every,
                        "must be at least 1");
    Communicator& comm = context.comm;
    while (state.epoch < state.epochs && !state.stopping()) {
        const std::int64_t epoch = state.epoch + 1;
        for (FitHook* hook : hooks) {
            hook->begin_epoch(epoch);
        }
        const CommStats before = comm.stats();
        const HaloBytes halo_before = context.executor.halo_bytes();
        const HaloBytes switch_before = context.executor.switch_bytes();
        EpochStats stats;
        stats.epoch = epoch;
        Stopwatch watch;
        {
            const trace::Span span("training step", "step", epoch);
            stats.loss = context.executor.train_step(epoch);
        }
        std::optional<PhaseTimes> phases = context.executor.phase_times();
        const Stopwatch update;  // a profiling executor returns synchronized
        {
            const trace::Span span("optimizer step", "step", epoch);
            context.optimizer.step(context.parameters.all());
            context.backend.synchronize();  // a device may still run backward and the update
        }
        const double train_s = watch.seconds();
        if (phases) {
            phases->optimizer = update.seconds();
            phases->other = train_s - (phases->gemm + phases->aggregation + phases->attention +
                                       phases->elementwise + phases->loss + phases->exposed_wait +
                                       phases->optimizer);
        }
        stats.train_s = train_s;
        const double train_wait_s = comm.stats().wait_seconds - before.wait_seconds;
        if (context.guard == nullptr && !std::isfinite(stats.loss)) {
            const char* value = std::isnan(stats.loss) ? "NaN" : stats.loss > 0 ? "+Inf" : "-Inf";
            STRATA_FAIL("training diverged: loss is ", value, " at epoch ", epoch,
                        " (try a smaller lr)",
                        options.divergence_hint ? options.divergence_hint() : std::string());
        }
        if (evaluation_due(epoch, state.epochs, options.eval_every)) {
            const trace::Span span("evaluation", "step", epoch);
            const Evaluation e = context.executor.evaluate();
            stats.evaluated = true;
            stats.train_acc = e.train_acc;
            stats.val_acc = e.val_acc;
            stats.test_acc = e.test_acc;
            stats.val_loss = e.val_loss;
            stats.eval_train_loss = e.train_loss;
            stats.binary = e.binary;
            stats.val_auc = e.val_auc;
            stats.test_auc = e.test_auc;
        }
        stats.epoch_s = watch.seconds();
        stats.eval_s = stats.epoch_s - stats.train_s;

        const double figures_begin = trace::now();
        const CommStats after = comm.stats();
        const HaloBytes halo_after = context.executor.halo_bytes();
        const HaloBytes switch_after = context.executor.switch_bytes();
        const std::int64_t collective = after.collective_bytes - before.collective_bytes;
        std::array<std::int64_t, 7> bytes{
            (halo_after.forward - halo_before.forward) +
                (halo_after.backward - halo_before.backward),
            halo_after.recompute - halo_before.recompute,
            collective,
            (switch_after.forward - switch_before.forward) +
                (switch_after.backward - switch_before.backward),
            switch_after.recompute - switch_before.recompute,
            0,  // intra-node: the five above less the inter-node bytes
            (halo_after.inter_node - halo_before.inter_node) +
                (switch_after.inter_node - switch_before.inter_node) +
                (comm.num_nodes() > 1 ? collective : 0)};
        bytes[5] = bytes[0] + bytes[1] + bytes[2] + bytes[3] + bytes[4] - bytes[6];
        std::array<double, 2> maxima{stats.epoch_s, after.wait_seconds - before.wait_seconds};
        std::array<std::int64_t, 1> rss{peak_rss_bytes()};
        comm.allreduce_sum(bytes);
        comm.allreduce_max(maxima);
        comm.allreduce_max(rss);
        stats.halo_bytes = bytes[0];
        stats.recompute_halo_bytes = bytes[1];
        stats.a2a_bytes = bytes[3];
        stats.recompute_a2a_bytes = bytes[4];
        stats.allreduce_bytes = bytes[2];
        stats.bytes_intra_node = bytes[5];
        stats.bytes_inter_node = bytes[6];
        stats.max_wait_s = maxima[1];
        stats.peak_rss_bytes = rss[0];
        // The time parts come from one rank, the slowest (the lowest of equals), so that they
        // add up: epoch_s = compute_s + wait_s + eval_s.
        std::array<double, 1> slowest{
            static_cast<double>(stats.epoch_s >= maxima[0] ? -comm.rank() : -comm.size())};
        comm.allreduce_max(slowest);
        const bool mine = static_cast<int>(-slowest[0]) == comm.rank();
        std::array<double, 3> parts{mine ? stats.train_s : 0.0, mine ? train_wait_s : 0.0,
                                    mine ? stats.eval_s : 0.0};
        comm.allreduce_sum(parts);  // zeros elsewhere: the sums are the slowest rank's values
        stats.train_s = parts[0];
        stats.wait_s = parts[1];
        stats.compute_s = parts[0] - parts[1];
        stats.eval_s = parts[2];
        stats.epoch_s = stats.compute_s + stats.wait_s + stats.eval_s;
        if (phases) {  // the same rank's (every rank profiles or none does)
            std::array<double, 8> p{phases->gemm,        phases->aggregation, phases->attention,
                                    phases->elementwise, phases->loss,        phases->exposed_wait,
                                    phases->optimizer,   phases->other};
            for (double& v : p) {
                v = mine ? v : 0.0;
            }
            comm.allreduce_sum(p);
            stats.phases = PhaseTimes{.gemm = p[0],
                                      .aggregation = p[1],
                                      .attention = p[2],
                                      .elementwise = p[3],
                                      .loss = p[4],
                                      .exposed_wait = p[5],
                                      .optimizer = p[6],
                                      .other = p[7]};
        }

        stats.pipeline = context.executor.pipeline_epoch();
        if (stats.pipeline) {  // stage transfers split likewise (already summed over ranks)
            const PipelineEpochStats& p = *stats.pipeline;
            stats.bytes_inter_node += p.inter_node_bytes;
            stats.bytes_intra_node += p.stage_bytes + p.way_bytes - p.inter_node_bytes;
        }
        trace::record("epoch figures", "step", figures_begin, trace::now(), epoch);
        if (context.guard != nullptr) {
            const trace::Span span("guard", "step", epoch);  // accuracy and precision guards
            context.guard->review(stats, state);
        }
        state.epoch = epoch;
        if (stats.evaluated) {
            state.history.push_back({epoch, stats.val_loss, stats.val_acc});
        }
        for (FitHook* hook : hooks) {
            hook->end_epoch(stats, state);
        }
    }
}

}  // namespace strata
