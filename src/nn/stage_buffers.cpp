// StageBuffers: allocation, views, the snapshot copy and the history's regions.
#include "src/nn/stage_buffers.hpp"

#include <algorithm>
#include <array>

#include "src/base/error.hpp"

namespace strata {

bool StageViews::whole(int slot) const {
    return slot >= 0 && b_.at(slot).place != Place::scratch && b_.at(slot).place != Place::chunk;
}

MatrixView StageViews::all(int slot) const {
    if (slot < 0) {
        return {};
    }
    // The buffers are written through these views (ops take mutable views), hence the casts.
    const Location& l = b_.at(slot);
    const index_t rows = b_.aggregation_.num_rows();
    switch (l.place) {
        case Place::input: {
            const ConstMatrixView in = b_.data_.inputs[static_cast<std::size_t>(l.input)];
            return {const_cast<float*>(in.data), in.rows, in.cols};  // read only
        }
        case Place::kept:
            return {const_cast<float*>(b_.kept_.data()) + l.offset, rows, l.cols};
        case Place::kept_grad:
            return {const_cast<float*>(b_.kept_grad_.data()) + l.offset, rows, l.cols};
        case Place::chunk:  // the chunk's rows only, at an address fixed per slot
            return {const_cast<float*>(b_.chunk_.data()) +
                        l.offset * static_cast<std::size_t>(b_.scratch_rows_),
                    r_.count, l.cols};
        default:
            STRATA_FAIL("pipeline: slot ", slot, " holds one chunk's rows only");
    }
}

MatrixView StageViews::rows(int slot) const {
    if (slot < 0) {
        return {};
    }
    const Location& l = b_.at(slot);
    if (l.place == Place::scratch) {
        return {
            const_cast<float*>(b_.scratch_.data()) + l.offset * static_cast<std::size_t>(r_.count),
            r_.count, l.cols};
    }
    if (l.place == Place::chunk) {
        return all(slot);
    }
    return all(slot).rows_of(r_);
}

std::span<float> StageViews::workspace(const PlanStep&) const {
    return {const_cast<float*>(b_.workspace_.data()), b_.workspace_.size()};
}

StageBuffers::StageBuffers(Backend& backend, const ModelGraph& graph, StageStorage storage,
                           const GraphOperator& aggregation, const TrainingData& data,
                           bool snapshot)
    : backend_(backend),
      graph_(graph),
      storage_(std::move(storage)),
      aggregation_(aggregation),
      data_(data),
      kept_(backend, storage_.kept_floats),
      kept_grad_(backend, storage_.kept_grad_floats),
      snapshot_(snapshot) {
    const std::size_t floats = storage_.snapshot_floats;
    if (snapshot && floats > 0) {
        backup_ = Buffer<float>(backend, floats);
        for (std::size_t done = 0; done < floats;) {
            const std::size_t n = std::min(floats - done, std::size_t{1} << 30);
            backend.fill({backup_.data() + done, static_cast<index_t>(n), 1}, 0.0f);
            done += n;
        }
    }
    zero();
}

void StageBuffers::fit_chunks(index_t rows) {
    if (rows <= scratch_rows_) {
        return;
    }
    scratch_rows_ = rows;
    scratch_ = Buffer<float>(backend_, storage_.scratch_per_row * static_cast<std::size_t>(rows));
    chunk_ = Buffer<float>(backend_, storage_.chunk_per_row * static_cast<std::size_t>(rows));
    workspace_ =
        Buffer<float>(backend_, stage_workspace_floats(graph_, storage_, rows, aggregation_));
}

MatrixView StageBuffers::receive_rows(std::size_t column, index_t rows, index_t cols) const {
    STRATA_ASSERT(column + static_cast<std::size_t>(cols) <= storage_.receive_per_row &&
                  rows <= scratch_rows_);
    // Sized for the largest chunk, so that no chunk's arena rows (offset x its rows) reach them.
    const std::size_t first = storage_.scratch_per_row - storage_.receive_per_row + column;
    return {const_cast<float*>(scratch_.data()) + first * static_cast<std::size_t>(scratch_rows_),
            rows, cols};
}

std::vector<const float*> StageBuffers::chunk_regions() const {
    std::vector<const float*> out;
    for (const Location& l : storage_.slots) {
        if (l.place == Place::chunk) {
            out.push_back(chunk_.data() + l.offset * static_cast<std::size_t>(scratch_rows_));
        }
    }
    return out;
}

MatrixView StageBuffers::value(TensorId t) const {
    return views({0, 0}).all(storage_.schedule.values[static_cast<std::size_t>(t)]);
}

MatrixView StageBuffers::grad(TensorId t) const {
    return views({0, 0}).all(storage_.schedule.grads[static_cast<std::size_t>(t)]);
}

MatrixView StageBuffers::snapshot_of(TensorId t) const {
    STRATA_CHECK(has_snapshot(), "pipeline: no snapshot of '", graph_.tensor(t).name, "'");
    std::size_t offset = 0;
    for (const TensorId s : storage_.snapshot) {
        if (storage_.chunk_only(s)) {
            continue;  // its snapshot is the slices' mirror's
        }
        const MatrixView v = value(s);
        if (s == t) {
            return {const_cast<float*>(backup_.data()) + offset, v.rows, v.cols};
        }
        offset += aligned_floats(v.size());
    }
    STRATA_FAIL("pipeline: '", graph_.tensor(t).name, "' has no snapshot");
}

void StageBuffers::zero() {
    const StageViews whole = views({0, 0});
    for (std::size_t s = 0; s < storage_.slots.size(); ++s) {
        const Place place = storage_.slots[s].place;
        if (place == Place::kept || place == Place::kept_grad) {
            backend_.fill(whole.all(static_cast<int>(s)), 0.0f);
        }
    }
}

void StageBuffers::copy_snapshot(bool take) {
    std::size_t offset = 0;
    for (const TensorId t : storage_.snapshot) {
        if (storage_.chunk_only(t)) {
            continue;
        }
        const MatrixView v = value(t);
        float* backup = backup_.data() + offset;
        const std::size_t bytes = v.size() * sizeof(float);
        if (take) {
            backend_.copy(backup, v.data, bytes);
        } else {
            backend_.copy(v.data, backup, bytes);
        }
        offset += aligned_floats(v.size());
    }
}

std::vector<std::vector<StageBuffers::Region>> StageBuffers::regions(bool snapshot,
                                                                     bool gradients) const {
    std::vector<std::vector<Region>> out(3);
    std::size_t offset = 0;
    const index_t rows = aggregation_.num_rows();
    for (const TensorId t : storage_.snapshot) {
        const MatrixView v = value(t);
        const std::string* name = &graph_.tensor(t).name;
        if (storage_.chunk_only(t)) {
            out[0].push_back({name, nullptr, rows, v.cols, t});
            if (snapshot) {
                out[1].push_back({name, nullptr, rows, v.cols, t});
            }
            continue;
        }
        out[0].push_back({name, v.data, v.rows, v.cols, t});
        if (snapshot) {
            out[1].push_back(
                {name, const_cast<float*>(backup_.data()) + offset, v.rows, v.cols, t});
        }
        offset += aligned_floats(v.size());
    }
    if (gradients) {
        for (const TensorId t : storage_.kept_grads) {
            const MatrixView g = grad(t);
            const bool chunk = storage_.grad(t).place == Place::chunk;
            out[2].push_back({&graph_.tensor(t).name, chunk ? nullptr : g.data,
                              chunk ? rows : g.rows, g.cols, t});
        }
    }
    return out;
}

void StageBuffers::download(PipelineHistory& h, bool snapshot, bool gradients,
                            const ChunkRowsOut& chunk_rows, bool all_from_chunk_rows) const {
    const auto parts = regions(snapshot, gradients);
    const std::array<std::vector<HistoryTensor>*, 3> into{&h.embeddings, &h.snapshot, &h.gradients};
    for (std::size_t p = 0; p < parts.size(); ++p) {
        for (const Region& r : parts[p]) {
            HistoryTensor tensor{.name = *r.name, .rows = r.rows, .cols = r.cols};
            tensor.values.resize(r.floats());
            if (r.data == nullptr || all_from_chunk_rows) {
                STRATA_CHECK(chunk_rows, "pipeline history: '", *r.name, "' is a chunk copy");
                chunk_rows(r.tensor, static_cast<int>(p),
                           MatrixView{tensor.values.data(), r.rows, r.cols});
            } else if (!tensor.values.empty()) {
                backend_.download(tensor.values.data(), r.data, r.floats() * sizeof(float));
            }
            into[p]->push_back(std::move(tensor));
        }
    }
}

void StageBuffers::upload(const PipelineHistory& h, bool gradients, const ChunkRowsIn& chunk_rows) {
    STRATA_CHECK(!h.has_snapshot || has_snapshot() || storage_.snapshot_floats == 0,
                 "pipeline history: a snapshot for a run without one");
    const auto parts = regions(h.has_snapshot, gradients);
    const auto put = [&](const Region& r, std::size_t part, const float* from) {
        if (r.data == nullptr) {
            STRATA_CHECK(chunk_rows, "pipeline history: '", *r.name, "' is a chunk copy");
            chunk_rows(r.tensor, static_cast<int>(part), ConstMatrixView{from, r.rows, r.cols});
        } else if (r.floats() > 0) {
            backend_.upload(r.data, from, r.floats() * sizeof(float));
        }
    };
    if (h.from_format4) {  // the rows in one array, split by this layout
        std::size_t at = 0;
        for (std::size_t p = 0; p < parts.size(); ++p) {
            for (const Region& r : parts[p]) {
                STRATA_CHECK(at + r.floats() <= h.format4_rows.size(),
                             "pipeline history: ", h.format4_rows.size(),
                             " values do not fit this stage's layout");
                put(r, p, h.format4_rows.data() + at);
                at += r.floats();
            }
        }
        STRATA_CHECK(at == h.format4_rows.size(), "pipeline history: ", h.format4_rows.size(),
                     " values, this stage's layout holds ", at);
        return;
    }
    const std::array<const std::vector<HistoryTensor>*, 3> given{&h.embeddings, &h.snapshot,
                                                                 &h.gradients};
    const std::array<const char*, 3> what{"embedding", "snapshot", "gradient"};
    for (std::size_t p = 0; p < parts.size(); ++p) {
        const std::vector<HistoryTensor>& tensors = *given[p];
        STRATA_CHECK(tensors.size() == parts[p].size(), "pipeline history: ", tensors.size(), " ",
                     what[p], " tensors, this stage holds ", parts[p].size());
        for (std::size_t i = 0; i < tensors.size(); ++i) {
            const HistoryTensor& g = tensors[i];
            const Region& w = parts[p][i];
            STRATA_CHECK(g.name == *w.name && g.rows == w.rows && g.cols == w.cols &&
                             g.values.size() == w.floats(),
                         "pipeline history: ", what[p], " '", g.name, "' ", g.rows, " x ", g.cols,
                         " (", g.values.size(), " values), this stage holds '", *w.name, "' ",
                         w.rows, " x ", w.cols);
            put(w, p, g.values.data());
        }
    }
}

}  // namespace strata
