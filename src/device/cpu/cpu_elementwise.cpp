// CPU elementwise kernels: fill, axpby (also with a scale in memory), a dot product, column sums
// (the bias gradient), and the fused bias + activation + counter-based dropout pair. Each is one
// OpenMP loop; small inputs run on one thread.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <omp.h>

#include "src/device/activation_math.hpp"
#include "src/device/counter_rng.hpp"
#include "src/device/cpu/cpu_kernels.hpp"

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
        double* __restrict acc = partial.data() + static_cast<std::size_t>(c) * width;
        const index_t last = std::min(rows, (c + 1) * chunk_rows);
        for (index_t i = c * chunk_rows; i < last; ++i) {
            const float* xi = x + static_cast<std::size_t>(i) * width;
#pragma omp simd
            for (index_t j = 0; j < cols; ++j) {
                acc[j] += static_cast<double>(xi[j]);
            }
        }
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

/// y[j] = keep(j) ? act(x[j] + bias[j]) · scale : 0 for act none or relu, bias optional: the
/// branches resolved at compile time so that the loop vectorizes (with the mask generator).
template <bool HasBias, bool Relu>
void dropout_row(const float* x, const float* bias, float* y, index_t cols, const RowMask& mask) {
#pragma omp simd
    for (index_t j = 0; j < cols; ++j) {
        float v = x[j];
        if constexpr (HasBias) {
            v += bias[j];
        }
        if constexpr (Relu) {
            v = v > 0.0f ? v : 0.0f;
        }
        const std::uint32_t h = counter_at(mask.key, static_cast<std::uint32_t>(j));
        y[j] = keep_or_zero(v * mask.scale, h >= mask.threshold);
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
    // passes.
    const auto width = static_cast<std::size_t>(cols);
    const std::size_t n = static_cast<std::size_t>(rows) * width;
    const int code = static_cast<int>(act.kind);
    const float slope = act.negative_slope;
    const bool relu = act.kind == Activation::relu;
    const bool plain = act.kind == Activation::none || relu;
    const bool drop = key.rate > 0.0f;
    const std::uint64_t stream = drop ? dropout_stream(key.seed, key.epoch, key.layer) : 0;
    const std::uint32_t threshold = dropout_threshold(key.rate);
    const float scale = drop ? 1.0f / (1.0f - key.rate) : 1.0f;
#pragma omp parallel for num_threads(threads) schedule(static) if (go_parallel(n, threads))
    for (index_t i = 0; i < rows; ++i) {
        const float* xi = x + static_cast<std::size_t>(i) * width;
        float* yi = y + static_cast<std::size_t>(i) * width;
        if (!drop && plain) {
#pragma omp simd
            for (index_t j = 0; j < cols; ++j) {
                float v = bias != nullptr ? xi[j] + bias[j] : xi[j];
                if (relu) {
                    v = v > 0.0f ? v : 0.0f;
                }
                yi[j] = v;
            }
            continue;
        }
        const std::uint64_t row_key = drop ? counter_row_key(stream, row_ids[i]) : 0;
        if (plain) {  // none or relu, with dropout: one vectorized pass
            const RowMask mask{row_key, threshold, scale};
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
        if (drop) {
#pragma omp simd
            for (index_t j = 0; j < cols; ++j) {
                const bool keep = counter_at(row_key, static_cast<std::uint32_t>(j)) >= threshold;
                yi[j] = keep_or_zero(yi[j] * scale, keep);
            }
        }
    }
}

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
    const auto width = static_cast<std::size_t>(cols);
    const std::size_t n = static_cast<std::size_t>(rows) * width;
    const int code = static_cast<int>(act.kind);
    const float slope = act.negative_slope;
    const bool drop = key.rate > 0.0f;
    const float scale = drop ? 1.0f / (1.0f - key.rate) : 1.0f;
    const float keep_rate = 1.0f - key.rate;
    const bool regenerate = drop && act.kind != Activation::relu;
    const std::uint64_t stream = regenerate ? dropout_stream(key.seed, key.epoch, key.layer) : 0;
    const std::uint32_t threshold = dropout_threshold(key.rate);
#pragma omp parallel for num_threads(threads) schedule(static) if (go_parallel(n, threads))
    for (index_t i = 0; i < rows; ++i) {
        const std::size_t base = static_cast<std::size_t>(i) * width;
        const float* dyi = dy + base;
        float* dxi = dx + base;
        if (act.kind == Activation::relu) {
            const float* yi = saved + base;
#pragma omp simd
            for (index_t j = 0; j < cols; ++j) {
                const float g = yi[j] > 0.0f ? (drop ? dyi[j] * scale : dyi[j]) : 0.0f;
                dxi[j] = beta == 0.0f ? g : g + beta * dxi[j];
            }
        } else if (act.kind == Activation::none && !drop) {
#pragma omp simd
            for (index_t j = 0; j < cols; ++j) {
                dxi[j] = beta == 0.0f ? dyi[j] : dyi[j] + beta * dxi[j];
            }
        } else if (act.kind == Activation::none) {  // dropout only: one vectorized pass
            const std::uint64_t row_key = counter_row_key(stream, row_ids[i]);
            if (beta == 0.0f) {
#pragma omp simd
                for (index_t j = 0; j < cols; ++j) {
                    const auto c = static_cast<std::uint32_t>(j);
                    dxi[j] = keep_or_zero(dyi[j] * scale, counter_at(row_key, c) >= threshold);
                }
            } else {
#pragma omp simd
                for (index_t j = 0; j < cols; ++j) {
                    const auto c = static_cast<std::uint32_t>(j);
                    const float g =
                        keep_or_zero(dyi[j] * scale, counter_at(row_key, c) >= threshold);
                    dxi[j] = g + beta * dxi[j];
                }
            }
        } else {
            const std::uint64_t row_key = regenerate ? counter_row_key(stream, row_ids[i]) : 0;
            const float* si = saved + base;
            for (index_t j = 0; j < cols; ++j) {
                float g = 0.0f;
                if (!regenerate ||
                    counter_at(row_key, static_cast<std::uint32_t>(j)) >= threshold) {
                    float d = 1.0f;
                    if (act.kind == Activation::gelu) {
                        d = gelu_derivative(bias != nullptr ? si[j] + bias[j] : si[j]);
                    } else if (act.kind != Activation::none) {
                        d = activation_slope_from_output(code, slope,
                                                         drop ? si[j] * keep_rate : si[j]);
                    }
                    g = drop ? dyi[j] * scale * d : dyi[j] * d;
                }
                dxi[j] = beta == 0.0f ? g : g + beta * dxi[j];
            }
        }
    }
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
