// The host emulation of CUDA kernel launches (test-only; docs/gpu.md, "The emulation"): the
// emulated device allocator, whose registry knows every buffer's name and extent, and the launch
// that runs a kernel's grid on the host, block after block, one fiber per CUDA thread of a block
// (so __syncthreads() and warp shuffles are real barriers between the threads). A launch that
// accessed memory outside a buffer, dereferenced null, passed a pointer the allocator does not
// know or left a barrier unreached throws KernelFault naming the kernel, the buffer and the
// index, after the launch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace strata::emu {

/// CUDA's dim3 and uint3 (dim3 defaults to 1 in each dimension).
struct uint3 {
    unsigned x = 0;
    unsigned y = 0;
    unsigned z = 0;
};
struct dim3 {
    unsigned x = 1;
    unsigned y = 1;
    unsigned z = 1;
    constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
};

/// What a faulty launch throws (after the whole launch has run, or stopped at a deadlock).
class KernelFault : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// One buffer of the emulated device memory.
struct Allocation {
    std::uintptr_t base = 0;
    std::size_t bytes = 0;
    std::string name;
};

/// Allocates `bytes` (zero allowed: an extent no access fits in) of emulated device memory,
/// filled with 0xff bytes (NaN floats, -1 integers) so that a read before a write shows.
void* device_malloc(std::size_t bytes, std::string name);
/// Frees a device_malloc block (null: nothing).
void device_free(void* p);
/// The allocation that p points into or one past; throws KernelFault for any other pointer,
/// recorded instead when a kernel is running.
const Allocation* require_allocation(const void* p);

namespace detail {

/// Records an access of `size` bytes at byte `offset` of `a` (null: a null pointer) that is not
/// inside it: the first fault of a launch is kept and thrown when the launch ends. Host code
/// (no kernel running): throws now.
void out_of_bounds(const Allocation* a, std::ptrdiff_t offset, std::size_t size);
/// Where an out-of-bounds access goes instead (so that the kernel can go on).
void* scratch();
/// A fault that is not an access (an unsupported call, a pointer not allocated).
void fault(const std::string& what);

/// A type-erased call of the kernel with its arguments.
struct Body {
    void (*call)(void*);
    void* state;
};

/// Starts a launch of `kernel` (defined in `file`): faults from here on name it (a pointer
/// argument converted to a global_ptr is looked up now).
void begin_launch(const char* kernel, const char* file);
/// Runs `body` for every thread of the grid (blocks in order, a fiber per thread of a block),
/// unless the arguments already faulted, then throws the launch's first fault, if any. Invalid
/// geometry runs nothing and leaves cudaErrorInvalidConfiguration for cudaGetLastError.
void run_grid(dim3 grid, dim3 block, Body body);

/// The running thread's coordinates (set by the scheduler before it resumes a fiber).
inline uint3 thread_idx;
inline uint3 block_idx;
inline dim3 block_dim;
inline dim3 grid_dim;

/// Exchanges `value` within this thread's warp (lanes: consecutive linear thread ids of the
/// block): returns the value of lane (own lane ^ lane_mask), or `value` when that lane is past
/// the block's end. Every lane of the warp must call it (the emulated __shfl_xor_sync).
std::uint64_t warp_exchange(std::uint64_t value, unsigned lane_mask);
/// __syncthreads(): waits for every thread of the block.
void block_barrier();
/// The error of the last launch (0 or cudaErrorInvalidConfiguration), reset to 0.
int take_last_error();

}  // namespace detail

/// "file.cu:kernel" of every kernel launched so far by this process (file: the base name).
const std::set<std::string>& launched_kernels();

/// Launches `kernel` (named `name`, defined in `file`) over grid x block: the arguments are
/// converted to the kernel's parameter types once (a raw device pointer becomes a checked
/// global_ptr here, looked up in the allocator's registry), then every thread calls the kernel with
/// a copy of them.
template <class... Params, class... Args>
void launch(const char* name, const char* file, void (*kernel)(Params...), dim3 grid, dim3 block,
            const void* /*stream*/, Args&&... args) {
    static_assert(sizeof...(Params) == sizeof...(Args), "wrong number of kernel arguments");
    static_assert((!std::is_pointer_v<std::decay_t<Params>> && ...),
                  "CUDA emulation: a kernel parameter is a raw pointer; declare it global_ptr<T> "
                  "(src/device/cuda/global_ptr.hpp) so that its accesses are bounds-checked");
    struct State {
        void (*kernel)(Params...);
        std::tuple<std::decay_t<Params>...> params;
    };
    detail::begin_launch(name, file);
    State state{kernel, std::tuple<std::decay_t<Params>...>(std::forward<Args>(args)...)};
    const detail::Body body{[](void* s) {
                                auto* st = static_cast<State*>(s);
                                std::apply(st->kernel, st->params);  // a copy per thread
                            },
                            &state};
    detail::run_grid(grid, block, body);
}

}  // namespace strata::emu
