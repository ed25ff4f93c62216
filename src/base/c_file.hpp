// CFile: a std::FILE* that closes itself (Unique, unique.hpp). To see whether the close
// flushed everything, release() it and std::fclose it yourself.
#pragma once

#include <cstdio>

#include "src/base/unique.hpp"

namespace strata {

namespace detail {
inline void close_c_file(std::FILE* file) {
    (void)std::fclose(file);
}
}  // namespace detail

using CFile = Unique<std::FILE*, detail::close_c_file>;

}  // namespace strata
