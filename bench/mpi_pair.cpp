// bench/mpi_pair: the MPI transport alone between ranks 0 and 1 (run it with -np 2 across two
// hosts, e.g. `mpirun -np 2 $STRATA_CLUSTER_MPI_FLAGS build/release/bench/mpi_pair`): each
// repetition sends --bytes each way at once (MPI_Irecv and MPI_Isend in either order, then
// MPI_Waitall), MB/s each way = bytes / the slower rank's time, median over --reps, in four
// modes: the receive posted first or the send, and
//   together: every repetition starts after a barrier (both messages start at once);
//   apart:    repetitions back to back, as `strata calibrate` times its exchanges (a rank done
//             first starts the next message while its peer still receives the last).
// Their difference is what a transport loses when two ranks' messages to each other do not
// start together (docs/cluster.md, "Open MPI over TCP"); the link's own rate is the baseline.
#include <algorithm>
#include <cstdio>
#include <vector>

#include <mpi.h>

#include <CLI/CLI.hpp>

namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/// Seconds of each repetition (the slower rank's), `together` or back to back, the send posted
/// before the receive or after.
std::vector<double> exchange_times(std::vector<char>& send, std::vector<char>& recv, int reps,
                                   bool together, bool send_first) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const int peer = 1 - rank;
    const auto count = static_cast<int>(send.size());
    std::vector<double> times;
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int i = 0; i < reps; ++i) {
        if (together) {
            MPI_Barrier(MPI_COMM_WORLD);
            start = MPI_Wtime();
        }
        MPI_Request requests[2];
        if (send_first) {
            MPI_Isend(send.data(), count, MPI_CHAR, peer, 0, MPI_COMM_WORLD, &requests[1]);
        }
        MPI_Irecv(recv.data(), count, MPI_CHAR, peer, 0, MPI_COMM_WORLD, &requests[0]);
        if (!send_first) {
            MPI_Isend(send.data(), count, MPI_CHAR, peer, 0, MPI_COMM_WORLD, &requests[1]);
        }
        MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
        const double now = MPI_Wtime();
        times.push_back(now - start);
        start = now;
    }
    std::vector<double> slowest(times.size());
    MPI_Allreduce(times.data(), slowest.data(), static_cast<int>(times.size()), MPI_DOUBLE, MPI_MAX,
                  MPI_COMM_WORLD);
    return slowest;
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    CLI::App app{"The MPI transport between ranks 0 and 1: both ways at once, together or apart"};
    long bytes = 32L << 20;
    int reps = 5;
    app.add_option("--bytes", bytes, "Bytes each way per repetition")
        ->check(CLI::Range(1L, 1L << 30));
    app.add_option("--reps", reps, "Repetitions per mode")->check(CLI::Range(1, 1000));
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        MPI_Finalize();
        return code;
    }
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0) {
            std::fprintf(stderr, "bench/mpi_pair: needs exactly 2 ranks (mpirun -np 2), got %d\n",
                         size);
        }
        MPI_Finalize();
        return 1;
    }
    std::vector<char> send(static_cast<std::size_t>(bytes), 1);
    std::vector<char> recv(static_cast<std::size_t>(bytes), 0);
    (void)exchange_times(send, recv, 1, true, false);  // connections up, pages touched
    for (const bool send_first : {false, true}) {
        for (const bool together : {true, false}) {
            const double t = median(exchange_times(send, recv, reps, together, send_first));
            if (rank == 0) {
                std::printf(
                    "%s, %s: %ld bytes each way in %.3f s, %.1f MB/s each way (median "
                    "of %d)\n",
                    send_first ? "send first" : "receive first", together ? "together" : "apart",
                    bytes, t, static_cast<double>(bytes) / t / 1e6, reps);
            }
        }
    }
    MPI_Finalize();
    return 0;
}
