// check_exchange, check_all_to_all: the rules every Communicator::start_exchange and
// all_to_all enforce on their arguments, shared by the implementations.
#pragma once

#include <cstddef>
#include <span>

#include "src/comm/communicator.hpp"

namespace strata {

/// Throws strata::Error unless: offsets have peers+1 entries, start at 0 and never decrease;
/// peers are ranks of [0, size), not `rank`, strictly ascending; send/recv have exactly the
/// pattern's row counts, equal column counts, and data when non-empty.
void check_exchange(const ExchangePattern& pattern, ConstMatrixView send, MatrixView recv, int rank,
                    int size);

/// The same for packed rows: the pattern's rules, the pattern's row counts, equal row bytes.
void check_packed_exchange(const ExchangePattern& pattern, ConstPackedRows send, PackedRows recv,
                           int rank, int size);

/// Throws strata::Error unless `send_offsets` has size + 1 entries, non-decreasing from 0 to
/// `send_bytes` (the argument rules of Communicator::all_to_all).
void check_all_to_all(std::size_t send_bytes, std::span<const std::size_t> send_offsets, int size);

}  // namespace strata
