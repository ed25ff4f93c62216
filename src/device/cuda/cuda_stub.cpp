// make_cuda_backend and the device queries for builds without CUDA (STRATA_CUDA=OFF).
#include "src/base/error.hpp"
#include "src/device/backend.hpp"

namespace strata {

std::unique_ptr<Backend> make_cuda_backend(int /*device*/) {
    STRATA_FAIL(
        "this strata was built without CUDA support (configure with -DSTRATA_CUDA=ON, "
        "e.g. the cuda preset)");
}

int cuda_device_count() {
    return 0;
}

std::string cuda_device_pci_id(int /*device*/) {
    return {};
}

}  // namespace strata
