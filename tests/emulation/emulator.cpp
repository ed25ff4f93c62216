// The emulated device: the allocator's registry, the fault of the running launch, and the
// scheduler that runs a block's threads as fibers on the calling thread, switching at
// __syncthreads() and warp exchanges only. A fiber is made once (makecontext on its own stack)
// and then switched to and from with _setjmp/_longjmp, which save no signal mask (no system
// call per switch; glibc's fortified longjmp would refuse to change stacks, hence the #undef).
// Not thread-safe: one launch at a time per process.
#undef _FORTIFY_SOURCE
#include "tests/emulation/emulator.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <vector>

#include <setjmp.h>
#include <ucontext.h>

namespace strata::emu {
namespace {

constexpr unsigned warp_size = 32;
constexpr unsigned max_block_threads = 1024;
constexpr std::size_t stack_bytes = std::size_t{128} << 10;
constexpr int invalid_configuration = 9;  // cudaErrorInvalidConfiguration

struct Fiber {
    jmp_buf self{};  // where it was suspended
    std::unique_ptr<char[]> stack;
    uint3 idx;
    bool done = false;
    bool fresh = true;  // waiting at the start of its loop (false while a body is under way)
};

struct Emulator {
    std::map<std::uintptr_t, Allocation> buffers;  // by base address
    // The launch.
    const char* kernel = nullptr;
    std::string file;  // the kernel's, base name
    std::set<std::string> launched;
    bool launching = false;
    std::string fault;
    int last_error = 0;
    // The block being run.
    jmp_buf scheduler{};
    std::vector<std::unique_ptr<Fiber>> fibers;
    Fiber* current = nullptr;
    detail::Body body{};
    unsigned threads = 0;
    unsigned block_arrived = 0;
    std::uint64_t block_generation = 0;
    std::vector<unsigned> warp_arrived;
    std::vector<std::uint64_t> warp_generation;
    std::vector<std::uint64_t> warp_slots;
    bool progress = false;
    alignas(64) unsigned char scratch[64] = {};
};

Emulator& emulator() {
    static Emulator e;
    return e;
}

std::string coordinates() {
    const Emulator& e = emulator();
    std::ostringstream s;
    s << "kernel '" << (e.kernel != nullptr ? e.kernel : "?") << "' (" << e.file;
    if (e.current != nullptr) {
        const uint3 b = detail::block_idx;
        const uint3 t = e.current->idx;
        s << ", block " << b.x << "," << b.y << "," << b.z << ", thread " << t.x << "," << t.y
          << "," << t.z;
    }
    s << ")";
    return s.str();
}

unsigned linear_thread() {
    const uint3 t = emulator().current->idx;
    return t.x + detail::block_dim.x * (t.y + detail::block_dim.y * t.z);
}

void yield() {
    Emulator& e = emulator();
    if (_setjmp(e.current->self) == 0) {
        _longjmp(e.scheduler, 1);
    }
}

/// Waits until `arrived` reaches `count` for this generation (the last arrival releases all).
void barrier(unsigned& arrived, std::uint64_t& generation, unsigned count) {
    Emulator& e = emulator();
    e.progress = true;
    const std::uint64_t mine = generation;
    if (++arrived == count) {
        arrived = 0;
        ++generation;
        return;
    }
    while (generation == mine) {
        yield();
    }
    e.progress = true;
}

/// A fiber's life: made, it returns to the scheduler at once; then, each time the scheduler
/// starts it for a thread of a block, it runs the kernel body to its end and yields.
void fiber_main() {
    Emulator& e = emulator();
    Fiber* f = e.current;
    if (_setjmp(f->self) == 0) {
        _longjmp(e.scheduler, 1);
    }
    for (;;) {
        f->fresh = false;
        e.body.call(e.body.state);
        f->done = true;
        f->fresh = true;
        e.progress = true;
        yield();
    }
}

/// A fiber on its own stack, suspended at the start of its loop.
std::unique_ptr<Fiber> make_fiber() {
    Emulator& e = emulator();
    auto f = std::make_unique<Fiber>();
    f->stack = std::make_unique<char[]>(stack_bytes);
    ucontext_t context{};
    ucontext_t back{};
    getcontext(&context);
    context.uc_stack.ss_sp = f->stack.get();
    context.uc_stack.ss_size = stack_bytes;
    context.uc_link = nullptr;
    makecontext(&context, fiber_main, 0);
    e.current = f.get();
    if (_setjmp(e.scheduler) == 0) {
        swapcontext(&back, &context);  // fiber_main saves its start and jumps back here
    }
    e.current = nullptr;
    return f;
}

bool valid(dim3 grid, dim3 block) {
    const std::uint64_t threads = std::uint64_t{block.x} * block.y * block.z;
    return threads > 0 && threads <= max_block_threads && block.z <= 64 && grid.x > 0 &&
           grid.y > 0 && grid.z > 0 && grid.x < (1u << 31) && grid.y <= 65535 && grid.z <= 65535;
}

/// Runs every thread of the current block to its end; false after a deadlock (its fibers,
/// stopped in the middle of a body, are then replaced).
bool run_block() {
    Emulator& e = emulator();
    while (e.fibers.size() < e.threads) {
        e.fibers.push_back(make_fiber());
    }
    for (unsigned t = 0; t < e.threads; ++t) {
        Fiber& f = *e.fibers[t];
        f.done = false;
        f.idx = {t % detail::block_dim.x, (t / detail::block_dim.x) % detail::block_dim.y,
                 t / (detail::block_dim.x * detail::block_dim.y)};
    }
    e.block_arrived = 0;
    const unsigned warps = (e.threads + warp_size - 1) / warp_size;
    e.warp_arrived.assign(warps, 0);
    e.warp_generation.assign(warps, 0);
    e.warp_slots.assign(static_cast<std::size_t>(warps) * warp_size, 0);
    for (;;) {
        bool all_done = true;
        e.progress = false;
        for (unsigned t = 0; t < e.threads; ++t) {
            Fiber& f = *e.fibers[t];
            if (f.done) {
                continue;
            }
            e.current = &f;
            detail::thread_idx = f.idx;
            if (_setjmp(e.scheduler) == 0) {
                _longjmp(f.self, 1);
            }
            all_done = all_done && f.done;
        }
        e.current = nullptr;
        if (all_done) {
            return true;
        }
        if (!e.progress) {
            detail::fault(
                "__syncthreads() or a warp shuffle is not reached by every thread of "
                "block " +
                std::to_string(detail::block_idx.x) + "," + std::to_string(detail::block_idx.y) +
                "," + std::to_string(detail::block_idx.z) +
                " (a barrier in divergent code, or after a return)");
            for (auto& f : e.fibers) {  // stopped in a body: start afresh
                if (!f->fresh) {
                    f = make_fiber();
                }
            }
            return false;
        }
    }
}

}  // namespace

void* device_malloc(std::size_t bytes, std::string name) {
    constexpr std::size_t alignment = 256;  // cudaMalloc's
    const std::size_t size =
        (std::max<std::size_t>(bytes, 1) + alignment - 1) / alignment * alignment;
    void* p = std::aligned_alloc(alignment, size);
    if (p == nullptr) {
        throw std::bad_alloc();
    }
    std::memset(p, 0xff, size);
    const auto base = reinterpret_cast<std::uintptr_t>(p);
    emulator().buffers[base] = Allocation{base, bytes, std::move(name)};
    return p;
}

void device_free(void* p) {
    if (p == nullptr) {
        return;
    }
    emulator().buffers.erase(reinterpret_cast<std::uintptr_t>(p));
    std::free(p);
}

const Allocation* require_allocation(const void* p) {
    const auto& buffers = emulator().buffers;
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    auto it = buffers.upper_bound(at);
    if (it != buffers.begin()) {
        --it;
        if (at <= it->second.base + it->second.bytes) {
            return &it->second;
        }
    }
    std::ostringstream s;
    s << "pointer " << p << " is not in any buffer of the emulated device memory";
    detail::fault(s.str());
    return nullptr;
}

const std::set<std::string>& launched_kernels() {
    return emulator().launched;
}

namespace detail {

void fault(const std::string& what) {
    Emulator& e = emulator();
    if (!e.launching) {
        throw KernelFault(what);
    }
    if (e.fault.empty()) {
        e.fault = coordinates() + ": " + what;
    }
}

void out_of_bounds(const Allocation* a, std::ptrdiff_t offset, std::size_t size) {
    if (a == nullptr) {
        fault("dereferenced a null pointer");
        return;
    }
    const auto element = static_cast<std::ptrdiff_t>(size);
    const std::ptrdiff_t index =
        offset >= 0 ? offset / element : -((-offset + element - 1) / element);
    std::ostringstream s;
    s << "buffer '" << a->name << "' accessed at index " << index << " (" << size
      << "-byte elements), outside its " << a->bytes / size << " elements";
    if (offset % element != 0) {
        s << " (byte offset " << offset << ")";
    }
    fault(s.str());
}

void* scratch() {
    return emulator().scratch;
}

void begin_launch(const char* kernel, const char* file) {
    Emulator& e = emulator();
    e.kernel = kernel;
    e.file = file;
    e.file.erase(0, e.file.find_last_of('/') + 1);
    e.launched.insert(e.file + ":" + kernel);
    e.launching = true;
    e.fault.clear();
    e.last_error = 0;
}

void run_grid(dim3 grid, dim3 block, Body body) {
    Emulator& e = emulator();
    if (!valid(grid, block)) {
        e.last_error = invalid_configuration;
    } else if (e.fault.empty()) {
        e.body = body;
        e.threads = block.x * block.y * block.z;
        block_dim = block;
        grid_dim = grid;
        bool ok = true;
        for (unsigned z = 0; ok && z < grid.z; ++z) {
            for (unsigned y = 0; ok && y < grid.y; ++y) {
                for (unsigned x = 0; ok && x < grid.x; ++x) {
                    block_idx = {x, y, z};
                    ok = run_block();
                }
            }
        }
    }
    e.launching = false;
    if (!e.fault.empty()) {
        std::string what;
        what.swap(e.fault);
        throw KernelFault(what);
    }
}

std::uint64_t warp_exchange(std::uint64_t value, unsigned lane_mask) {
    Emulator& e = emulator();
    const unsigned t = linear_thread();
    const unsigned warp = t / warp_size;
    const unsigned src_lane = (t % warp_size) ^ lane_mask;
    const unsigned lanes = std::min(warp_size, e.threads - warp * warp_size);
    std::uint64_t* slots = e.warp_slots.data() + static_cast<std::size_t>(warp) * warp_size;
    slots[t % warp_size] = value;
    barrier(e.warp_arrived[warp], e.warp_generation[warp], lanes);  // every lane has written
    const std::uint64_t got = src_lane < lanes ? slots[src_lane] : value;
    barrier(e.warp_arrived[warp], e.warp_generation[warp], lanes);  // every lane has read
    return got;
}

void block_barrier() {
    Emulator& e = emulator();
    barrier(e.block_arrived, e.block_generation, e.threads);
}

int take_last_error() {
    Emulator& e = emulator();
    const int error = e.last_error;
    e.last_error = 0;
    return error;
}

}  // namespace detail
}  // namespace strata::emu
