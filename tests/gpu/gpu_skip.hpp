// What a GPU test does without a usable device: skip (exit 77) or, with STRATA_GPU_REQUIRED=1
// (scripts/gpu-check sets it), fail.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace strata::test {

/// CTest's SKIP_RETURN_CODE of the GPU tests.
inline constexpr int skip_exit_code = 77;

/// Prints why and returns the process exit code: 77 (skipped), or 1 when a GPU is required
/// (STRATA_GPU_REQUIRED=1) and `always_skip` is false. `always_skip` is for a machine that has
/// GPUs, only fewer than a test needs.
inline int no_gpu(const char* why, bool always_skip = false) {
    const char* required = std::getenv("STRATA_GPU_REQUIRED");
    if (!always_skip && required != nullptr && std::strcmp(required, "1") == 0) {
        std::fprintf(stderr, "FAILED: STRATA_GPU_REQUIRED=1 but no usable CUDA device: %s\n", why);
        return 1;
    }
    std::printf("SKIPPED: no usable CUDA device (%s)\n", why);
    return skip_exit_code;
}

}  // namespace strata::test
