// release(v): empties a vector and gives its memory back. `v = {}` does not: it picks
// operator=(initializer_list), which clears the elements and keeps the capacity.
#pragma once

#include <vector>

namespace strata {

/// Destroys v's elements and frees its buffer (capacity 0 afterwards).
template <class T, class A>
void release(std::vector<T, A>& v) noexcept {
    std::vector<T, A>().swap(v);
}

}  // namespace strata
