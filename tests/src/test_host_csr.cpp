// Tests of the host CSR helpers: transpose, is_symmetric, csr_bytes and validate.
#include <vector>

#include <catch2/catch.hpp>

#include "src/base/error.hpp"
#include "src/tensor/host_csr.hpp"
#include "tests/src/test_util.hpp"

namespace strata {
namespace {

/// [[0, 1, 2], [3, 0, 0]]
HostCsr two_by_three() {
    HostCsr a;
    a.rows = 2;
    a.cols = 3;
    a.row_ptr = {0, 2, 3};
    a.col_idx = {1, 2, 0};
    a.values = {1, 2, 3};
    return a;
}

/// [[2, 1, 0], [1, 0, 3], [0, 3, 5]]
HostCsr symmetric_3x3() {
    HostCsr a;
    a.rows = 3;
    a.cols = 3;
    a.row_ptr = {0, 2, 4, 6};
    a.col_idx = {0, 1, 0, 2, 1, 2};
    a.values = {2, 1, 1, 3, 3, 5};
    return a;
}

}  // namespace

TEST_CASE("transpose of a 2x3 CSR matrix is the 3x2 transpose with sorted rows", "[tensor]") {
    const HostCsr t = transpose(two_by_three());

    // [[0, 3], [1, 0], [2, 0]]
    CHECK(t.rows == 3);
    CHECK(t.cols == 2);
    CHECK(t.row_ptr == std::vector<index_t>{0, 1, 2, 3});
    CHECK(t.col_idx == std::vector<index_t>{1, 0, 0});
    CHECK(t.values == std::vector<float>{3, 1, 2});
}

TEST_CASE("transposing twice gives back the matrix, empty rows included", "[tensor]") {
    const HostCsr a = test::random_csr(40, 25, 0.15, 8);

    const HostCsr back = transpose(transpose(a));

    CHECK(back.rows == a.rows);
    CHECK(back.cols == a.cols);
    CHECK(back.row_ptr == a.row_ptr);
    CHECK(back.col_idx == a.col_idx);
    CHECK(back.values == a.values);
}

TEST_CASE("transpose of an empty matrix has empty rows", "[tensor]") {
    HostCsr a;
    a.rows = 2;
    a.cols = 3;
    a.row_ptr = {0, 0, 0};

    const HostCsr t = transpose(a);

    CHECK(t.row_ptr == std::vector<index_t>{0, 0, 0, 0});
    CHECK(t.nnz() == 0);
}

TEST_CASE("is_symmetric accepts a symmetric 3x3 matrix", "[tensor]") {
    const HostCsr a = symmetric_3x3();

    CHECK(is_symmetric(a));
}

TEST_CASE("is_symmetric rejects the same structure with a different mirrored value", "[tensor]") {
    HostCsr a = symmetric_3x3();
    a.values = {2, 1, 1.5f, 3, 3, 5};  // A[1][0] = 1.5 but A[0][1] = 1

    CHECK_FALSE(is_symmetric(a));
}

TEST_CASE("is_symmetric rejects an entry whose mirror is missing", "[tensor]") {
    HostCsr a;  // [[2, 1, 0], [1, 0, 3], [0, 0, 5]]: A[1][2] has no A[2][1]
    a.rows = 3;
    a.cols = 3;
    a.row_ptr = {0, 2, 4, 5};
    a.col_idx = {0, 1, 0, 2, 2};
    a.values = {2, 1, 1, 3, 5};
    HostCsr lower = a;  // the mirror case: A[2][1] present, A[1][2] missing
    lower.row_ptr = {0, 2, 3, 5};
    lower.col_idx = {0, 1, 0, 1, 2};
    lower.values = {2, 1, 1, 3, 5};

    CHECK_FALSE(is_symmetric(a));
    CHECK_FALSE(is_symmetric(lower));
}

TEST_CASE("is_symmetric rejects a rectangular matrix", "[tensor]") {
    HostCsr a;  // [[1, 0, 0], [0, 1, 0]]: symmetric-looking entries, but 2 x 3
    a.rows = 2;
    a.cols = 3;
    a.row_ptr = {0, 1, 2};
    a.col_idx = {0, 1};
    a.values = {1, 1};

    CHECK_FALSE(is_symmetric(a));
    CHECK_FALSE(is_symmetric(two_by_three()));
}

TEST_CASE("is_symmetric accepts empty matrices", "[tensor]") {
    HostCsr no_entries;
    no_entries.rows = 3;
    no_entries.cols = 3;
    no_entries.row_ptr = {0, 0, 0, 0};

    CHECK(is_symmetric(HostCsr{}));
    CHECK(is_symmetric(no_entries));
}

TEST_CASE("csr_bytes counts row pointers, column ids and values", "[tensor]") {
    // 4 (rows + 1) + 4 nnz + 4 nnz
    CHECK(csr_bytes(3, 4) == 48);
    CHECK(csr_bytes(0, 0) == 4);
    CHECK(csr_bytes(2, 0) == 12);
    // past 2^31: 4 · 1000001 + 8 · 3e9
    CHECK(csr_bytes(1000000, 3000000000LL) == 24004000004LL);
}

TEST_CASE("validate accepts a well-formed matrix", "[tensor]") {
    REQUIRE_NOTHROW(validate(two_by_three(), "m"));
}

TEST_CASE("validate names the first broken invariant", "[tensor]") {
    HostCsr a = two_by_three();

    SECTION("row_ptr size") {
        a.row_ptr = {0, 3};
        REQUIRE_THROWS_WITH(validate(a, "g.h5"),
                            Catch::Contains("g.h5: row_ptr has 2 entries, expected rows+1 = 3"));
    }
    SECTION("row_ptr not starting at 0") {
        a.row_ptr = {1, 2, 3};
        REQUIRE_THROWS_WITH(validate(a, "m"), Catch::Contains("row_ptr[0] = 1"));
    }
    SECTION("row_ptr end differs from nnz") {
        a.row_ptr = {0, 2, 2};
        REQUIRE_THROWS_WITH(validate(a, "m"), Catch::Contains("expected nnz = 3"));
    }
    SECTION("row_ptr not monotone") {
        a.row_ptr = {0, 4, 3};
        REQUIRE_THROWS_WITH(validate(a, "m"),
                            Catch::Contains("m: row_ptr not monotone at row 1 (4 > 3)"));
    }
    SECTION("column id out of range") {
        a.col_idx = {1, 3, 0};
        REQUIRE_THROWS_WITH(validate(a, "m"),
                            Catch::Contains("column id 3 at entry 1 out of range [0, 3)"));
    }
    SECTION("negative column id") {
        a.col_idx = {-1, 2, 0};
        REQUIRE_THROWS_WITH(validate(a, "m"), Catch::Contains("column id -1 at entry 0"));
    }
    SECTION("values and column ids differ in length") {
        a.values = {1, 2};
        REQUIRE_THROWS_WITH(validate(a, "m"), Catch::Contains("2 values but 3 column ids"));
    }
}

}  // namespace strata
