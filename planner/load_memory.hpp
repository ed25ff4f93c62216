// measure_load_bytes: what loading a graph .h5 adds to rank 0 of `strata train --data G.h5`
// above its baseline, measured by doing the same reads here (partition/distributed_load.cpp):
//   K = 1   the whole graph and its adjacency A (the part is then built beside them)
//   K > 1   the whole adjacency read alone and serial METIS over it (--partition-method
//           metis), then rank 0's row slice (with vertex data) beside the owners; the parts
//           are then built beside the slice
#pragma once

#include <cstdint>
#include <string>

namespace strata::planner {

/// Peak resident bytes the load steps above add (freed memory returned to the system first,
/// the peak reset to the resident size before them). Where the peak cannot be reset
/// (reset_peak_rss false) the process's whole earlier peak counts: an over-estimate, never an
/// under-estimate.
[[nodiscard]] std::int64_t measure_load_bytes(const std::string& path, int parts,
                                              std::uint64_t seed);

}  // namespace strata::planner
