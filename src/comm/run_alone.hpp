// run_alone: work that one rank does while the others wait for it (serial METIS of a whole graph
// on rank 0 while the job loads), kept under the communicator's wait limit: the work runs on a
// thread of its own and the rank's main thread keeps answering a heartbeat, so that the limit
// bounds how long a rank may stay silent, not how long the work may take.
#pragma once

#include <functional>
#include <string>

#include "src/comm/communicator.hpp"

namespace strata {

/// Collective over `comm`: rank `root` runs `work`; every other rank returns once it has ended.
/// While it runs, the ranks agree every heartbeat period whether it has ended
/// (Communicator::agree_max, named "the heartbeat of rank ROOT working alone (WHAT)"): the
/// period is a quarter of comm.wait_limit(), at most 1 s, so that under a wait limit S a rank
/// that hears nothing from another for S seconds (a cut link, a dead or frozen rank) ends the
/// job naming it, while work of any length never does. The root's main thread sleeps between
/// heartbeats and answers the last one as soon as `work` ends (no added latency).
///
/// `work` runs on another thread of the root: it must not use MPI or `comm` (MPI is initialised
/// MPI_THREAD_FUNNELED). An exception from `work` is rethrown on the root; every other rank
/// throws strata::Error "WHAT failed on rank ROOT" (the root's own error is the job's line:
/// end_job). One rank: `work` runs inline.
void run_alone(Communicator& comm, int root, const std::string& what,
               const std::function<void()>& work);

/// The heartbeat period run_alone uses under a wait limit of `limit` seconds (0: none).
[[nodiscard]] double heartbeat_period(double limit);

}  // namespace strata
