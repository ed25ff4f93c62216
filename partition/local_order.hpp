// Local order: a vertex reordering inside one rank's part for the locality of its SpMMs. The
// partitioner numbers each part's vertices by original id; a graph delivered in random order
// then gives the inner SpMM random reads of x. Reverse Cuthill–McKee (George & Liu 1981) puts
// neighbours near each other. Applied to a LocalPart once it is built or read (every load
// path: partition directories, whole-graph .h5, the distributed loads), it changes local row
// positions only: original ids, dropout keys, halo columns and results (to rounding) are kept.
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "partition/local_part.hpp"
#include "src/tensor/host_csr.hpp"

namespace strata {

/// `--local-order`: none (the partition's order), rcm, metis (blocks of METIS).
enum class LocalOrder { none, rcm, metis };
[[nodiscard]] std::optional<LocalOrder> parse_local_order(std::string_view text);
[[nodiscard]] std::string_view to_string(LocalOrder order);

/// Reverse Cuthill–McKee order of the pattern of A + Aᵀ (a square CSR, any values, columns in
/// range): order[i] is the row placed at position i. Each connected component starts at a
/// vertex of least degree; neighbours are visited by ascending degree (ties by id), so the
/// order is deterministic. O(nnz log(max degree) + n).
[[nodiscard]] std::vector<index_t> rcm_order(const HostCsr& a);

/// Rows grouped by METIS_PartGraphKway of the pattern of A + Aᵀ into ceil(n / block) parts
/// (part by part; inside a part in their current order): blocks of about `block` neighbouring
/// rows, whose x rows fit a core's L2 at F = 128 with block 1024. Seeded, deterministic.
[[nodiscard]] std::vector<index_t> metis_block_order(const HostCsr& a, index_t block = 1024);

/// P A Pᵀ of a square CSR: new row i is old row order[i], column c becomes inverse[c] (inverse
/// the inverse permutation of order), each row's columns sorted again (values moved with them).
/// OpenMP over rows.
[[nodiscard]] HostCsr permute_square(const HostCsr& a, std::span<const index_t> order,
                                     const std::vector<index_t>& inverse);

/// Moves row order[i] of every per-row field of `part` (inner rows and columns, halo rows, send
/// lists, boundary and interior lists, original ids, degrees, features, labels, every split's
/// masks, chunk map) to position i. `order` must be a permutation of [0, num_owned) (throws
/// strata::Error otherwise). owned_original is then no longer ascending, so the part, like a
/// chunked one (reorder_into_chunks), is for training, not for validate_local_graph or a part
/// file: the order is applied when a part is loaded, and the partition format is unchanged.
void reorder_rows(LocalPart& part, std::span<const index_t> order);

/// reorder_rows(part, rcm_order(part.graph.inner)) for rcm, metis_block_order for metis;
/// nothing for none.
void apply_local_order(LocalPart& part, LocalOrder order);

}  // namespace strata
