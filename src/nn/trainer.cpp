// Trainer: the epoch loop body and global metrics.
#include "src/nn/trainer.hpp"

#include <array>
#include <memory>
#include <vector>

#include "src/base/error.hpp"
#include "src/base/log.hpp"
#include "src/base/timer.hpp"

namespace strata {

Trainer::Trainer(Model& model, Optimizer& optimizer, Backend& backend, Communicator& comm,
                 TrainData& data)
    : model_(model),
      optimizer_(optimizer),
      backend_(backend),
      comm_(comm),
      data_(data),
      dlogits_(backend, data.features->rows(), model.output_cols()) {
    STRATA_CHECK(data.global_train > 0, "training set is empty (no vertex has train_mask = 1)");
}

EpochStats Trainer::train_epoch(std::int64_t epoch) {
    const CommStats before = comm_.stats();
    Stopwatch watch;
    EpochStats stats;
    stats.epoch = epoch;

    model_.zero_grads();
    const LayerContext context{.training = true, .epoch = static_cast<std::uint64_t>(epoch)};
    const DenseMatrix& logits = model_.forward(*data_.features, context);
    const float scale = 1.0f / static_cast<float>(data_.global_train);
    const LossSums train = backend_.softmax_cross_entropy(
        logits.view(), data_.labels.span(), data_.train_mask.span(), scale, dlogits_.view());

    // Each layer's gradient all-reduce starts as soon as it is complete and overlaps the
    // backward of the layers below; the optimizer waits for all of them.
    std::vector<std::unique_ptr<Reduction>> reductions;
    const bool distributed = comm_.size() > 1;
    // Communicators order device operations after the work already queued on the backend, so
    // no host synchronization is needed here.
    model_.backward(dlogits_, [&](std::size_t layer) {
        if (distributed) {
            reductions.push_back(comm_.start_allreduce_sum(model_.layer_grads(layer)));
        }
    });
    for (auto& reduction : reductions) {
        reduction->wait();
    }
    optimizer_.step(model_.parameters());

    std::array<double, 1> loss{train.loss};
    comm_.allreduce_sum(loss);
    stats.loss = loss[0] / static_cast<double>(data_.global_train);
    backend_.synchronize();  // a device backend may still be running backward and Adam
    stats.train_s = watch.seconds();
    evaluate_into(stats);

    stats.epoch_s = watch.seconds();
    stats.eval_s = stats.epoch_s - stats.train_s;
    const CommStats& after = comm_.stats();
    stats.wait_s = after.wait_seconds - before.wait_seconds;
    std::array<std::int64_t, 2> bytes{after.exchange_bytes_sent - before.exchange_bytes_sent,
                                      after.collective_bytes - before.collective_bytes};
    std::array<double, 5> maxima{stats.epoch_s, stats.wait_s, stats.epoch_s - stats.wait_s,
                                 stats.train_s, stats.eval_s};
    std::array<std::int64_t, 1> rss{peak_rss_bytes()};
    comm_.allreduce_sum(bytes);
    comm_.allreduce_max(maxima);
    comm_.allreduce_max(rss);
    stats.halo_bytes = bytes[0];
    stats.allreduce_bytes = bytes[1];
    stats.epoch_s = maxima[0];
    stats.wait_s = maxima[1];
    stats.compute_s = maxima[2];
    stats.train_s = maxima[3];
    stats.eval_s = maxima[4];
    stats.peak_rss_bytes = rss[0];
    return stats;
}

EpochStats Trainer::evaluate() {
    EpochStats stats;
    evaluate_into(stats);
    return stats;
}

void Trainer::evaluate_into(EpochStats& stats) {
    const DenseMatrix& logits = model_.forward(*data_.features, LayerContext{.training = false});
    const MatrixView no_grad{};
    const LossSums train = backend_.softmax_cross_entropy(logits.view(), data_.labels.span(),
                                                          data_.train_mask.span(), 1.0f, no_grad);
    const LossSums val = backend_.softmax_cross_entropy(logits.view(), data_.labels.span(),
                                                        data_.val_mask.span(), 1.0f, no_grad);
    const LossSums test = backend_.softmax_cross_entropy(logits.view(), data_.labels.span(),
                                                         data_.test_mask.span(), 1.0f, no_grad);
    std::array<std::int64_t, 6> counts{train.correct, train.count,  val.correct,
                                       val.count,     test.correct, test.count};
    std::array<double, 1> val_loss{val.loss};
    comm_.allreduce_sum(counts);
    comm_.allreduce_sum(val_loss);
    auto ratio = [](std::int64_t a, std::int64_t b) {
        return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0.0;
    };
    stats.train_acc = ratio(counts[0], counts[1]);
    stats.val_acc = ratio(counts[2], counts[3]);
    stats.test_acc = ratio(counts[4], counts[5]);
    stats.val_loss = counts[3] > 0 ? val_loss[0] / static_cast<double>(counts[3]) : 0.0;
}

}  // namespace strata
