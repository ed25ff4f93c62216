// Kernels the emulation cannot express, each of which must fail to compile in the emulated build
// with the shim's message (CTest's emulation_rejects_* compile this file with -DCASE=n and look
// for the message; never part of a target).
#include "src/device/cuda/cuda_launch.cuh"

namespace strata::cuda::kernels {
namespace {

#if CASE == 1  // an intrinsic the shim does not emulate
__global__ void warp_sync_kernel(global_ptr<float> y) {
    y[threadIdx.x] = 1.0f;
    __syncwarp();
}
void launch(float* y) {
    STRATA_LAUNCH(warp_sync_kernel, 1, 32, nullptr, y);
}
#elif CASE == 2  // a raw pointer parameter: its accesses could not be checked
__global__ void raw_kernel(float* y) {
    y[threadIdx.x] = 1.0f;
}
void launch(float* y) {
    STRATA_LAUNCH(raw_kernel, 1, 32, nullptr, y);
}
#endif

}  // namespace
}  // namespace strata::cuda::kernels
