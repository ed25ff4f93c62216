// Multi-rank tests of run_alone (one rank's work while the others wait, under a wait limit shorter
// than the work: the heartbeat) and of Communicator::agree_max, on MpiCommunicator.
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "src/base/error.hpp"
#include "src/base/timer.hpp"
#include "src/comm/forwarding_communicator.hpp"
#include "src/comm/mpi_communicator.hpp"
#include "src/comm/run_alone.hpp"
#include "tests/support/all_ranks.hpp"

namespace strata {
namespace {

/// Counts agree_max calls (the heartbeats); `base_default` uses Communicator's own agree_max.
class CountingCommunicator final : public ForwardingCommunicator {
public:
    explicit CountingCommunicator(Communicator& inner, bool base_default = false)
        : ForwardingCommunicator(inner), base_default_(base_default) {}
    std::int64_t agree_max(std::int64_t value, const char* what) override {
        ++calls;
        return base_default_ ? Communicator::agree_max(value, what)
                             : ForwardingCommunicator::agree_max(value, what);
    }
    int calls = 0;

private:
    bool base_default_;
};

void sleep_seconds(double seconds) {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

}  // namespace

TEST_CASE("the heartbeat period is a quarter of the wait limit, at most 1 s", "[mpi]") {
    CHECK(heartbeat_period(0.0) == 1.0);
    CHECK(heartbeat_period(300.0) == 1.0);
    CHECK(heartbeat_period(2.0) == 0.5);
    CHECK(heartbeat_period(0.2) == 0.05);
}

TEST_CASE("agree_max is the max over ranks, MpiCommunicator's and the default", "[mpi]") {
    MpiCommunicator mpi;
    CountingCommunicator forwarded(mpi);
    CountingCommunicator base(mpi, /*base_default=*/true);
    const std::int64_t top = mpi.size() - 1;
    const bool ok = mpi.agree_max(mpi.rank(), "test") == top &&
                    forwarded.agree_max(mpi.rank(), "test") == top &&
                    base.agree_max(-mpi.rank(), "test") == 0;
    CHECK(ok);
    REQUIRE(test::all_ranks(ok));
}

TEST_CASE("run_alone: work longer than the wait limit ends normally on every rank", "[mpi]") {
    MpiCommunicator mpi;
    mpi.set_wait_limit(1.0);  // heartbeats every 0.25 s; the work takes 1.5 s
    CountingCommunicator comm(mpi);
    for (const int root : {0, comm.size() - 1}) {
        std::int64_t result = -1;
        mpi.barrier();
        comm.calls = 0;
        const Stopwatch watch;
        run_alone(comm, root, "the test work", [&] {
            sleep_seconds(1.5);
            result = 42;
        });
        const double seconds = watch.seconds();
        // The ranks still agree afterwards (the same sequence of collectives everywhere).
        const std::int64_t after = comm.agree_max(comm.rank() == root ? result : 0, "after");
        bool ok = after == 42 && (comm.rank() != root || result == 42);
        if (comm.size() > 1) {
            // 1.5 s / 0.25 s heartbeats and the last one, less the ranks' start skew
            ok = ok && comm.calls >= 5 && seconds >= 1.4;
        }
        CHECK(ok);
        REQUIRE(test::all_ranks(ok));
    }
}

TEST_CASE("run_alone answers the last heartbeat as soon as the work ends", "[mpi]") {
    MpiCommunicator comm;  // no wait limit: a heartbeat every 1 s
    comm.barrier();
    const Stopwatch watch;
    run_alone(comm, 0, "the test work", [] { sleep_seconds(0.3); });
    const double seconds = watch.seconds();
    // On the root (the others' time includes the root's arrival): not the whole 1 s period.
    const bool ok = comm.rank() != 0 || (seconds >= 0.3 && seconds < 0.9);
    CHECK(ok);
    REQUIRE(test::all_ranks(ok));
}

TEST_CASE("run_alone: the root's error is rethrown there, the others name the root", "[mpi]") {
    MpiCommunicator comm;
    comm.set_wait_limit(0.4);
    std::string message;
    try {
        run_alone(comm, 0, "the test work", [] {
            sleep_seconds(0.3);
            throw std::runtime_error("the work's own error");
        });
    } catch (const Error& e) {
        message = e.message();
    } catch (const std::runtime_error& e) {
        message = std::string("runtime_error: ") + e.what();
    }
    const bool ok = comm.rank() == 0 ? message == "runtime_error: the work's own error"
                                     : message == "the test work failed on rank 0";
    CHECK(ok);
    REQUIRE(test::all_ranks(ok));
    // An invalid root is refused on every rank, before anything runs.
    bool refused = false;
    try {
        run_alone(comm, comm.size(), "the test work", [] {});
    } catch (const Error& e) {
        refused = std::string(e.message()).find("is not a rank of") != std::string::npos;
    }
    CHECK(refused);
    REQUIRE(test::all_ranks(refused));
}

}  // namespace strata
