// SlicedStageAggregation: feature slices inside a layer-pipeline stage (S x F, docs/pipeline.md
// "Feature slices inside each stage"), the PipelineSlices of src/nn/pipeline_slices.hpp over the
// grid's layout switch. Every initial pipeline chunk is a "part" of the switch (its rows split
// into F row blocks, one per slice; widths into F column slices), so a chunk's rows go from
// layout R (this rank's row block, all columns) to layout C (every row of the chunk, column
// slice f) and back with LayoutSwitch, as in the G x F grid. An aggregation of a chunk: the
// chunk's fresh rows of its input switched into the input's mirror (all |V| rows at slice f,
// the other chunks' rows as they were last written: the pipeline's staleness), the whole
// graph's operator at the slice's width on the chunk's rows, the result switched back to R.
// A mirrored buffer may be the executor's chunk copy (its R rows for the chunk in flight only,
// stage_storage.hpp): the mirror then holds its only copy of every row. With the hybrid's ways
// (S x W x F) the group is a way's F ranks; a hook (set_mirror_hook) runs the ways' mirror
// exchange on the mirror between the switch and the operator.
// Host memory only (the layout switch's).
#pragma once

#include <map>
#include <memory>
#include <span>
#include <vector>

#include "layers/layout_switch.hpp"
#include "src/device/buffer.hpp"
#include "src/nn/pipeline_slices.hpp"

namespace strata {

class SlicedStageAggregation final : public PipelineSlices {
public:
    /// `whole`: Â over every row of the graph (no halo peers), rows in chunk order; `group`: the
    /// stage's F ranks (rank f); `chunk_offsets`: the pipeline's initial chunks (C + 1 offsets
    /// over whole's rows). All must outlive it. Throws strata::OptionError naming `chunks` when
    /// a chunk has fewer rows than slices.
    SlicedStageAggregation(Backend& backend, GraphOperator& whole, Communicator& group,
                           std::vector<index_t> chunk_offsets);
    ~SlicedStageAggregation() override;

    [[nodiscard]] index_t num_rows() const override { return local_.back(); }
    /// The chunk's C result (up to every row at the slice's width), the switch's staging and
    /// the whole operator's workspace at the slice's width.
    [[nodiscard]] std::size_t workspace_floats(index_t width) const override;
    /// Without a communicator (strata plan): workspace_floats of slice `slice` of `slices` over
    /// initial chunks of `chunk_rows` whole-graph rows, `whole` the whole graph's operator.
    [[nodiscard]] static std::size_t workspace_floats(std::span<const index_t> chunk_rows,
                                                      int slices, int slice, index_t width,
                                                      const GraphOperator& whole);
    /// The rank's local rows: Σ over the chunks of its row block (the grid's blocks).
    [[nodiscard]] static index_t share_rows(std::span<const index_t> chunk_rows, int slices,
                                            int slice);
    /// z[rows] = (Â h)[rows] for whole chunks `rows` (local rows; z holds every local row or
    /// the range's): their rows of h into h's mirror, the whole operator on the mirror at slice
    /// f, the result back to R.
    void forward(ConstMatrixView h, MatrixView z, RowRange rows, std::span<float> workspace,
                 ExchangeCall call) override;
    /// dh = (Âᵀ dz)[rows] + beta dh: the chunks' rows of dz into dz's mirror, dh (beta != 0) to
    /// C, the whole operator's backward at slice f, dh back to R.
    void backward(ConstMatrixView dz, MatrixView dh, RowRange rows, float beta,
                  std::span<float> workspace, ExchangeCall call) override;
    [[nodiscard]] HaloBytes bytes_sent() const override { return whole_.bytes_sent(); }
    [[nodiscard]] HaloBytes switch_bytes() const override;

    [[nodiscard]] int slices() const override { return group_.size(); }
    [[nodiscard]] int slice() const override { return group_.rank(); }
    [[nodiscard]] index_t global_rows() const override { return offsets_.back(); }
    [[nodiscard]] RowRange share(int chunk) const override;
    [[nodiscard]] const std::vector<index_t>& local_offsets() const override { return local_; }

    void attach(ConstMatrixView whole, bool snapshot) override;
    void rebind(const float* old, const float* now) override;
    void resync(ConstMatrixView whole, ConstMatrixView rows, bool snapshot) override;
    void gather(ConstMatrixView whole, MatrixView rows, bool snapshot) override;
    void refill(ConstMatrixView whole, MatrixView rows, RowRange range) override;
    void scale(ConstMatrixView whole, RowRange rows, float factor) override;
    void fill(ConstMatrixView whole, float value) override;
    void snapshot(bool take) override;
    [[nodiscard]] std::size_t mirror_floats() const override;
    void set_mirror_hook(MirrorHook hook) override { hook_ = std::move(hook); }

private:
    struct Mirror {
        Buffer<float> rows;      ///< |V| x slice
        Buffer<float> snapshot;  ///< |V| x slice, or empty
        index_t cols = 0;        ///< the slice's width
        index_t width = 0;       ///< the buffer's (layout R's) width
    };
    Mirror& mirror(ConstMatrixView whole);
    /// The initial chunks [first, end) that local rows `rows` cover exactly.
    [[nodiscard]] std::pair<int, int> chunks_of(RowRange rows) const;
    /// Local rows `from` (every local row, or from local row `base` on) of chunks [first, end)
    /// into `c` (all rows x slice).
    void to_columns(ConstMatrixView from, index_t base, float* c, index_t cols, int first, int end,
                    std::span<float> staging, ExchangePurpose purpose);
    /// The inverse: `c`'s rows of chunks [first, end) into `to` (from local row `base` on).
    void to_rows(const float* c, index_t cols, MatrixView to, index_t base, int first, int end,
                 std::span<float> staging, ExchangePurpose purpose);
    /// The first local row of h (dz): 0 when it holds every local row, else the call's.
    [[nodiscard]] index_t base_of(ConstMatrixView h, RowRange rows) const;

    Backend& backend_;
    GraphOperator& whole_;
    Communicator& group_;
    std::vector<index_t> offsets_;                         ///< whole-graph rows, C + 1
    std::vector<index_t> local_;                           ///< local rows, C + 1
    std::vector<std::unique_ptr<LayoutSwitch>> switches_;  ///< per initial chunk
    std::map<const float*, Mirror> mirrors_;
    MirrorHook hook_;
};

}  // namespace strata
