// global_ptr<T>: the type of a kernel's pointer into global (device) memory. On the device it is
// T*; in the test-only host emulation (tests/emulation, STRATA_CUDA_EMULATION) it is a pointer
// that knows its buffer's extent and checks every access (emu::checked_ptr), so that an index
// off by one fails a test instead of waiting for a GPU.
#pragma once

#if defined(STRATA_CUDA_EMULATION)
#include "tests/emulation/checked_ptr.hpp"
#endif

namespace strata::cuda {

#if defined(STRATA_CUDA_EMULATION)
template <class T>
using global_ptr = emu::checked_ptr<T>;
#else
template <class T>
using global_ptr = T*;
#endif

}  // namespace strata::cuda
