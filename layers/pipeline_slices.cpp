// SlicedStageAggregation: per-chunk layout switches, the mirrors, the sliced aggregation.
#include "layers/pipeline_slices.hpp"

#include <algorithm>

#include "src/base/error.hpp"

namespace strata {

SlicedStageAggregation::SlicedStageAggregation(Backend& backend, GraphOperator& whole,
                                               Communicator& group,
                                               std::vector<index_t> chunk_offsets)
    : backend_(backend), whole_(whole), group_(group), offsets_(std::move(chunk_offsets)) {
    STRATA_CHECK(
        offsets_.size() >= 2 && offsets_.front() == 0 && offsets_.back() == whole.num_rows(),
        "sliced stage: chunk offsets do not cover the ", whole.num_rows(), " rows");
    local_.push_back(0);
    for (std::size_t c = 0; c + 1 < offsets_.size(); ++c) {
        const index_t rows = offsets_[c + 1] - offsets_[c];
        STRATA_CHECK_OPTION(rows >= slices(), "chunks", offsets_.size() - 1, "chunk ", c,
                            " has fewer rows (", rows,
                            ") than feature slices (feature_slices = ", slices(), ")");
        switches_.push_back(std::make_unique<LayoutSwitch>(backend, group, rows));
        local_.push_back(local_.back() + switches_.back()->chunk().count);
    }
}

SlicedStageAggregation::~SlicedStageAggregation() = default;

RowRange SlicedStageAggregation::share(int chunk) const {
    const auto c = static_cast<std::size_t>(chunk);
    const RowRange mine = switches_[c]->chunk();
    return {offsets_[c] + mine.first, mine.count};
}

std::size_t SlicedStageAggregation::workspace_floats(index_t width) const {
    std::vector<index_t> rows;
    for (std::size_t c = 0; c + 1 < offsets_.size(); ++c) {
        rows.push_back(offsets_[c + 1] - offsets_[c]);
    }
    return workspace_floats(rows, slices(), slice(), width, whole_);
}

std::size_t SlicedStageAggregation::workspace_floats(std::span<const index_t> chunk_rows,
                                                     int slices, int slice, index_t width,
                                                     const GraphOperator& whole) {
    std::size_t staging = 0;
    index_t rows = 0;
    for (const index_t n : chunk_rows) {
        staging = std::max(staging, LayoutSwitch::staging_floats(n, width, slices, slice));
        rows += n;
    }
    const index_t cols = grid_block(width, slices, slice).count;
    return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) + staging +
           whole.workspace_floats(cols);
}

index_t SlicedStageAggregation::share_rows(std::span<const index_t> chunk_rows, int slices,
                                           int slice) {
    index_t rows = 0;
    for (const index_t n : chunk_rows) {
        rows += grid_rows(n, slices, slice).count;
    }
    return rows;
}

HaloBytes SlicedStageAggregation::switch_bytes() const {
    HaloBytes sum;
    for (const auto& s : switches_) {
        const HaloBytes b = s->bytes_sent();
        sum.forward += b.forward;
        sum.backward += b.backward;
        sum.recompute += b.recompute;
        sum.inter_node += b.inter_node;
    }
    return sum;
}

std::pair<int, int> SlicedStageAggregation::chunks_of(RowRange rows) const {
    const auto first = std::lower_bound(local_.begin(), local_.end(), rows.first);
    const auto end = std::lower_bound(local_.begin(), local_.end(), rows.end());
    STRATA_CHECK(first != local_.end() && *first == rows.first && end != local_.end() &&
                     *end == rows.end() && first < end,
                 "sliced stage: rows [", rows.first, ", ", rows.end(),
                 ") are not whole pipeline chunks");
    return {static_cast<int>(first - local_.begin()), static_cast<int>(end - local_.begin())};
}

SlicedStageAggregation::Mirror& SlicedStageAggregation::mirror(ConstMatrixView whole) {
    const auto it = mirrors_.find(whole.data);
    STRATA_CHECK(it != mirrors_.end() && it->second.width == whole.cols,
                 "sliced stage: a whole-graph buffer of ", whole.rows, " x ", whole.cols,
                 " without a mirror");
    return it->second;
}

index_t SlicedStageAggregation::base_of(ConstMatrixView h, RowRange rows) const {
    STRATA_CHECK(h.rows == num_rows() || h.rows == rows.count, "sliced stage: a buffer of ", h.rows,
                 " rows for local rows [", rows.first, ", ", rows.end(), ")");
    return h.rows == num_rows() ? 0 : rows.first;
}

void SlicedStageAggregation::rebind(const float* old, const float* now) {
    auto node = mirrors_.extract(old);
    STRATA_CHECK(!node.empty(), "sliced stage: no mirror to move");
    node.key() = now;
    mirrors_.insert(std::move(node));
}

void SlicedStageAggregation::attach(ConstMatrixView whole, bool snapshot) {
    if (mirrors_.contains(whole.data)) {
        return;
    }
    Mirror m;
    m.width = whole.cols;
    m.cols = grid_block(whole.cols, slices(), slice()).count;
    const std::size_t floats =
        static_cast<std::size_t>(global_rows()) * static_cast<std::size_t>(m.cols);
    m.rows = Buffer<float>(backend_, floats);
    backend_.fill({m.rows.data(), global_rows(), m.cols}, 0.0f);
    if (snapshot) {
        m.snapshot = Buffer<float>(backend_, floats);
        backend_.fill({m.snapshot.data(), global_rows(), m.cols}, 0.0f);
    }
    mirrors_.emplace(whole.data, std::move(m));
}

void SlicedStageAggregation::to_columns(ConstMatrixView from, index_t base, float* c, index_t cols,
                                        int first, int end, std::span<float> staging,
                                        ExchangePurpose purpose) {
    for (int k = first; k < end; ++k) {
        const auto i = static_cast<std::size_t>(k);
        const index_t rows = offsets_[i + 1] - offsets_[i];
        switches_[i]->to_columns(
            from.rows_of({local_[i] - base, local_[i + 1] - local_[i]}),
            MatrixView{c + static_cast<std::size_t>(offsets_[i]) * static_cast<std::size_t>(cols),
                       rows, cols},
            staging, purpose);
    }
}

void SlicedStageAggregation::to_rows(const float* c, index_t cols, MatrixView to, index_t base,
                                     int first, int end, std::span<float> staging,
                                     ExchangePurpose purpose) {
    for (int k = first; k < end; ++k) {
        const auto i = static_cast<std::size_t>(k);
        const index_t rows = offsets_[i + 1] - offsets_[i];
        switches_[i]->to_rows(ConstMatrixView{c + static_cast<std::size_t>(offsets_[i]) *
                                                      static_cast<std::size_t>(cols),
                                              rows, cols},
                              to.rows_of({local_[i] - base, local_[i + 1] - local_[i]}), staging,
                              purpose);
    }
}

void SlicedStageAggregation::resync(ConstMatrixView whole, ConstMatrixView rows, bool snapshot) {
    Mirror& m = mirror(whole);
    STRATA_CHECK(rows.rows == num_rows() && rows.cols == whole.cols, "sliced stage: resync from ",
                 rows.rows, " x ", rows.cols);
    std::vector<float> staging(workspace_floats(whole.cols));
    to_columns(rows, 0, snapshot ? m.snapshot.data() : m.rows.data(), m.cols, 0,
               static_cast<int>(switches_.size()), staging, ExchangePurpose::forward);
}

void SlicedStageAggregation::gather(ConstMatrixView whole, MatrixView rows, bool snapshot) {
    Mirror& m = mirror(whole);
    STRATA_CHECK(rows.rows == num_rows() && rows.cols == whole.cols, "sliced stage: gather into ",
                 rows.rows, " x ", rows.cols);
    STRATA_CHECK(!snapshot || m.snapshot.size() > 0, "sliced stage: a mirror without snapshot");
    std::vector<float> staging(workspace_floats(whole.cols));
    to_rows(snapshot ? m.snapshot.data() : m.rows.data(), m.cols, rows, 0, 0,
            static_cast<int>(switches_.size()), staging, ExchangePurpose::forward);
}

void SlicedStageAggregation::refill(ConstMatrixView whole, MatrixView rows, RowRange range) {
    Mirror& m = mirror(whole);
    const auto [first, end] = chunks_of(range);
    STRATA_CHECK(rows.rows == range.count && rows.cols == whole.cols, "sliced stage: refill of ",
                 rows.rows, " x ", rows.cols);
    std::vector<float> staging(workspace_floats(whole.cols));
    to_rows(m.rows.data(), m.cols, rows, range.first, first, end, staging,
            ExchangePurpose::recompute);
}

void SlicedStageAggregation::scale(ConstMatrixView whole, RowRange rows, float factor) {
    Mirror& m = mirror(whole);
    const auto [first, end] = chunks_of(rows);
    const auto a = static_cast<std::size_t>(first);
    const auto b = static_cast<std::size_t>(end);
    const MatrixView y{
        m.rows.data() + static_cast<std::size_t>(offsets_[a]) * static_cast<std::size_t>(m.cols),
        offsets_[b] - offsets_[a], m.cols};
    backend_.axpby(0.0f, y, factor, y);
}

void SlicedStageAggregation::fill(ConstMatrixView whole, float value) {
    Mirror& m = mirror(whole);
    backend_.fill({m.rows.data(), global_rows(), m.cols}, value);
}

void SlicedStageAggregation::snapshot(bool take) {
    for (auto& [key, m] : mirrors_) {
        if (m.snapshot.size() == 0) {
            continue;
        }
        const std::size_t bytes = m.rows.size() * sizeof(float);
        if (take) {
            backend_.copy(m.snapshot.data(), m.rows.data(), bytes);
        } else {
            backend_.copy(m.rows.data(), m.snapshot.data(), bytes);
        }
    }
}

std::size_t SlicedStageAggregation::mirror_floats() const {
    std::size_t floats = 0;
    for (const auto& [key, m] : mirrors_) {
        floats += m.rows.size() + m.snapshot.size();
    }
    return floats;
}

void SlicedStageAggregation::forward(ConstMatrixView h, MatrixView z, RowRange rows,
                                     std::span<float> workspace, ExchangeCall call) {
    const ExchangePurpose purpose = call.purpose;
    Mirror& m = mirror(h);
    const auto [first, end] = chunks_of(rows);
    const auto a = static_cast<std::size_t>(first);
    const auto b = static_cast<std::size_t>(end);
    const RowRange global{offsets_[a], offsets_[b] - offsets_[a]};
    const std::size_t out =
        static_cast<std::size_t>(global.count) * static_cast<std::size_t>(m.cols);
    std::size_t staging = 0;
    for (int k = first; k < end; ++k) {
        staging = std::max(staging, switches_[static_cast<std::size_t>(k)]->staging_floats(h.cols));
    }
    STRATA_CHECK(workspace.size() >= out + staging, "sliced stage: workspace of ", workspace.size(),
                 " floats");
    const MatrixView zc{workspace.data(), global.count, m.cols};
    // z holds every local row (a whole-graph buffer) or exactly the range's.
    const index_t zbase = z.rows == num_rows() ? 0 : rows.first;
    const std::span<float> stage = workspace.subspan(out, staging);
    to_columns(h, base_of(h, rows), m.rows.data(), m.cols, first, end, stage, purpose);
    if (hook_) {
        hook_(h, MatrixView{m.rows.data(), global_rows(), m.cols}, /*forward=*/true);
    }
    whole_.forward(ConstMatrixView{m.rows.data(), global_rows(), m.cols}, zc, global,
                   workspace.subspan(out + staging), call);
    for (int k = first; k < end; ++k) {
        const auto i = static_cast<std::size_t>(k);
        switches_[i]->to_rows(
            zc.rows_of({offsets_[i] - global.first, offsets_[i + 1] - offsets_[i]}),
            z.rows_of({local_[i] - zbase, local_[i + 1] - local_[i]}), stage, purpose);
    }
}

void SlicedStageAggregation::backward(ConstMatrixView dz, MatrixView dh, RowRange rows, float beta,
                                      std::span<float> workspace, ExchangeCall call) {
    Mirror& m = mirror(dz);
    const auto [first, end] = chunks_of(rows);
    const auto a = static_cast<std::size_t>(first);
    const auto b = static_cast<std::size_t>(end);
    const RowRange global{offsets_[a], offsets_[b] - offsets_[a]};
    const std::size_t out =
        static_cast<std::size_t>(global.count) * static_cast<std::size_t>(m.cols);
    std::size_t staging = 0;
    for (int k = first; k < end; ++k) {
        staging =
            std::max(staging, switches_[static_cast<std::size_t>(k)]->staging_floats(dz.cols));
    }
    STRATA_CHECK(workspace.size() >= out + staging, "sliced stage: workspace of ", workspace.size(),
                 " floats");
    const MatrixView dhc{workspace.data(), global.count, m.cols};
    const index_t dbase = dh.rows == num_rows() ? 0 : rows.first;
    const std::span<float> stage = workspace.subspan(out, staging);
    to_columns(dz, base_of(dz, rows), m.rows.data(), m.cols, first, end, stage,
               ExchangePurpose::backward);
    if (hook_) {
        hook_(dz, MatrixView{m.rows.data(), global_rows(), m.cols}, /*forward=*/false);
    }
    if (beta != 0.0f) {  // accumulate in C: the same sums as the whole operator's
        for (int k = first; k < end; ++k) {
            const auto i = static_cast<std::size_t>(k);
            switches_[i]->to_columns(
                dh.rows_of({local_[i] - dbase, local_[i + 1] - local_[i]}),
                dhc.rows_of({offsets_[i] - global.first, offsets_[i + 1] - offsets_[i]}), stage,
                ExchangePurpose::backward);
        }
    }
    whole_.backward(ConstMatrixView{m.rows.data(), global_rows(), m.cols}, dhc, global, beta,
                    workspace.subspan(out + staging), call);
    for (int k = first; k < end; ++k) {
        const auto i = static_cast<std::size_t>(k);
        switches_[i]->to_rows(
            dhc.rows_of({offsets_[i] - global.first, offsets_[i + 1] - offsets_[i]}),
            dh.rows_of({local_[i] - dbase, local_[i + 1] - local_[i]}), stage,
            ExchangePurpose::backward);
    }
}

}  // namespace strata
