// Checked factories of the RAII handles in cuda_handles.hpp.
#include "src/device/cuda/cuda_handles.hpp"

#include "src/base/error.hpp"
#include "src/device/cuda/cuda_check.hpp"

namespace strata::cuda {

Stream make_stream() {
    cudaStream_t stream = nullptr;
    STRATA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    return Stream(stream);
}

Event make_event() {
    cudaEvent_t event = nullptr;
    STRATA_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    return Event(event);
}

Event make_timing_event() {
    cudaEvent_t event = nullptr;
    STRATA_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDefault));
    return Event(event);
}

DeviceMemory make_device_memory(std::size_t bytes) {
    if (bytes == 0) {
        return DeviceMemory();
    }
    void* ptr = nullptr;
    const cudaError_t status = cudaMalloc(&ptr, bytes);
    if (status != cudaSuccess) {
        (void)cudaGetLastError();  // out of memory is not sticky: do not let it leak into later
                                   // checks
        std::size_t free_bytes = 0;
        std::size_t total_bytes = 0;
        (void)cudaMemGetInfo(&free_bytes, &total_bytes);
        int device = -1;
        (void)cudaGetDevice(&device);
        STRATA_FAIL("cudaMalloc of ", bytes, " bytes on device ", device,
                    " failed: ", cudaGetErrorName(status), ": ", cudaGetErrorString(status), " (",
                    free_bytes, " of ", total_bytes, " bytes free)");
    }
    return DeviceMemory(ptr);
}

PinnedMemory make_pinned_memory(std::size_t bytes) {
    void* ptr = nullptr;
    STRATA_CUDA_CHECK(cudaHostAlloc(&ptr, bytes == 0 ? 1 : bytes, cudaHostAllocDefault));
    return PinnedMemory(ptr);
}

}  // namespace strata::cuda
