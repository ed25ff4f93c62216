// CPU elementwise kernels: fill, axpby (also with a scale in memory), a dot product, column sums
// (the bias gradient), and the fused bias + activation + counter-based dropout pair. Each is one
// OpenMP loop; small inputs run on one thread. The mask-generating and double-accumulating row
// loops are compiled for AVX2 as well and picked at load time (simd_clones.hpp).
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <omp.h>

#include "src/device/activation_math.hpp"
#include "src/device/counter_rng.hpp"
#include "src/device/cpu/cpu_kernels.hpp"
#include "src/device/cpu/simd_clones.hpp"

namespace strata::cpu {
namespace {

/// Below this many elements one thread is faster than waking the team.
constexpr std::size_t serial_elements = std::size_t{1} << 15;
/// column_sums: rows per partial sum, and at most this many partials (a function of the shape
/// only, so the summation order never depends on the thread count).
constexpr index_t min_chunk_rows = 256;
constexpr index_t max_chunks = 64;

bool go_parallel(std::size_t n, int threads) {
    return threads > 1 && n >= serial_elements;
}

/// Runs rows(first, last) on `threads` threads, one contiguous block of rows each, when the
/// n elements are worth a team.
template <typename Rows>
void for_row_blocks(index_t rows, std::size_t n, int threads, const Rows& body) {
#pragma omp parallel num_threads(threads) if (go_parallel(n, threads))
    {
        const auto team = static_cast<std::int64_t>(omp_get_num_threads());
        const auto t = static_cast<std::int64_t>(omp_get_thread_num());
        body(static_cast<index_t>(rows * t / team), static_cast<index_t>(rows * (t + 1) / team));
    }
}

}  // namespace

void fill(float* y, std::size_t n, float value, int threads) {
    // y[0:n] = value.
    const auto count = static_cast<std::int64_t>(n);
#pragma omp parallel for simd num_threads(threads) schedule(static) if (go_parallel(n, threads))
    for (std::int64_t i = 0; i < count; ++i) {
        y[i] = value;
    }
}

void axpby(float alpha, const float* x, float beta, float* y, std::size_t n, int threads) {
    // y = alpha x + beta y elementwise; y may alias x; beta == 0 never reads y.
    const auto count = static_cast<std::int64_t>(n);
    if (beta == 0.0f) {
#pragma omp parallel for simd num_threads(threads) schedule(static) if (go_parallel(n, threads))
        for (std::int64_t i = 0; i < count; ++i) {
            y[i] = alpha * x[i];
        }
        return;
    }
#pragma omp parallel for simd num_threads(threads) schedule(static) if (go_parallel(n, threads))
    for (std::int64_t i = 0; i < count; ++i) {
        y[i] = alpha * x[i] + beta * y[i];
    }
}

namespace {

/// column_sums' partial sums of rows [first, last) into acc (double, cols entries), cloned for
/// AVX2 (simd_clones.hpp): 4 doubles per add instead of 2.
STRATA_SIMD_CLONES void column_sums_rows(const float* x, index_t cols, index_t first, index_t last,
                                         double* __restrict acc) {
    const auto width = static_cast<std::size_t>(cols);
    for (index_t i = first; i < last; ++i) {
        const float* xi = x + static_cast<std::size_t>(i) * width;
#pragma omp simd
        for (index_t j = 0; j < cols; ++j) {
            acc[j] += static_cast<double>(xi[j]);
        }
    }
}

}  // namespace

void column_sums(const float* x, index_t rows, index_t cols, float* out, float beta, int threads) {
    // out[j] = Σ_i x[i, j] + beta out[j].   x: rows x cols. Chunk c sums rows
    // [c·chunk_rows, (c+1)·chunk_rows) in double; the chunks are then added in order.
    const auto width = static_cast<std::size_t>(cols);
    const index_t chunk_rows =
        std::max(min_chunk_rows, (rows + max_chunks - 1) / std::max<index_t>(max_chunks, 1));
    const index_t chunks = rows == 0 ? 0 : (rows + chunk_rows - 1) / chunk_rows;
    std::vector<double> partial(static_cast<std::size_t>(chunks) * width, 0.0);
    const bool parallel = go_parallel(static_cast<std::size_t>(rows) * width, threads);
#pragma omp parallel for num_threads(threads) schedule(static) if (parallel)
    for (index_t c = 0; c < chunks; ++c) {
        column_sums_rows(x, cols, c * chunk_rows, std::min(rows, (c + 1) * chunk_rows),
                         partial.data() + static_cast<std::size_t>(c) * width);
    }
    for (index_t j = 0; j < cols; ++j) {
        double sum = 0.0;
        for (index_t c = 0; c < chunks; ++c) {
            sum += partial[static_cast<std::size_t>(c) * width + static_cast<std::size_t>(j)];
        }
        const auto s = static_cast<float>(sum);
        out[j] = beta == 0.0f ? s : s + beta * out[j];  // beta == 0 never reads out
    }
}

namespace {

/// v if keep, else +0.0f, as bit operations: GCC does not turn `keep ? v : 0.0f` with a float
/// multiply in v into a vector select (-ftrapping-math), which kept the mask loops scalar.
inline float keep_or_zero(float v, bool keep) {
    return std::bit_cast<float>(std::bit_cast<std::uint32_t>(v) &
                                (0U - static_cast<std::uint32_t>(keep)));
}

/// One row's dropout mask: keep(j) = counter_at(key, j) >= threshold, kept values scaled.
struct RowMask {
    std::uint64_t key = 0;
    std::uint32_t threshold = 0;
    float scale = 1.0f;
};

/// act(x[j] + bias[j]) for act none or relu, bias optional: the branches resolved at compile
/// time so that the loops calling it vectorize.
template <bool HasBias, bool Relu>
inline float bias_relu(const float* x, const float* bias, index_t j) {
    float v = x[j];
    if constexpr (HasBias) {
        v += bias[j];
    }
    if constexpr (Relu) {
        v = v > 0.0f ? v : 0.0f;
    }
    return v;
}

/// y[j] = keep(j) ? act(x[j] + bias[j]) · scale : 0 (vectorized with the mask generator).
template <bool HasBias, bool Relu>
void dropout_row(const float* x, const float* bias, float* y, index_t cols, const RowMask& mask) {
#pragma omp simd
    for (index_t j = 0; j < cols; ++j) {
        const float v = bias_relu<HasBias, Relu>(x, bias, j);
        const std::uint32_t h = counter_at(mask.key, static_cast<std::uint32_t>(j));
        y[j] = keep_or_zero(v * mask.scale, h >= mask.threshold);
    }
}

/// y[j] = act(x[j] + bias[j]), without dropout.
template <bool HasBias, bool Relu>
void plain_row(const float* x, const float* bias, float* y, index_t cols) {
#pragma omp simd
    for (index_t j = 0; j < cols; ++j) {
        y[j] = bias_relu<HasBias, Relu>(x, bias, j);
    }
}

/// bias_activation's operands, shared by its row-range worker.
struct BiasActivationArgs {
    const float* x;
    const float* bias;
    index_t cols;
    ActivationSpec act;
    const global_id* row_ids;
    float* y;
    std::uint64_t stream;  ///< dropout_stream of the key (0 without dropout)
    std::uint32_t threshold;
    float scale;  ///< 1 / (1 - rate), or 1 without dropout
    bool drop;
};

/// bias_activation for rows [first, last): cloned for AVX2 (simd_clones.hpp), which is where the
/// mask generator's 32-bit multiplies vectorize.
STRATA_SIMD_CLONES void bias_activation_rows(const BiasActivationArgs& a, index_t first,
                                             index_t last) {
    const auto width = static_cast<std::size_t>(a.cols);
    const index_t cols = a.cols;
    const float* bias = a.bias;
    const int code = static_cast<int>(a.act.kind);
    const float slope = a.act.negative_slope;
    const bool relu = a.act.kind == Activation::relu;
    const bool plain = a.act.kind == Activation::none || relu;
    for (index_t i = first; i < last; ++i) {
        const float* xi = a.x + static_cast<std::size_t>(i) * width;
        float* yi = a.y + static_cast<std::size_t>(i) * width;
        if (!a.drop && plain) {
            if (bias != nullptr) {
                relu ? plain_row<true, true>(xi, bias, yi, cols)
                     : plain_row<true, false>(xi, bias, yi, cols);
            } else {
                relu ? plain_row<false, true>(xi, bias, yi, cols)
                     : plain_row<false, false>(xi, bias, yi, cols);
            }
            continue;
        }
        const std::uint64_t row_key = a.drop ? counter_row_key(a.stream, a.row_ids[i]) : 0;
        if (plain) {  // none or relu, with dropout: one vectorized pass
            const RowMask mask{row_key, a.threshold, a.scale};
            if (bias != nullptr) {
                relu ? dropout_row<true, true>(xi, bias, yi, cols, mask)
                     : dropout_row<true, false>(xi, bias, yi, cols, mask);
            } else {
                relu ? dropout_row<false, true>(xi, bias, yi, cols, mask)
                     : dropout_row<false, false>(xi, bias, yi, cols, mask);
            }
            continue;
        }
        for (index_t j = 0; j < cols; ++j) {
            yi[j] = activation_value(code, slope, bias != nullptr ? xi[j] + bias[j] : xi[j]);
        }
        if (a.drop) {
#pragma omp simd
            for (index_t j = 0; j < cols; ++j) {
                const bool keep = counter_at(row_key, static_cast<std::uint32_t>(j)) >= a.threshold;
                yi[j] = keep_or_zero(yi[j] * a.scale, keep);
            }
        }
    }
}

}  // namespace

void bias_activation(const float* x, const float* bias, index_t rows, index_t cols,
                     ActivationSpec act, const DropoutKey& key, const global_id* row_ids, float* y,
                     int threads) {
    // v = x[i, j] + bias[j];  v = act(v) (activation_math.hpp);  y[i, j] = keep(i, j) ? v / (1 -
    // rate) : 0 (dropout), keep(i, j) = counter_at(row key of row_ids[i], j) >= threshold
    // (counter_rng.hpp: = counter_u32(stream, row_ids[i], j)), vectorized over j. y may
    // alias x. The same operations in the same order as separate bias, activation and dropout
    // passes. Each thread takes one contiguous block of rows.
    const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    const bool drop = key.rate > 0.0f;
    const BiasActivationArgs args{
        .x = x,
        .bias = bias,
        .cols = cols,
        .act = act,
        .row_ids = row_ids,
        .y = y,
        .stream = drop ? dropout_stream(key.seed, key.epoch, key.layer) : 0,
        .threshold = dropout_threshold(key.rate),
        .scale = drop ? 1.0f / (1.0f - key.rate) : 1.0f,
        .drop = drop,
    };
    for_row_blocks(rows, n, threads,
                   [&](index_t first, index_t last) { bias_activation_rows(args, first, last); });
}

namespace {

/// bias_activation_backward's operands, shared by its row-range worker.
struct BiasActivationBackwardArgs {
    const float* saved;
    const float* bias;
    const float* dy;
    index_t cols;
    ActivationSpec act;
    const global_id* row_ids;
    float* dx;
    float beta;
    std::uint64_t stream;  ///< dropout_stream of the key when the mask is regenerated, else 0
    std::uint32_t threshold;
    float scale;      ///< 1 / (1 - rate), or 1 without dropout
    float keep_rate;  ///< 1 - rate
    bool drop;
    bool regenerate;  ///< dropout with an activation other than relu: the mask is recomputed
};

/// bias_activation_backward for rows [first, last), cloned for AVX2 (simd_clones.hpp).
STRATA_SIMD_CLONES void bias_activation_backward_rows(const BiasActivationBackwardArgs& a,
                                                      index_t first, index_t last) {
    const auto width = static_cast<std::size_t>(a.cols);
    const index_t cols = a.cols;
    const int code = static_cast<int>(a.act.kind);
    const float slope = a.act.negative_slope;
    const float beta = a.beta;
    const float scale = a.scale;
    const bool drop = a.drop;
    for (index_t i = first; i < last; ++i) {
        const std::size_t base = static_cast<std::size_t>(i) * width;
        const float* dyi = a.dy + base;
        float* dxi = a.dx + base;
        if (a.act.kind == Activation::relu) {
            // g = y > 0 ? dy · scale : 0 (scale 1 without dropout: exact), as a bit select so
            // that the loop vectorizes (keep_or_zero); beta resolved outside the loop.
            const float* yi = a.saved + base;
            const float s = drop ? scale : 1.0f;
            if (beta == 0.0f) {
#pragma omp simd
                for (index_t j = 0; j < cols; ++j) {
                    dxi[j] = keep_or_zero(dyi[j] * s, yi[j] > 0.0f);
                }
            } else {
#pragma omp simd
                for (index_t j = 0; j < cols; ++j) {
                    dxi[j] = keep_or_zero(dyi[j] * s, yi[j] > 0.0f) + beta * dxi[j];
                }
            }
        } else if (a.act.kind == Activation::none && !drop) {
            if (beta == 0.0f) {
                if (dxi != dyi) {
                    std::copy(dyi, dyi + width, dxi);
                }
            } else {
#pragma omp simd
                for (index_t j = 0; j < cols; ++j) {
                    dxi[j] = dyi[j] + beta * dxi[j];
                }
            }
        } else if (a.act.kind == Activation::none) {  // dropout only: one vectorized pass
            const std::uint64_t row_key = counter_row_key(a.stream, a.row_ids[i]);
            if (beta == 0.0f) {
#pragma omp simd
                for (index_t j = 0; j < cols; ++j) {
                    const auto c = static_cast<std::uint32_t>(j);
                    dxi[j] = keep_or_zero(dyi[j] * scale, counter_at(row_key, c) >= a.threshold);
                }
            } else {
#pragma omp simd
                for (index_t j = 0; j < cols; ++j) {
                    const auto c = static_cast<std::uint32_t>(j);
                    const float g =
                        keep_or_zero(dyi[j] * scale, counter_at(row_key, c) >= a.threshold);
                    dxi[j] = g + beta * dxi[j];
                }
            }
        } else {
            const std::uint64_t row_key =
                a.regenerate ? counter_row_key(a.stream, a.row_ids[i]) : 0;
            const float* si = a.saved + base;
            for (index_t j = 0; j < cols; ++j) {
                float g = 0.0f;
                if (!a.regenerate ||
                    counter_at(row_key, static_cast<std::uint32_t>(j)) >= a.threshold) {
                    float d = 1.0f;
                    if (a.act.kind == Activation::gelu) {
                        d = gelu_derivative(a.bias != nullptr ? si[j] + a.bias[j] : si[j]);
                    } else if (a.act.kind != Activation::none) {
                        d = activation_slope_from_output(code, slope,
                                                         drop ? si[j] * a.keep_rate : si[j]);
                    }
                    g = drop ? dyi[j] * scale * d : dyi[j] * d;
                }
                dxi[j] = beta == 0.0f ? g : g + beta * dxi[j];
            }
        }
    }
}

}  // namespace

void bias_activation_backward(const float* saved, const float* bias, const float* dy, index_t rows,
                              index_t cols, ActivationSpec act, const DropoutKey& key,
                              const global_id* row_ids, float* dx, float beta, int threads) {
    // s = 1/(1-rate) with dropout, else 1; keep(i, j) the forward mask (regenerated);
    //   relu:            g = saved[i, j] > 0 ? dy · s : 0   (saved = y: y > 0 means kept and
    //                    positive, no mask regenerated)
    //   elu, leaky_relu: g = keep ? dy · s · act'(a) : 0, a = y·(1-rate) the pre-dropout value
    //                    (saved = y; act' from a, activation_math.hpp)
    //   gelu:            g = keep ? dy · s · gelu'(v) : 0, v = saved[i, j] + bias[j] (saved = x)
    //   none:            g = keep ? dy · s : 0 with dropout, else g = dy.
    // dx = g + beta dx; dx may alias dy; beta == 0 never reads dx.
    const bool drop = key.rate > 0.0f;
    const bool regenerate = drop && act.kind != Activation::relu;
    const BiasActivationBackwardArgs args{
        .saved = saved,
        .bias = bias,
        .dy = dy,
        .cols = cols,
        .act = act,
        .row_ids = row_ids,
        .dx = dx,
        .beta = beta,
        .stream = regenerate ? dropout_stream(key.seed, key.epoch, key.layer) : 0,
        .threshold = dropout_threshold(key.rate),
        .scale = drop ? 1.0f / (1.0f - key.rate) : 1.0f,
        .keep_rate = 1.0f - key.rate,
        .drop = drop,
        .regenerate = regenerate,
    };
    for_row_blocks(
        rows, static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols), threads,
        [&](index_t first, index_t last) { bias_activation_backward_rows(args, first, last); });
}

void axpby_scalar(float shift, const float* s, const float* x, float beta, float* y, std::size_t n,
                  int threads) {
    // y = (shift + s[0]) x + beta y;  y may alias x; beta == 0 never reads y.
    axpby(shift + s[0], x, beta, y, n, threads);
}

double dot(const float* a, const float* b, std::size_t n, int threads) {
    // Σ_k a[k] b[k] in double: fixed chunks of dot_chunk elements (a function of n only), chunk
    // partials added in order, so the result does not depend on the thread count.
    constexpr std::size_t dot_chunk = std::size_t{1} << 14;
    const std::size_t chunks = (n + dot_chunk - 1) / dot_chunk;
    std::vector<double> partial(chunks, 0.0);
    const auto count = static_cast<std::int64_t>(chunks);
#pragma omp parallel for num_threads(threads) schedule(static) if (go_parallel(n, threads))
    for (std::int64_t c = 0; c < count; ++c) {
        const std::size_t first = static_cast<std::size_t>(c) * dot_chunk;
        const std::size_t last = std::min(n, first + dot_chunk);
        double acc = 0.0;
        for (std::size_t k = first; k < last; ++k) {
            acc += static_cast<double>(a[k]) * static_cast<double>(b[k]);
        }
        partial[static_cast<std::size_t>(c)] = acc;
    }
    double sum = 0.0;
    for (const double p : partial) {
        sum += p;
    }
    return sum;
}

}  // namespace strata::cpu
