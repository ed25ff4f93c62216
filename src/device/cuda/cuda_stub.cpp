// make_cuda_backend for builds without CUDA (STRATA_CUDA=OFF): always throws.
#include "src/base/error.hpp"
#include "src/device/backend.hpp"

namespace strata {

std::unique_ptr<Backend> make_cuda_backend(int /*device*/) {
    STRATA_FAIL("built without CUDA support (configure with -DSTRATA_CUDA=ON)");
}

}  // namespace strata
