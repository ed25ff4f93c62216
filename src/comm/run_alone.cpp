// run_alone: the root runs the work on a worker thread and answers heartbeats (agree_max of a
// state: running, done or failed) from its main thread until the work has ended.
#include "src/comm/run_alone.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>

#include "src/base/error.hpp"

namespace strata {
namespace {

constexpr std::int64_t running = 0;
constexpr std::int64_t done = 1;
constexpr std::int64_t failed = 2;

}  // namespace

double heartbeat_period(double limit) {
    return limit > 0.0 ? std::min(1.0, limit / 4.0) : 1.0;
}

void run_alone(Communicator& comm, int root, const std::string& what,
               const std::function<void()>& work) {
    STRATA_CHECK(root >= 0 && root < comm.size(), "run_alone (", what, "): root ", root,
                 " is not a rank of ", comm.size());
    if (comm.size() == 1) {
        work();
        return;
    }
    const std::string heartbeat =
        "the heartbeat of rank " + std::to_string(root) + " working alone (" + what + ")";
    if (comm.rank() != root) {
        std::int64_t state = running;
        while (state == running) {
            state = comm.agree_max(running, heartbeat.c_str());
        }
        STRATA_CHECK(state == done, what, " failed on rank ", root);
        return;
    }

    std::mutex mutex;
    std::condition_variable ended;
    bool finished = false;
    std::exception_ptr error;
    std::thread worker([&] {
        try {
            work();
        } catch (...) {
            error = std::current_exception();
        }
        const std::lock_guard lock(mutex);
        finished = true;
        ended.notify_one();
    });
    const auto period = std::chrono::duration<double>(heartbeat_period(comm.wait_limit()));
    try {
        std::int64_t state = running;
        while (state == running) {
            {
                std::unique_lock lock(mutex);
                ended.wait_for(lock, period, [&] { return finished; });
                state = !finished ? running : error ? failed : done;
            }
            (void)comm.agree_max(state, heartbeat.c_str());
        }
    } catch (...) {  // a failed heartbeat (MPI error): the work's references must outlive it
        worker.join();
        throw;
    }
    worker.join();
    if (error) {
        std::rethrow_exception(error);
    }
}

}  // namespace strata
