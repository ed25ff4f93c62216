// ShapeOperator: a GraphOperator that only knows its sizes (owned rows, rows sent and received
// per exchange), so that plan_execution lays out a rank's arena exactly as the full-graph
// executor does (workspace_floats: the overlapped aggregation's formula) without a graph.
#pragma once

#include "layers/overlapped_aggregation.hpp"
#include "src/base/error.hpp"
#include "src/nn/graph_operator.hpp"

namespace strata::planner {

class ShapeOperator final : public GraphOperator {
public:
    ShapeOperator(index_t rows, std::int64_t send_rows, std::int64_t recv_rows,
                  HaloPrecision precision = HaloPrecision::fp32)
        : rows_(rows), send_(send_rows), recv_(recv_rows), precision_(precision) {}
    [[nodiscard]] index_t num_rows() const override { return rows_; }
    /// OverlappedAggregation::workspace_floats: aggregation_workspace_floats.
    [[nodiscard]] std::size_t workspace_floats(index_t width) const override {
        return aggregation_workspace_floats(precision_, static_cast<index_t>(send_),
                                            static_cast<index_t>(recv_), width);
    }
    void forward(ConstMatrixView, MatrixView, RowRange, std::span<float>, ExchangeCall) override {
        STRATA_FAIL("ShapeOperator: sizes only");
    }
    void backward(ConstMatrixView, MatrixView, RowRange, float, std::span<float>,
                  ExchangeCall) override {
        STRATA_FAIL("ShapeOperator: sizes only");
    }
    [[nodiscard]] HaloBytes bytes_sent() const override { return {}; }

private:
    index_t rows_;
    std::int64_t send_;
    std::int64_t recv_;
    HaloPrecision precision_;
};

}  // namespace strata::planner
