// Move-only RAII owners (strata::Unique) of every CUDA, cuSPARSE and cuBLAS handle the CUDA
// backend and the NCCL communicator hold, and checked factories for them.
#pragma once

#include <cstddef>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusparse.h>

#include "src/base/unique.hpp"

namespace strata::cuda {
namespace detail {

// Destroyers never throw: failures at shutdown (cudaErrorCudartUnloading) are ignored.
inline void destroy_stream(cudaStream_t s) noexcept {
    (void)cudaStreamDestroy(s);
}
inline void destroy_event(cudaEvent_t e) noexcept {
    (void)cudaEventDestroy(e);
}
inline void free_device(void* p) noexcept {
    (void)cudaFree(p);
}
inline void free_pinned(void* p) noexcept {
    (void)cudaFreeHost(p);
}
inline void destroy_sparse(cusparseHandle_t h) noexcept {
    (void)cusparseDestroy(h);
}
inline void destroy_blas(cublasHandle_t h) noexcept {
    (void)cublasDestroy(h);
}
inline void destroy_sp_mat(cusparseConstSpMatDescr_t d) noexcept {
    (void)cusparseDestroySpMat(d);
}
inline void destroy_dn_mat(cusparseConstDnMatDescr_t d) noexcept {
    (void)cusparseDestroyDnMat(d);
}

}  // namespace detail

using Stream = Unique<cudaStream_t, detail::destroy_stream>;
using Event = Unique<cudaEvent_t, detail::destroy_event>;
/// cudaMalloc'ed device memory.
using DeviceMemory = Unique<void*, detail::free_device>;
/// cudaHostAlloc'ed page-locked host memory.
using PinnedMemory = Unique<void*, detail::free_pinned>;
using SparseHandle = Unique<cusparseHandle_t, detail::destroy_sparse>;
using BlasHandle = Unique<cublasHandle_t, detail::destroy_blas>;
/// A read-only sparse matrix descriptor (cuSPARSE never writes the matrix through it).
using ConstSpMatDescr = Unique<cusparseConstSpMatDescr_t, detail::destroy_sp_mat>;
using DnMatDescr = Unique<cusparseDnMatDescr_t, detail::destroy_dn_mat>;

/// A non-blocking stream (it does not synchronise with the legacy default stream) on the
/// current device. Throws strata::Error.
[[nodiscard]] Stream make_stream();
/// An event without timing (the cheapest kind), for ordering streams. Throws strata::Error.
[[nodiscard]] Event make_event();
/// An event that records time (cudaEventElapsedTime), for measurements. Throws strata::Error.
[[nodiscard]] Event make_timing_event();
/// `bytes` of device memory on the current device (empty for 0 bytes). Throws strata::Error
/// naming the size when out of memory.
[[nodiscard]] DeviceMemory make_device_memory(std::size_t bytes);
/// `bytes` of page-locked host memory (fast, truly asynchronous copies). Throws strata::Error.
[[nodiscard]] PinnedMemory make_pinned_memory(std::size_t bytes);

}  // namespace strata::cuda
