// Catch2 runner of the single-process GPU tests: without a usable CUDA device the tests are
// skipped (exit 77, CTest SKIP_RETURN_CODE) unless STRATA_GPU_REQUIRED=1 makes that a failure.
// Listing the tests (catch_discover_tests at build time) never needs a device.
#define CATCH_CONFIG_RUNNER
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime_api.h>

#include <catch2/catch.hpp>

#include "tests/gpu/gpu_skip.hpp"

int main(int argc, char** argv) {
    bool listing = false;
    for (int i = 1; i < argc; ++i) {
        listing = listing || std::strncmp(argv[i], "--list", 6) == 0;
    }
    if (!listing) {
        int count = 0;
        const cudaError_t status = cudaGetDeviceCount(&count);
        if (status != cudaSuccess || count == 0) {
            const char* why = status != cudaSuccess ? cudaGetErrorString(status) : "0 devices";
            return strata::test::no_gpu(why);
        }
    }
    return Catch::Session().run(argc, argv);
}
