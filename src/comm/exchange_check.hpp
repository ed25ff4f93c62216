// check_exchange: the rules every Communicator::start_exchange enforces on its pattern and
// buffers, shared by the MPI and NCCL implementations.
#pragma once

#include "src/comm/communicator.hpp"

namespace strata {

/// Throws strata::Error unless: offsets have peers+1 entries, start at 0 and never decrease;
/// peers are ranks of [0, size), not `rank`, strictly ascending; send/recv have exactly the
/// pattern's row counts, equal column counts, and data when non-empty.
void check_exchange(const ExchangePattern& pattern, ConstMatrixView send, MatrixView recv, int rank,
                    int size);

}  // namespace strata
