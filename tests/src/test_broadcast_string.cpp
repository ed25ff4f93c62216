// broadcast_string: every rank ends with the root's string, for every root, for an empty, a short
// and a long string (1 MiB + 3 characters, NULs included, also sent in pieces of 4096 bytes),
// whatever the other ranks held before.
#include <string>

#include <catch2/catch.hpp>

#include "src/comm/broadcast_string.hpp"
#include "src/comm/mpi_communicator.hpp"
#include "tests/support/all_ranks.hpp"

namespace strata {
namespace {

std::string long_text() {
    std::string text((std::size_t{1} << 20) + 3, '\0');
    for (std::size_t i = 0; i < text.size(); ++i) {
        text[i] = static_cast<char>(i * 7 % 251);  // NULs included
    }
    return text;
}

TEST_CASE("broadcast_string gives every rank the root's string", "[mpi]") {
    const std::string texts[] = {std::string(), std::string("x"), std::string("a/b c.h5"),
                                 long_text()};
    for (const std::size_t limit : {std::size_t{1} << 30, std::size_t{4096}}) {
        MpiCommunicator comm;
        comm.set_max_message_bytes(limit);
        for (int root = 0; root < comm.size(); ++root) {
            for (const std::string& want : texts) {
                // The other ranks start with something else: longer, shorter or empty.
                std::string text = comm.rank() == root    ? want
                                   : comm.rank() % 2 == 0 ? std::string(5000, 'q')
                                                          : std::string();
                broadcast_string(comm, text, root);
                INFO("root " << root << ", " << want.size() << " characters, message limit "
                             << limit);
                CHECK(test::all_ranks(text == want));
            }
        }
    }
}

TEST_CASE("broadcast_string refuses a root outside the communicator", "[mpi]") {
    MpiCommunicator comm;
    std::string text = "t";
    CHECK_THROWS_WITH(broadcast_string(comm, text, comm.size()),
                      Catch::Contains("is not a rank of a communicator of size"));
}

}  // namespace
}  // namespace strata
