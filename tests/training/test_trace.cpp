// The run's trace (training/trace_file.hpp, src/base/trace.hpp): spans recorded only while on,
// nested spans in the order they end, the traced epochs' defaults, and the Chrome events.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "src/base/trace.hpp"
#include "training/trace_file.hpp"

using namespace strata;

TEST_CASE("trace: spans are recorded only while tracing is on, inner ones first", "[trace]") {
    { const trace::Span off("before", "step"); }
    trace::start();
    {
        const trace::Span outer("outer", "step", 7);
        const trace::Span inner("inner", "gemm");
    }
    trace::stop();
    { const trace::Span after("after", "step"); }
    const std::vector<trace::Event> events = trace::take();
    REQUIRE(events.size() == 2);
    CHECK(events[0].name == "inner");
    CHECK(std::string(events[0].category) == "gemm");
    CHECK(events[0].value == -1);
    CHECK(events[1].name == "outer");
    CHECK(events[1].value == 7);
    CHECK(events[1].begin_s <= events[0].begin_s);  // the outer span holds the inner one
    CHECK(events[0].end_s <= events[1].end_s);
    CHECK(events[0].begin_s >= 0.0);
    CHECK(trace::take().empty());  // taken once
}

TEST_CASE("trace: the traced epochs", "[trace]") {
    CHECK(parse_trace_epochs("", 10).first == 2);  // the first warms up
    CHECK(parse_trace_epochs("", 10).last == 2);
    CHECK(parse_trace_epochs("", 1).first == 1);
    CHECK(parse_trace_epochs("3", 10).last == 3);
    const TraceEpochs range = parse_trace_epochs("2:4", 10);
    CHECK((range.first == 2 && range.last == 4));
    CHECK_THROWS_WITH(parse_trace_epochs("11", 10),
                      Catch::Matchers::Contains("must lie within the run's epochs 1..10"));
}

TEST_CASE("trace: one rank's Chrome events", "[trace]") {
    const std::vector<trace::Event> events{
        {"linear 16 -> 7 \"forward\"", "gemm", 0.001, 0.0025, -1},
        {"a halo exchange (receive)", "wait", 0.002, 0.003, 1}};
    const auto list = nlohmann::json::parse("[" + chrome_events(3, events) + "]");
    REQUIRE(list.size() == 4);
    CHECK(list[0]["ph"] == "M");
    CHECK(list[0]["args"]["name"] == "rank 3");
    CHECK(list[1]["args"]["sort_index"] == 3);
    CHECK(list[2]["name"] == "linear 16 -> 7 \"forward\"");  // escaped, read back
    CHECK(list[2]["ph"] == "X");
    CHECK(list[2]["pid"] == 3);
    CHECK(list[2]["ts"].get<double>() == Approx(1000.0));  // microseconds
    CHECK(list[2]["dur"].get<double>() == Approx(1500.0));
    CHECK_FALSE(list[2].contains("args"));
    CHECK(list[3]["cat"] == "wait");
    CHECK(list[3]["args"]["value"] == 1);
}
