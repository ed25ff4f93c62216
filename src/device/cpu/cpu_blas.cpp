// CPU GEMM through OpenBLAS's CBLAS (row-major), the only file that includes <cblas.h>.
//
// Threads: one OpenMP team runs everything. OpenBLAS runs single-threaded inside the team's
// blocks instead of with its own pthreads pool: the two pools otherwise fight for the cores
// (OpenBLAS's workers spin with sched_yield after each GEMM while the OpenMP team runs the next
// SpMM, and the team's workers spin while OpenBLAS runs). STRATA_GEMM_THREADS=openblas brings
// back OpenBLAS's own threads (the ablation in bench/epoch, docs/benchmarks.md).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cblas.h>

#include "src/device/cpu/cpu_kernels.hpp"
#include "src/tensor/grid_blocks.hpp"

namespace strata::cpu {
namespace {

/// OpenBLAS packs the whole of a tall operand before multiplying: C = A W with A of m rows costs
/// a packed copy of A (measured with Debian's 0.3.21, 2 threads: RSS +200 MB for a 200000 x 256
/// A, 128 MiB buffers per thread). Row blocks of at most this many floats bound that copy.
constexpr std::size_t block_floats = std::size_t{4} << 20;  // 16 MiB
/// At most this many rows a call: OpenBLAS cuts a call's rows into panels of its GEMM_R rows
/// (tens of thousands, a multiple of 16 but not of every kernel's tile), which would put a tile
/// boundary mid-call; blocks below it keep every cut on a multiple of gemm_row_tile.
constexpr std::int64_t tile_cap = 80 * gemm_row_tile;  // 3840 rows
/// Row blocks come in multiples of this many (equal) blocks, so that 1, 2, 4 or 8 threads
/// share them evenly; the split is a function of the shape only.
constexpr std::int64_t block_multiple = 8;
/// A reduction-shaped product (op(a) = a^T) is split along k into at most this many chunks of
/// at least min_chunk_depth rows each.
constexpr std::int64_t reduction_chunks = 8;
constexpr std::int64_t min_chunk_depth = 1024;
/// Below this many flops one thread runs the product.
constexpr double parallel_flops = 4e6;

/// Whether OpenBLAS's own threads run the products (STRATA_GEMM_THREADS=openblas).
bool openblas_threads() {
    static const bool value = [] {
        const char* env = std::getenv("STRATA_GEMM_THREADS");
        return env != nullptr && std::strcmp(env, "openblas") == 0;
    }();
    return value;
}

/// One cblas call on a block: c[0:m, 0:n] = alpha op(a) op(b) + beta c, ldc given.
void sgemm(const float* a, index_t lda, bool trans_a, const float* b, index_t ldb, bool trans_b,
           float* c, index_t ldc, index_t m, index_t n, index_t k, float alpha, float beta) {
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace

void set_blas_threads(int threads) {
    const int want = openblas_threads() ? threads : 1;
    if (openblas_get_num_threads() != want) {
        openblas_set_num_threads(want);
    }
}

void gemm(const float* a, index_t lda, bool trans_a, const float* b, index_t ldb, bool trans_b,
          float* c, index_t m, index_t n, index_t k, float alpha, float beta, int threads) {
    // c = alpha op(a) op(b) + beta c.   op(a): m x k, op(b): k x n, c: m x n (ldc = n).
    // The blocks are a function of the shape only, so the result does not depend on the thread
    // count.
    if (m == 0 || n == 0) {
        return;
    }
    if (k == 0) {  // an empty product: cblas would reject lda = 0
        const std::size_t size = static_cast<std::size_t>(m) * static_cast<std::size_t>(n);
        if (beta == 0.0f) {
            fill(c, size, 0.0f, threads);
        } else if (beta != 1.0f) {
            for (std::size_t i = 0; i < size; ++i) {
                c[i] *= beta;
            }
        }
        return;
    }
    set_blas_threads(threads);  // another backend may have changed the process-wide setting
    const double flops =
        2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
    const int team = openblas_threads() || flops < parallel_flops ? 1 : threads;
    const auto row_step = [](std::size_t pointer_step, index_t first) {
        return static_cast<std::size_t>(first) * pointer_step;
    };
    if (!trans_a) {
        // Rows of c are rows of a: blocks of whole gemm_row_tile tiles (the last block ends with
        // the partial one), a multiple of block_multiple of them, at most tile_cap rows each.
        // A row's bits then depend only on its offset from the call's first row, not on m or
        // the thread count: a call on rows [t gemm_row_tile, ...) of a larger product gives that
        // product's bits (the grid's row chunks, src/tensor/grid_blocks.hpp).
        const auto rows = static_cast<std::int64_t>(m);
        const std::int64_t tile = gemm_row_tile;
        const std::int64_t tiles = (rows + tile - 1) / tile;
        const auto cap = static_cast<std::int64_t>(
            std::max<std::size_t>(256, block_floats / static_cast<std::size_t>(std::max(k, n))));
        const std::int64_t cap_tiles = std::max<std::int64_t>(1, std::min(cap, tile_cap) / tile);
        std::int64_t blocks = (tiles + cap_tiles - 1) / cap_tiles;
        blocks = std::min(tiles, (blocks + block_multiple - 1) / block_multiple * block_multiple);
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
        for (std::int64_t i = 0; i < blocks; ++i) {
            const auto first = static_cast<index_t>(tiles * i / blocks * tile);
            const auto last = static_cast<index_t>(std::min(rows, tiles * (i + 1) / blocks * tile));
            sgemm(a + row_step(static_cast<std::size_t>(lda), first), lda, false, b, ldb, trans_b,
                  c + row_step(static_cast<std::size_t>(n), first), n, last - first, n, k, alpha,
                  beta);
        }
        return;
    }
    // op(a) = a^T (a: k x m, k the long side, e.g. dW = X^T dY): a reduction over k. Chunk q of
    // k_chunks (a function of the shape) multiplies rows [k q / Q, k (q + 1) / Q) of a and op(b)
    // into a partial product; the partials are added in chunk order.
    const auto depth = static_cast<std::int64_t>(k);
    const std::int64_t chunks =
        openblas_threads() ? 1
                           : std::clamp<std::int64_t>(depth / min_chunk_depth, 1, reduction_chunks);
    if (chunks == 1) {
        sgemm(a, lda, true, b, ldb, trans_b, c, n, m, n, k, alpha, beta);
        return;
    }
    const std::size_t size = static_cast<std::size_t>(m) * static_cast<std::size_t>(n);
    thread_local std::vector<float> partial;
    partial.resize(size * static_cast<std::size_t>(chunks));
    float* partials = partial.data();
#pragma omp parallel num_threads(team) if (team > 1)
    {
#pragma omp for schedule(static)
        for (std::int64_t q = 0; q < chunks; ++q) {
            const auto first = static_cast<index_t>(depth * q / chunks);
            const auto last = static_cast<index_t>(depth * (q + 1) / chunks);
            const float* bq =
                trans_b ? b + first : b + row_step(static_cast<std::size_t>(ldb), first);
            sgemm(a + row_step(static_cast<std::size_t>(lda), first), lda, true, bq, ldb, trans_b,
                  partials + size * static_cast<std::size_t>(q), n, m, n, last - first, alpha,
                  0.0f);
        }
#pragma omp for schedule(static)
        for (std::int64_t e = 0; e < static_cast<std::int64_t>(size); ++e) {
            float sum = partials[e];
            for (std::int64_t q = 1; q < chunks; ++q) {
                sum += partials[size * static_cast<std::size_t>(q) + static_cast<std::size_t>(e)];
            }
            c[e] = beta == 0.0f ? sum : sum + beta * c[e];  // beta == 0 never reads c
        }
    }
}

}  // namespace strata::cpu
