// bench/layout_switch: the G x F grid's layout switch (layers/layout_switch: to_columns, then
// to_rows) of a part of `rows` rows at `width` columns over F = the launched ranks, next to two
// baselines measured in the same run on the same ranks: the Communicator's exchange of the same
// floats between contiguous buffers (what the planner's `shared_memory` figure prices), and a
// memcpy of the staged side (r (w - c) floats); and the planner's price of the switch
// (planner::switch_seconds) at the exchange's and the memcpy's rates just measured. Each rank
// sends r (w - c) floats per switch (r its row chunk, c its column slice). Prints the median of
// `reps` (after a warm-up, the slowest rank's) in ms per switch and GB/s of the larger side, and
// one JSON line (rank 0).
#include "layers/layout_switch.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <span>
#include <vector>

#include <mpi.h>

#include <CLI/CLI.hpp>

#include "planner/grid_model.hpp"
#include "src/base/timer.hpp"
#include "src/comm/mpi_communicator.hpp"
#include "src/comm/mpi_session.hpp"
#include "src/device/cpu/cpu_backend.hpp"
#include "src/tensor/dense_matrix.hpp"

namespace strata {
namespace {

/// `floats` floats (at least one) of backend memory, every one set to `value`.
std::span<float> buffer(std::vector<DenseMatrix>& owner, Backend& backend, std::size_t floats,
                        float value) {
    owner.emplace_back(backend, static_cast<index_t>(std::max<std::size_t>(1, floats)), 1);
    std::span<float> s{owner.back().data(), floats};
    std::fill(s.begin(), s.end(), value);
    return s;
}

/// Median seconds of `reps` runs of `run` on every rank (each timed as the slowest rank's).
template <class Run>
double median_seconds(Communicator& comm, int reps, Run&& run) {
    run();  // warm-up: pages, the shared-memory segments
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
        comm.barrier();
        Stopwatch timer;
        run();
        std::array<double, 1> s{timer.seconds()};
        comm.allreduce_max(s);
        t.push_back(s[0]);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) {
    using namespace strata;
    MpiSession mpi(argc, argv);
    CLI::App app{"The grid's layout switch vs a contiguous exchange and memcpy of its bytes"};
    index_t rows = 200'000;
    index_t width = 256;
    int reps = 7;
    app.add_option("--rows", rows, "Rows of the part (n_g)")->capture_default_str();
    app.add_option("--width", width, "Columns (w)")->capture_default_str();
    app.add_option("--reps", reps, "Timed repetitions (the median is reported)")
        ->capture_default_str();
    CLI11_PARSE(app, argc, argv);

    MpiCommunicator comm;
    CpuBackend backend(1);
    LayoutSwitch layout(backend, comm, rows);
    const RowRange chunk = layout.chunk();
    const RowRange cols = layout.columns(width);
    std::vector<DenseMatrix> owner;
    owner.reserve(5);
    // Backend memory, as the executor's arena (2 MiB blocks on huge pages: cpu_backend.hpp).
    std::span<float> r =
        buffer(owner, backend, static_cast<std::size_t>(chunk.count * width), 1.0f);
    std::span<float> c = buffer(owner, backend, static_cast<std::size_t>(rows * cols.count), 0.0f);
    std::span<float> staging = buffer(owner, backend, layout.staging_floats(width), 0.0f);
    const auto to_c = [&] {
        layout.to_columns(ConstMatrixView{r.data(), chunk.count, width},
                          MatrixView{c.data(), rows, cols.count}, staging,
                          ExchangePurpose::forward);
    };
    const auto to_r = [&] {
        layout.to_rows(ConstMatrixView{c.data(), rows, cols.count},
                       MatrixView{r.data(), chunk.count, width}, staging,
                       ExchangePurpose::backward);
    };
    const double switch_pair = median_seconds(comm, reps, [&] {
        to_c();
        to_r();
    });
    const double to_columns = median_seconds(comm, reps, to_c);
    const double to_rows = median_seconds(comm, reps, to_r);
    // The same floats to every peer between contiguous buffers: the sent side, r (w - c_p) to
    // peer p, received (n_p c) from p.
    ExchangePattern pattern;
    for (int p = 0; p < comm.size(); ++p) {
        if (p != comm.rank()) {
            pattern.peers.push_back(p);
            pattern.send_offsets.push_back(pattern.send_offsets.back() +
                                           chunk.count *
                                               slice_columns(width, comm.size(), p).count);
            pattern.recv_offsets.push_back(pattern.recv_offsets.back() +
                                           grid_rows(rows, comm.size(), p).count * cols.count);
        }
    }
    std::span<float> send =
        buffer(owner, backend, static_cast<std::size_t>(pattern.num_send_rows()), 1.0f);
    std::span<float> recv =
        buffer(owner, backend, static_cast<std::size_t>(pattern.num_recv_rows()), 0.0f);
    const double exchange = median_seconds(comm, reps, [&] {
        auto e =
            comm.start_exchange(pattern, ConstMatrixView{send.data(), pattern.num_send_rows(), 1},
                                MatrixView{recv.data(), pattern.num_recv_rows(), 1});
        e->wait_all();
    });
    const double copy = median_seconds(comm, reps, [&] {
        std::memcpy(
            recv.data(), send.data(),
            static_cast<std::size_t>(std::min(pattern.num_send_rows(), pattern.num_recv_rows())) *
                sizeof(float));
    });
    std::array<double, 1> floats{
        static_cast<double>(std::max(pattern.num_send_rows(), pattern.num_recv_rows()))};
    comm.allreduce_max(floats);
    const double bytes = 4.0 * floats[0];
    // The model at this run's rates: the slowest slice, as the planner prices every one.
    const double copied =
        4.0 * static_cast<double>(std::min(pattern.num_send_rows(), pattern.num_recv_rows()));
    double modelled = 0.0;
    for (int f = 0; f < comm.size(); ++f) {
        modelled = std::max(
            modelled, planner::switch_seconds(rows, width, comm.size(), f,
                                              {0.0, bytes / exchange / 1e9}, copied / copy / 1e9));
    }
    if (comm.rank() == 0) {
        const double each = switch_pair / 2.0;
        std::printf(
            "layout switch: %lld rows x %lld columns over %d ranks, %.1f MB each way per "
            "rank\n",
            static_cast<long long>(rows), static_cast<long long>(width), comm.size(), bytes / 1e6);
        std::printf("  switch (to_columns + to_rows) / 2   %8.2f ms  %6.2f GB/s\n", 1e3 * each,
                    bytes / each / 1e9);
        std::printf("  to_columns %8.2f ms, to_rows %8.2f ms\n", 1e3 * to_columns, 1e3 * to_rows);
        std::printf("  exchange, contiguous buffers        %8.2f ms  %6.2f GB/s\n", 1e3 * exchange,
                    bytes / exchange / 1e9);
        std::printf("  memcpy of the staged side           %8.2f ms  %6.2f GB/s\n", 1e3 * copy,
                    bytes / copy / 1e9);
        std::printf("  planner::switch_seconds at these    %8.2f ms\n", 1e3 * modelled);
        std::printf(
            "{\"bench\":\"layout_switch\",\"rows\":%lld,\"width\":%lld,\"ranks\":%d,"
            "\"bytes\":%.0f,\"switch_s\":%.6g,\"exchange_s\":%.6g,\"memcpy_s\":%.6g,"
            "\"model_s\":%.6g}\n",
            static_cast<long long>(rows), static_cast<long long>(width), comm.size(), bytes, each,
            exchange, copy, modelled);
    }
    return 0;
}
