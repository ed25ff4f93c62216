// The kernel probes: one per figure group, buffers allocated on a probe's first round and kept
// for the others (so every round times the same memory).
#include "planner/kernel_probes.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

#include "src/tensor/csr_matrix.hpp"
#include "src/tensor/dense_matrix.hpp"

namespace strata::planner {
namespace {

/// A random graph of `rows` rows and `degree` entries per row, columns sorted.
HostCsr random_csr(index_t rows, int degree, std::uint64_t seed) {
    HostCsr a;
    a.rows = rows;
    a.cols = rows;
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<index_t> column(0, rows - 1);
    a.row_ptr.reserve(static_cast<std::size_t>(rows) + 1);
    for (index_t r = 0; r < rows; ++r) {
        std::vector<index_t> cols(static_cast<std::size_t>(degree));
        for (index_t& c : cols) {
            c = column(rng);
        }
        std::sort(cols.begin(), cols.end());
        a.col_idx.insert(a.col_idx.end(), cols.begin(), cols.end());
        a.row_ptr.push_back(static_cast<index_t>(a.col_idx.size()));
    }
    a.values.assign(a.col_idx.size(), 0.04f);
    return a;
}

std::string at(const char* key, index_t x) {
    return std::string(key) + "@" + std::to_string(x);
}

/// Buffers made on first use and kept (a probe's lambda holds it).
template <class T>
struct Lazy {
    std::shared_ptr<std::unique_ptr<T>> slot = std::make_shared<std::unique_ptr<T>>();
    template <class Make>
    T& get(Make&& make) const {
        if (!*slot) {
            *slot = std::make_unique<T>(make());
        }
        return **slot;
    }
};

struct Pair {
    DenseMatrix x;
    DenseMatrix y;
};

}  // namespace

void add_kernel_probes(FigureRounds& rounds, CpuBackend& backend, double budget, double cache_bytes,
                       const Clock& clock) {
    CpuBackend* b = &backend;
    const auto time = [clock](double seconds, const std::function<void()>& run) {
        return time_fastest(seconds, run, clock);
    };
    const auto pair = [b](index_t rows, index_t cols) {
        Pair p{DenseMatrix(*b, rows, cols), DenseMatrix(*b, rows, cols)};
        b->fill(p.x.view(), 1.0f);
        b->fill(p.y.view(), 1.0f);
        return p;
    };
    {  // streaming: y = a x + b y over 3 x 4 bytes per element, each array at least 4 x the cache
        const auto rows = static_cast<index_t>(std::max(double{1 << 22}, cache_bytes / 8.0));
        const Lazy<Pair> buffers;
        rounds.add({"memory_gbs"}, [=] {
            Pair& p = buffers.get([&] { return pair(rows, 8); });
            const double t = time(budget, [&] { b->axpby(0.5f, p.x.view(), 0.5f, p.y.view()); });
            return std::vector<double>{12.0 * static_cast<double>(p.x.view().size()) / t / 1e9};
        });
    }
    {  // one step's fixed cost: the intercept of a kernel's time over its size (two cached
       // sizes above the serial one, so the team forks and joins as for the executor's kernels)
        const index_t n = 1 << 16;
        const Lazy<DenseMatrix> buffer;
        rounds.add({"step_s"}, [=] {
            DenseMatrix& x = buffer.get([&] { return DenseMatrix(*b, 2 * n, 1); });
            const MatrixView half{x.view().data, n, 1};
            const double t1 = time(budget / 6, [&] { b->fill(half, 0.0f); });
            const double t2 = time(budget / 6, [&] { b->fill(x.view(), 0.0f); });
            return std::vector<double>{std::max(0.0, 2.0 * t1 - t2)};
        });
    }
    {  // the sparse first layer's dropout: a hash of (row id, column id) per stored entry
        struct Dropout {
            CsrMatrix a;
            std::vector<global_id> ids;
            DenseMatrix values;
        };
        const Lazy<Dropout> buffers;
        rounds.add({"dropout_entry_s"}, [=] {
            Dropout& d = buffers.get([&] {
                CsrMatrix a = CsrMatrix::upload(*b, random_csr(1 << 14, 16, 9));
                std::vector<global_id> ids(static_cast<std::size_t>(a.rows()));
                std::iota(ids.begin(), ids.end(), global_id{0});
                DenseMatrix values(*b, a.nnz(), 1);
                return Dropout{std::move(a), std::move(ids), std::move(values)};
            });
            const DropoutKey key{.seed = 1, .epoch = 1, .layer = 1, .rate = 0.5f};
            const double t = time(budget / 4, [&] {
                b->fill(d.values.view(), 1.0f);
                b->edge_dropout(d.a, key, d.ids, d.ids, d.values.view());
            });
            return std::vector<double>{t / static_cast<double>(d.a.nnz())};
        });
    }
    // A threaded GEMM between OpenMP kernels, less the two apart: the pools' hand-over. With one
    // thread there is no other pool to hand over to: not timed, 0 (a difference of three timings
    // of the same work, it read 0.29 and 0.51 us in two back-to-back calibrations).
    if (b->threads() > 1) {
        struct Switch {
            DenseMatrix a, w, c, x;
        };
        const Lazy<Switch> buffers;
        rounds.add({"blas_switch_s"}, [=] {
            Switch& s = buffers.get([&] {
                // 4096 x 16 x 16: above blas_threading_flops; x above the elementwise serial size
                Switch made{DenseMatrix(*b, 4096, 16), DenseMatrix(*b, 16, 16),
                            DenseMatrix(*b, 4096, 16), DenseMatrix(*b, 1 << 16, 1)};
                b->fill(made.a.view(), 0.5f);
                b->fill(made.w.view(), 0.5f);
                return made;
            });
            constexpr int reps = 16;  // a batch: the hand-over's typical cost, not its luckiest
            const auto batch = [&](bool with_gemm, bool with_kernel) {
                return time(budget / 4, [&] {
                    for (int i = 0; i < reps; ++i) {
                        if (with_gemm) {
                            b->gemm(std::as_const(s.a).view(), Transpose::no,
                                    std::as_const(s.w).view(), Transpose::no, s.c.view(), 1.0f,
                                    0.0f);
                        }
                        if (with_kernel) {
                            b->fill(s.x.view(), 0.0f);
                        }
                    }
                });
            };
            const double both = batch(true, true);
            return std::vector<double>{
                std::max(0.0, (both - batch(true, false) - batch(false, true)) / reps)};
        });
    }
    {  // GEMM: forward and dX (rows x 256)(256 x k); dW = Xᵀ dY (rows x k)ᵀ (rows x 256)
        const index_t rows = 1 << 16;
        struct Gemm {
            DenseMatrix a, b, c;
        };
        const Lazy<Gemm> buffers;
        for (const index_t k : {8, 16, 64, 256}) {
            rounds.add({at("gemm_gflops", k), at("gemm_tn_gflops", k)}, [=] {
                Gemm& g = buffers.get([&] {
                    Gemm made{DenseMatrix(*b, rows, 256), DenseMatrix(*b, rows, 256),
                              DenseMatrix(*b, rows, 256)};
                    b->fill(made.a.view(), 0.5f);
                    b->fill(made.b.view(), 0.5f);
                    return made;
                });
                const double flops = 2.0 * rows * 256.0 * static_cast<double>(k);
                const ConstMatrixView av{g.a.view().data, rows, 256};
                const ConstMatrixView bv{g.b.view().data, 256, k};
                const MatrixView cv{g.c.view().data, rows, k};
                const double nn = time(budget / 2, [&] {
                    b->gemm(av, Transpose::no, bv, Transpose::no, cv, 1.0f, 0.0f);
                });
                const ConstMatrixView xv{g.a.view().data, rows, k};
                const ConstMatrixView dyv{g.b.view().data, rows, 256};
                const MatrixView dwv{g.c.view().data, k, 256};
                const double tn = time(budget / 2, [&] {
                    b->gemm(xv, Transpose::yes, dyv, Transpose::no, dwv, 1.0f, 0.0f);
                });
                return std::vector<double>{flops / nn / 1e9, flops / tn / 1e9};
            });
        }
    }
    {  // the loss: softmax cross-entropy and its gradient over every row, 47 classes
        const index_t rows = 1 << 16;
        const index_t classes = 47;
        struct Loss {
            DenseMatrix logits, dlogits;
            std::vector<index_t> labels;
            std::vector<std::uint8_t> mask;
        };
        const Lazy<Loss> buffers;
        rounds.add({"softmax_entry_s"}, [=] {
            Loss& l = buffers.get([&] {
                Loss made{DenseMatrix(*b, rows, classes), DenseMatrix(*b, rows, classes),
                          std::vector<index_t>(static_cast<std::size_t>(rows)),
                          std::vector<std::uint8_t>(static_cast<std::size_t>(rows), 1)};
                b->fill(made.logits.view(), 0.25f);
                for (std::size_t i = 0; i < made.labels.size(); ++i) {
                    made.labels[i] = static_cast<index_t>(i % static_cast<std::size_t>(classes));
                }
                return made;
            });
            const double t = time(budget / 4, [&] {
                (void)b->softmax_cross_entropy(std::as_const(l.logits).view(), l.labels, l.mask,
                                               1.0f, l.dlogits.view());
            });
            return std::vector<double>{t / (static_cast<double>(rows) * classes)};
        });
    }
    // SpMM at each width: in cache, x and y together fill half the last-level cache (what the
    // cost model's size_hit calls a hit); out of cache, 2^19 rows, far beyond it. At narrow
    // widths 2^19 rows still partly fit, so the out-of-cache rate is what remains once the hits
    // (size_hit) are taken out: 1 / rate = hit / in + (1 - hit) / out.
    const index_t out_rows = 1 << 19;
    const Lazy<CsrMatrix> out_graph;  // one graph for every width
    for (const index_t width : {8, 16, 64, 256}) {
        const auto w = static_cast<double>(width);
        const auto in_rows =
            static_cast<index_t>(std::max(256.0, 0.5 * cache_bytes / (2.0 * 4.0 * w)));
        const Lazy<CsrMatrix> in_graph;
        const Lazy<Pair> in_buffers;
        const Lazy<Pair> out_buffers;
        rounds.add({at("spmm_in_cache_g", width), at("spmm_out_of_cache_g", width)}, [=] {
            const auto rate = [&](const CsrMatrix& a, Pair& p) {
                const double t =
                    time(budget / 4, [&] { b->spmm(a, p.x.view(), p.y.view(), 0.0f); });
                return static_cast<double>(a.nnz()) * w / t / 1e9;
            };
            const auto graph = [&](index_t rows) {
                return CsrMatrix::upload(*b, random_csr(rows, 16, 7));
            };
            const double in = rate(in_graph.get([&] { return graph(in_rows); }),
                                   in_buffers.get([&] { return pair(in_rows, width); }));
            const double mixed = rate(out_graph.get([&] { return graph(out_rows); }),
                                      out_buffers.get([&] { return pair(out_rows, width); }));
            const double hit = std::min(1.0, 0.5 * cache_bytes / (2.0 * out_rows * 4.0 * w));
            const double inverse = (1.0 / mixed - hit / in) / (1.0 - hit);
            const double out =
                hit < 0.9 && inverse > 1.0 / in ? 1.0 / inverse : std::min(mixed, in);
            return std::vector<double>{in, out};
        });
    }
    {  // streaming in cache: axpby over x and y filling a quarter of the last-level cache
        const auto n = static_cast<index_t>(std::max(1024.0, 0.25 * cache_bytes / 8.0));
        const Lazy<Pair> buffers;
        rounds.add({"cache_gbs"}, [=] {
            Pair& p = buffers.get([&] { return pair(n, 1); });
            const double t =
                time(budget / 4, [&] { b->axpby(0.5f, p.x.view(), 0.5f, p.y.view()); });
            return std::vector<double>{12.0 * static_cast<double>(n) / t / 1e9};
        });
    }
}

ThreadRates rates_from(int threads, const std::map<std::string, Repeated>& figures) {
    ThreadRates r;
    r.threads = threads;
    const std::vector<RatePoint> widths{{8, 0}, {16, 0}, {64, 0}, {256, 0}};
    r.gemm = r.gemm_tn = r.spmm_in_cache = r.spmm_out_of_cache = widths;
    std::map<std::string, double> spread;
    for_each_figure(r, [&](const std::string& name, double& value, bool) {
        if (const auto it = figures.find(name); it != figures.end()) {
            value = it->second.median;
            spread[name] = it->second.spread;
        }
    });
    r.spread = std::move(spread);
    return r;
}

}  // namespace strata::planner
