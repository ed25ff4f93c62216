// STRATA_SIMD_CLONES: compile a hot CPU kernel twice, for AVX2 and for the portable baseline,
// and pick one at load time (GCC/Clang target_clones, an ifunc). The portable release build
// then runs the mask generator's 32-bit multiplies 8 wide (vpmulld) where the CPU has AVX2,
// instead of scalar (SSE2 has no 32-bit vector multiply). Empty where it cannot help or work:
// builds already targeting AVX2 (-march=native), non-x86, and sanitizer builds.
// Only the marked function is cloned: callees are inlined into each clone, but an OpenMP
// region's body is outlined before cloning, so mark a function the region calls, not the one
// holding the `#pragma omp parallel`.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define STRATA_SANITIZED_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STRATA_SANITIZED_BUILD 1
#endif
#endif

#if defined(__x86_64__) && !defined(__AVX2__) && !defined(STRATA_SANITIZED_BUILD)
#define STRATA_SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define STRATA_SIMD_CLONES
#endif
