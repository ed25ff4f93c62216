// The dropout reference of the tests: whether dropout with `key` keeps entry (row id, col),
// from src/device/counter_rng.hpp alone — what every backend's masks must equal.
#pragma once

#include "src/device/backend.hpp"
#include "src/device/counter_rng.hpp"

namespace strata::test {

inline bool dropout_kept(const DropoutKey& key, global_id row, index_t col) {
    return counter_u32(dropout_stream(key.seed, key.epoch, key.layer), row, col) >=
           dropout_threshold(key.rate);  // rate 0: threshold 0, every entry kept
}

}  // namespace strata::test
