// broadcast_string: rank `root`'s string on every rank, over any Communicator (its length as one
// int64, then its characters; both large-count safe through Communicator::broadcast).
#pragma once

#include <string>

#include "src/comm/communicator.hpp"

namespace strata {

/// Collective: `text` becomes rank `root`'s `text` on every rank (empty strings included);
/// root's is left as it is. Throws strata::Error (from broadcast) for a root outside the
/// communicator.
void broadcast_string(Communicator& comm, std::string& text, int root = 0);

}  // namespace strata
