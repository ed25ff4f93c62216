// --resume: finding the newest valid checkpoint of a run, checking it belongs to this run,
// handing it to every rank and restoring it; and the refusal to mix two runs in one directory.
#pragma once

#include <functional>
#include <string>

#include "training/checkpointer.hpp"

namespace strata {

/// A line for the user on rank 0: `warning` lines go to stderr.
using Say = std::function<void(const std::string& text, bool warning)>;

/// Restores what a checkpoint holds beyond restore()'s fields (a layer-pipeline run: its
/// history and guard), on every rank, from the broadcast checkpoint.
using RestoreMore = std::function<void(const Checkpoint& checkpoint)>;

/// Collective. Rank 0 loads the newest checkpoint of `dir` that reads and verifies (skipping
/// newer unreadable ones, which are reported and renamed "*.corrupt"), checks that it belongs to
/// `identity` (all fields), and broadcasts it; every rank restore()s it, then calls `more` if
/// set. Returns whether one was found (none: the run starts at epoch 1). Throws strata::Error if
/// the checkpoint belongs to another run or none of several files is readable.
bool resume(const CheckpointDir& dir, const CheckpointIdentity& identity, Communicator& comm,
            ModelParameters& parameters, Optimizer& optimizer, BestTracker& best, FitState& state,
            const Say& say, const RestoreMore& more = {});

/// Without --resume: throws strata::Error if `dir` already holds checkpoints (they would be
/// mixed with this run's). Rank 0 only.
void refuse_existing_checkpoints(const CheckpointDir& dir);

}  // namespace strata
