// bench/halo_packing: the compressed halo formats' pack and unpack kernels (src/comm/
// halo_packing: pack_rows, unpack_rows) on rows x cols fp32 rows, next to two baselines measured
// in the same run: a STREAM triad, and a memcpy of the same rows (what an fp32 halo costs to
// stage). Bytes moved per value: pack reads 4 and writes the record (bf16 2, int8 1 + 4 / cols),
// unpack the reverse. Also the forward exchange's pack of scattered boundary rows by index
// against a gather into fp32 staging then a pack. And the receiving side, on the same records:
// the halo SpMM (about 3.3 entries per received row, spread over the part's rows) and the
// backward's gradient sum reading the records as they are (Backend::spmm_scatter_add_packed,
// scatter_add_packed_rows) against unpacking them first, with the fp32 kernels on fp32 rows
// beside. Prints the best of `reps` in ns per value and GB/s, and one JSON line.
#include "src/comm/halo_packing.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <omp.h>

#include <CLI/CLI.hpp>

#include "bench/triad.hpp"
#include "src/base/timer.hpp"
#include "src/device/cpu/cpu_backend.hpp"
#include "src/tensor/csr_matrix.hpp"

namespace strata {
namespace {

template <class Run>
double best_seconds(int reps, Run&& run) {
    run();  // warm-up: pages, the thread team
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
        Stopwatch timer;
        run();
        best = std::min(best, timer.seconds());
    }
    return best;
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) {
    using namespace strata;
    CLI::App app{"Halo packing (bf16, int8) vs memcpy and a triad"};
    index_t rows = 200'000;
    index_t cols = 256;
    int threads = 1;
    int reps = 7;
    app.add_option("--rows", rows, "Rows")->capture_default_str();
    app.add_option("--cols", cols, "Columns")->capture_default_str();
    app.add_option("--threads", threads, "Threads")->capture_default_str();
    app.add_option("--reps", reps, "Timed repetitions (best is reported)")->capture_default_str();
    CLI11_PARSE(app, argc, argv);
    omp_set_num_threads(threads);

    const std::size_t values = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    std::vector<float> x(values);
    for (std::size_t i = 0; i < values; ++i) {  // activations-like: signs, a spread of magnitudes
        x[i] = static_cast<float>(static_cast<int>(i * 2654435761u % 2001) - 1000) * 1.7e-3f;
    }
    std::vector<float> y(values);
    const auto n = static_cast<double>(values);
    const bench::TriadResult triad = bench::run_triad(40'000'000, 5, threads);
    const double copy_s = best_seconds(reps, [&] { std::memcpy(y.data(), x.data(), values * 4); });
    std::printf(
        "%d x %d, %d thread(s); triad %.1f GB/s; memcpy of the fp32 rows %.3f ms "
        "(%.2f ns/value, %.1f GB/s)\n",
        rows, cols, threads, triad.best_gbs, copy_s * 1e3, copy_s * 1e9 / n,
        8.0 * n / copy_s / 1e9);
    std::string json = "{\"bench\": \"halo_packing\", \"rows\": " + std::to_string(rows) +
                       ", \"cols\": " + std::to_string(cols) +
                       ", \"threads\": " + std::to_string(threads) +
                       ", \"triad_gbs\": " + std::to_string(triad.best_gbs) +
                       ", \"memcpy_ns\": " + std::to_string(copy_s * 1e9 / n);
    // Boundary rows: 78 % of the rows (the 200k generated graph's share at K = 2), in a
    // scattered order, as a part's send rows reference its activations.
    std::vector<index_t> boundary;
    for (index_t r = 0; r < rows; ++r) {
        const index_t row = static_cast<index_t>((static_cast<std::uint64_t>(r) * 7919u) %
                                                 static_cast<std::uint64_t>(rows));
        if (row % 50 < 39) {
            boundary.push_back(row);
        }
    }
    // The receiving side: `picked` received rows, a halo block over the part's rows with about
    // 3.3 entries per received row (the 200k graph at K = 2: 249k entries for 75.9k rows).
    CpuBackend backend(threads);
    const auto received = static_cast<index_t>(boundary.size());
    HostCsr halo;
    halo.rows = rows;
    halo.cols = received;
    for (index_t r = 0; r < rows; ++r) {
        const auto h = static_cast<std::uint64_t>(r) * 2654435761u;
        const index_t entries =
            static_cast<index_t>(h % 13 < 5 ? 0 : 1 + h % 5);  // mean ~3.3 x 0.78
        for (index_t e = 0; e < entries; ++e) {
            halo.col_idx.push_back(
                static_cast<index_t>((h + static_cast<std::uint64_t>(e) * 40503u) %
                                     static_cast<std::uint64_t>(received)));
        }
        std::sort(halo.col_idx.end() - entries, halo.col_idx.end());
        halo.row_ptr.push_back(static_cast<index_t>(halo.col_idx.size()));
    }
    halo.values.assign(halo.col_idx.size(), 0.3f);
    const CsrMatrix a = CsrMatrix::upload(backend, halo);
    std::vector<index_t> identity(static_cast<std::size_t>(rows));
    for (index_t r = 0; r < rows; ++r) {
        identity[static_cast<std::size_t>(r)] = r;
    }
    std::vector<float> z(values, 0.0f);
    const MatrixView zv{z.data(), rows, cols};
    const ConstMatrixView recv_fp32{x.data(), received, cols};
    const MatrixView recv_rows{y.data(), received, cols};
    const double spmm_fp32_s =
        best_seconds(reps, [&] { backend.spmm_scatter_add(a, identity, recv_fp32, zv); });
    const double sum_fp32_s =
        best_seconds(reps, [&] { backend.scatter_add_rows(recv_fp32, boundary, zv); });
    std::printf(
        "received %d rows, halo block %lld entries; fp32 halo SpMM %8.3f ms, gradient sum "
        "%8.3f ms\n",
        received, static_cast<long long>(halo.col_idx.size()), spmm_fp32_s * 1e3, sum_fp32_s * 1e3);
    json += ", \"fp32_halo_spmm_ms\": " + std::to_string(spmm_fp32_s * 1e3) +
            ", \"fp32_gradient_sum_ms\": " + std::to_string(sum_fp32_s * 1e3);
    for (const HaloPrecision p : {HaloPrecision::bf16, HaloPrecision::int8}) {
        const std::size_t record = packed_row_bytes(p, cols);
        std::vector<std::byte> packed(record * static_cast<std::size_t>(rows));
        const ConstMatrixView in{x.data(), rows, cols};
        const MatrixView out{y.data(), rows, cols};
        const double pack_s = best_seconds(reps, [&] { pack_rows(p, in, packed); });
        const double unpack_s = best_seconds(reps, [&] { unpack_rows(p, packed, out); });
        // The forward exchange's case: pack_rows by index straight from the activations, against
        // a gather of those rows into fp32 staging (row memcpys, as Backend::gather_rows) and
        // pack_rows of the staging.
        const std::vector<index_t>& pick = boundary;
        const auto picked = static_cast<index_t>(pick.size());
        const double gathered_s = best_seconds(reps, [&] { pack_rows(p, in, pick, packed); });
        const double staged_s = best_seconds(reps, [&] {
            for (std::size_t r = 0; r < pick.size(); ++r) {
                std::memcpy(y.data() + r * static_cast<std::size_t>(cols),
                            x.data() + static_cast<std::size_t>(pick[r]) * cols,
                            static_cast<std::size_t>(cols) * 4);
            }
            pack_rows(p, {y.data(), picked, cols}, packed);
        });
        std::printf("%-5s pack of %d rows by index %8.3f ms, gather then pack %8.3f ms (%.2f x)\n",
                    to_string(p), picked, gathered_s * 1e3, staged_s * 1e3, gathered_s / staged_s);
        // The same with stochastic rounding (--halo-rounding stochastic): a keyed hash per value.
        std::vector<global_id> ids(pick.size());
        for (std::size_t r = 0; r < pick.size(); ++r) {
            ids[r] = 1000003 * static_cast<global_id>(pick[r]);
        }
        const HaloRounding rounding{.stream = 42, .ids = ids};
        const double stochastic_s =
            best_seconds(reps, [&] { pack_rows(p, in, pick, packed, &rounding); });
        std::printf("%-5s the same, rounded stochastically %8.3f ms (%.2f x nearest)\n",
                    to_string(p), stochastic_s * 1e3, stochastic_s / gathered_s);
        json += ", \"" + std::string(to_string(p)) +
                "_pack_by_index_ms\": " + std::to_string(gathered_s * 1e3) + ", \"" +
                std::string(to_string(p)) +
                "_gather_then_pack_ms\": " + std::to_string(staged_s * 1e3) + ", \"" +
                std::string(to_string(p)) +
                "_pack_stochastic_ms\": " + std::to_string(stochastic_s * 1e3);
        // Receiving: the records of `received` rows (packed above), read as they are or
        // unpacked into fp32 rows first.
        const ConstPackedMatrix records{
            .precision = p, .data = packed.data(), .rows = received, .cols = cols};
        const std::span<const std::byte> record_bytes(packed.data(), records.size_bytes());
        const double spmm_packed_s =
            best_seconds(reps, [&] { backend.spmm_scatter_add_packed(a, identity, records, zv); });
        const double spmm_unpacked_s = best_seconds(reps, [&] {
            unpack_rows(p, record_bytes, recv_rows);
            backend.spmm_scatter_add(a, identity, recv_rows, zv);
        });
        const double sum_packed_s =
            best_seconds(reps, [&] { backend.scatter_add_packed_rows(records, boundary, zv); });
        const double sum_unpacked_s = best_seconds(reps, [&] {
            unpack_rows(p, record_bytes, recv_rows);
            backend.scatter_add_rows(recv_rows, boundary, zv);
        });
        std::printf(
            "%-5s halo SpMM on records %8.3f ms, unpack then SpMM %8.3f ms (%.2f x); "
            "gradient sum %8.3f / %8.3f ms (%.2f x)\n",
            to_string(p), spmm_packed_s * 1e3, spmm_unpacked_s * 1e3,
            spmm_packed_s / spmm_unpacked_s, sum_packed_s * 1e3, sum_unpacked_s * 1e3,
            sum_packed_s / sum_unpacked_s);
        const std::string name = to_string(p);
        json += ", \"" + name + "_halo_spmm_ms\": " + std::to_string(spmm_packed_s * 1e3) + ", \"" +
                name + "_unpack_then_halo_spmm_ms\": " + std::to_string(spmm_unpacked_s * 1e3) +
                ", \"" + name + "_gradient_sum_ms\": " + std::to_string(sum_packed_s * 1e3) +
                ", \"" + name +
                "_unpack_then_gradient_sum_ms\": " + std::to_string(sum_unpacked_s * 1e3);
        const double moved = 4.0 * n + static_cast<double>(packed.size());
        for (const auto& [what, s] : {std::pair{"pack", pack_s}, std::pair{"unpack", unpack_s}}) {
            std::printf("%-5s %-7s %8.3f ms  %6.2f ns/value  %6.1f GB/s  (%.2f x memcpy's time)\n",
                        to_string(p), what, s * 1e3, s * 1e9 / n, moved / s / 1e9, s / copy_s);
            json += ", \"" + std::string(to_string(p)) + "_" + what +
                    "_ns\": " + std::to_string(s * 1e9 / n);
        }
    }
    std::printf("%s}\n", json.c_str());
    return 0;
}
