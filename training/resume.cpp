// --resume on rank 0, broadcast to all.
#include "training/resume.hpp"

#include <array>
#include <span>

#include "src/base/error.hpp"

namespace strata {

bool resume(const CheckpointDir& dir, const CheckpointIdentity& identity, Communicator& comm,
            ModelParameters& parameters, Optimizer& optimizer, BestTracker& best, FitState& state,
            const Say& say, const RestoreMore& more) {
    std::array<std::int64_t, 1> found{0};
    Checkpoint loaded;
    if (comm.rank() == 0) {
        if (auto newest = dir.load_newest()) {
            for (const auto& skipped : newest->skipped) {
                say("skipping unreadable checkpoint " + skipped, true);
            }
            check_identity(newest->checkpoint, identity, IdentityCheck::all, newest->path.string());
            if (newest->checkpoint.identity.partition != identity.partition) {
                say("elastic resume: the checkpoint was written on '" +
                        newest->checkpoint.identity.partition + "', this run has '" +
                        identity.partition +
                        "' (graph parallelism: the state does not depend on the split)",
                    false);
            }
            loaded = std::move(newest->checkpoint);
            found[0] = 1;
            for (const auto& moved : dir.set_aside_newer_than(loaded.epoch)) {
                say("renamed to " + moved.filename().string(), true);
            }
            say("resuming from " + newest->path.string() + " (epoch " +
                    std::to_string(loaded.epoch) + ")",
                false);
        } else {
            say("no checkpoint in " + dir.path().string() + ": starting at epoch 1", false);
        }
    }
    comm.broadcast(std::as_writable_bytes(std::span<std::int64_t>(found)), 0);
    if (found[0] == 0) {
        return false;
    }
    broadcast_checkpoint(loaded, comm, 0);
    restore(loaded, parameters, optimizer, best, state);
    if (more) {
        more(loaded);
    }
    return true;
}

void refuse_existing_checkpoints(const CheckpointDir& dir) {
    const auto existing = dir.list();
    STRATA_CHECK(existing.empty(), dir.path().string(), ": already holds checkpoints (",
                 existing.back().second.filename().string(),
                 "); pass --resume to continue that run, or use another --checkpoint-dir");
}

}  // namespace strata
