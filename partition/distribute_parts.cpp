// distribute_parts: three Communicator::all_to_all rounds (rows to their parts; each part's halo
// requests to the owning parts; the requested rows' degrees back), then every part's blocks from
// its own rows with split_local_rows, exactly as LocalGraphBuilder::build lays them out.
#include "partition/distribute_parts.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <utility>

#include "datasets/adjacency.hpp"
#include "partition/local_blocks.hpp"
#include "partition/local_limits.hpp"
#include "src/base/error.hpp"
#include "src/base/release.hpp"

namespace strata {
namespace {

/// Appends trivially copyable values to a message.
class ByteWriter {
public:
    template <class T>
    void put(const T& value) {
        put(std::span<const T>(&value, 1));
    }
    template <class T>
    void put(std::span<const T> values) {
        const auto* p = reinterpret_cast<const std::byte*>(values.data());
        bytes_.insert(bytes_.end(), p, p + values.size_bytes());
    }
    std::vector<std::byte> take() { return std::move(bytes_); }

private:
    std::vector<std::byte> bytes_;
};

/// Reads a message back in the order it was written; every read is bounds-checked.
class ByteReader {
public:
    explicit ByteReader(std::span<const std::byte> bytes) : bytes_(bytes) {}
    template <class T>
    T get() {
        T value{};
        read(&value, 1);
        return value;
    }
    template <class T>
    void read(T* out, std::size_t count) {
        std::memcpy(out, take(count * sizeof(T)), count * sizeof(T));
    }
    template <class T>
    void append(std::vector<T>& out, std::size_t count) {
        const std::size_t old = out.size();
        out.resize(old + count);
        read(out.data() + old, count);
    }
    /// The next `bytes` bytes (read in place).
    const std::byte* take(std::size_t bytes) {
        STRATA_CHECK(bytes <= bytes_.size() - at_, "distribute_parts: a message ends after ", at_,
                     " bytes, ", bytes, " more expected");
        const std::byte* p = bytes_.data() + at_;
        at_ += bytes;
        return p;
    }
    [[nodiscard]] bool done() const { return at_ == bytes_.size(); }

private:
    std::span<const std::byte> bytes_;
    std::size_t at_ = 0;
};

/// One Communicator::all_to_all: block_for(d) goes to rank d (made for d = 0 .. P-1 in turn,
/// each appended to one send buffer); returns the blocks sent to this rank, in source order.
template <class BlockFor>
ReceivedBlocks send_blocks(Communicator& comm, BlockFor&& block_for) {
    std::vector<std::byte> send;
    std::vector<std::size_t> offsets{0};
    for (int d = 0; d < comm.size(); ++d) {
        const std::vector<std::byte> block = block_for(d);
        send.insert(send.end(), block.begin(), block.end());
        offsets.push_back(send.size());
    }
    return comm.all_to_all(send, offsets);
}

/// Rows of one part with their merged rows of A, ascending original id.
struct RowSegment {
    std::vector<global_id> original;
    std::vector<double> degree;
    std::vector<index_t> labels;
    std::vector<std::uint8_t> masks;  ///< row-major: row i's train s, val s, test s at 3 S i + ..
    std::vector<std::int64_t> row_ptr{0};
    std::vector<global_id> cols;  ///< original ids, ascending and unique in each row
    std::vector<float> values;
    std::vector<float> features;  ///< rows x F
};

/// One part: the rows as they arrive, one segment per source rank (each ascending, batch after
/// batch; sources hold ascending id ranges), then assembled in source order into the base.
struct PartRows : RowSegment {
    int part = 0;
    std::vector<RowSegment> from;  ///< per source rank, until assemble()
    /// Per part that this one asks for rows (its halo), ascending: (owner, original ids).
    std::vector<std::pair<int, std::vector<global_id>>> halo;
    std::vector<std::vector<double>> halo_degree;  ///< per halo group
    /// Per part that asks this one for rows: (asking part, original ids it wants).
    std::vector<std::pair<int, std::vector<global_id>>> asked;
};

void check_slice(const GraphSlice& slice, std::span<const int> slice_owner, int num_parts,
                 const Communicator& comm) {
    const global_id n = slice.num_local();
    const auto rows = static_cast<std::size_t>(n);
    const std::size_t masks = rows * static_cast<std::size_t>(slice.num_splits);
    STRATA_CHECK(num_parts >= 1, "distribute_parts: number of parts must be >= 1, got ", num_parts);
    STRATA_CHECK(slice.rank == comm.rank() &&
                     slice.vertex_offsets.size() == static_cast<std::size_t>(comm.size()) + 1,
                 "distribute_parts: slice ", slice.rank, " of ",
                 static_cast<std::int64_t>(slice.vertex_offsets.size()) - 1, " on rank ",
                 comm.rank(), " of ", comm.size());
    STRATA_CHECK(
        slice.first() + n == slice.vertex_offsets[static_cast<std::size_t>(slice.rank) + 1] &&
            slice.vertex_offsets.back() == slice.num_vertices,
        "distribute_parts: slice rows [", slice.first(), ", ", slice.first() + n,
        ") disagree with its offsets");
    STRATA_CHECK(slice_owner.size() == rows, "distribute_parts: ", slice_owner.size(),
                 " owners for ", n, " slice rows");
    STRATA_CHECK(
        slice.indptr.front() == 0 &&
            slice.indptr.back() == static_cast<std::int64_t>(slice.indices.size()) &&
            (slice.edge_weight.empty() || slice.edge_weight.size() == slice.indices.size()),
        "distribute_parts: slice indptr ends at ", slice.indptr.back(), " for ",
        slice.indices.size(), " indices and ", slice.edge_weight.size(), " weights");
    for (std::size_t k = 0; k < slice.indices.size(); ++k) {
        STRATA_CHECK(slice.indices[k] >= 0 && slice.indices[k] < slice.num_vertices,
                     "distribute_parts: slice edge ", k, " has source ", slice.indices[k],
                     ", outside [0, ", slice.num_vertices, ")");
    }
    STRATA_CHECK(slice.features.rows == n && slice.labels.size() == rows &&
                     slice.train_mask.size() == masks && slice.val_mask.size() == masks &&
                     slice.test_mask.size() == masks && slice.num_splits >= 1,
                 "distribute_parts: slice vertex data sizes disagree with ", n, " rows");
}

/// Round 1, one batch: slice rows [first_row, first_row + merged.num_rows()) whose part lives
/// on rank `dest` (p % P), merged (row i - first_row of `merged`), with degree and vertex data.
/// Block layout: count c; part, original id, degree, label of each row (arrays); masks (3 S
/// bytes per row); merged row lengths; columns; values; features (c x F).
std::vector<std::byte> rows_for(int dest, const GraphSlice& slice, std::span<const int> owner,
                                std::size_t first_row, const GlobalCsr& merged,
                                const std::vector<double>& degree, int size) {
    std::vector<std::size_t> rows;
    const auto end_row = first_row + static_cast<std::size_t>(merged.num_rows());
    for (std::size_t i = first_row; i < end_row; ++i) {
        if (owner[i] % size == dest) {
            rows.push_back(i);
        }
    }
    const auto nl = static_cast<std::size_t>(slice.num_local());
    const auto splits = static_cast<std::size_t>(slice.num_splits);
    ByteWriter w;
    w.put(static_cast<std::uint64_t>(rows.size()));
    for (std::size_t i : rows) {
        w.put(static_cast<std::int32_t>(owner[i]));
    }
    for (std::size_t i : rows) {
        w.put(static_cast<global_id>(slice.first() + static_cast<global_id>(i)));
    }
    for (std::size_t i : rows) {
        w.put(degree[i - first_row]);
    }
    for (std::size_t i : rows) {
        w.put(slice.labels[i]);
    }
    for (std::size_t i : rows) {
        for (const auto* mask : {&slice.train_mask, &slice.val_mask, &slice.test_mask}) {
            for (std::size_t s = 0; s < splits; ++s) {
                w.put((*mask)[s * nl + i]);
            }
        }
    }
    for (std::size_t i : rows) {
        w.put(merged.indptr[i - first_row + 1] - merged.indptr[i - first_row]);
    }
    for (std::size_t i : rows) {
        const auto b = static_cast<std::size_t>(merged.indptr[i - first_row]);
        const auto e = static_cast<std::size_t>(merged.indptr[i - first_row + 1]);
        w.put(std::span<const std::int64_t>(merged.indices).subspan(b, e - b));
    }
    for (std::size_t i : rows) {
        const auto b = static_cast<std::size_t>(merged.indptr[i - first_row]);
        const auto e = static_cast<std::size_t>(merged.indptr[i - first_row + 1]);
        w.put(std::span<const float>(merged.values).subspan(b, e - b));
    }
    const auto f = static_cast<std::size_t>(slice.features.cols);
    for (std::size_t i : rows) {
        w.put(std::span<const float>(slice.features.row(static_cast<std::int64_t>(i)), f));
    }
    return w.take();
}

/// Appends one source's block of round 1 to the parts it names (parts[p / P]).
void receive_rows(std::span<const std::byte> block, int source, std::vector<PartRows>& parts,
                  int size, int splits, index_t f, std::int64_t num_classes) {
    ByteReader r(block);
    const auto c = static_cast<std::size_t>(r.get<std::uint64_t>());
    std::vector<std::int32_t> part(c);
    r.read(part.data(), c);
    std::vector<RowSegment*> to(c);
    for (std::size_t k = 0; k < c; ++k) {
        const auto local = static_cast<std::size_t>(part[k] / size);
        STRATA_CHECK(local < parts.size() && parts[local].part == part[k],
                     "distribute_parts: received a row of part ", part[k], " on the wrong rank");
        to[k] = &parts[local].from[static_cast<std::size_t>(source)];
    }
    for (std::size_t k = 0; k < c; ++k) {
        to[k]->original.push_back(r.get<global_id>());
    }
    for (std::size_t k = 0; k < c; ++k) {
        to[k]->degree.push_back(r.get<double>());
    }
    for (std::size_t k = 0; k < c; ++k) {
        const auto label = r.get<std::int64_t>();
        STRATA_CHECK(label >= -1 && label < num_classes, "graph: label ", label, " of vertex ",
                     to[k]->original.back(), " outside [-1, ", num_classes, ")");
        to[k]->labels.push_back(static_cast<index_t>(label));
    }
    const std::size_t mask_bytes = 3 * static_cast<std::size_t>(splits);
    for (std::size_t k = 0; k < c; ++k) {
        r.append(to[k]->masks, mask_bytes);
    }
    std::vector<std::int64_t> length(c);
    r.read(length.data(), c);
    for (std::size_t k = 0; k < c; ++k) {
        to[k]->row_ptr.push_back(to[k]->row_ptr.back() + length[k]);
        r.append(to[k]->cols, static_cast<std::size_t>(length[k]));
    }
    for (std::size_t k = 0; k < c; ++k) {
        r.append(to[k]->values, static_cast<std::size_t>(length[k]));
    }
    for (std::size_t k = 0; k < c; ++k) {
        r.append(to[k]->features, static_cast<std::size_t>(f));
    }
    STRATA_CHECK(r.done(), "distribute_parts: ", block.size(), " bytes of rows not all read");
}

/// Concatenates the segments in source order (ascending original ids), freeing each one as it
/// is copied; a part whose rows all came from one source takes that segment whole.
void assemble(PartRows& part) {
    const auto filled = std::count_if(part.from.begin(), part.from.end(),
                                      [](const RowSegment& seg) { return !seg.original.empty(); });
    if (filled <= 1) {  // one source (a part of one rank's slice): moved, not copied
        for (RowSegment& seg : part.from) {
            if (!seg.original.empty()) {
                static_cast<RowSegment&>(part) = std::move(seg);
            }
        }
        release(part.from);
        return;
    }
    std::size_t rows = 0;
    std::size_t entries = 0;
    std::size_t masks = 0;
    std::size_t features = 0;
    for (const RowSegment& seg : part.from) {
        rows += seg.original.size();
        entries += seg.cols.size();
        masks += seg.masks.size();
        features += seg.features.size();
    }
    part.original.reserve(rows);
    part.degree.reserve(rows);
    part.labels.reserve(rows);
    part.masks.reserve(masks);
    part.row_ptr.reserve(rows + 1);
    part.cols.reserve(entries);
    part.values.reserve(entries);
    part.features.reserve(features);
    for (RowSegment& seg : part.from) {
        part.original.insert(part.original.end(), seg.original.begin(), seg.original.end());
        part.degree.insert(part.degree.end(), seg.degree.begin(), seg.degree.end());
        part.labels.insert(part.labels.end(), seg.labels.begin(), seg.labels.end());
        part.masks.insert(part.masks.end(), seg.masks.begin(), seg.masks.end());
        const std::int64_t base = part.row_ptr.back();
        for (std::size_t i = 1; i < seg.row_ptr.size(); ++i) {
            part.row_ptr.push_back(base + seg.row_ptr[i]);
        }
        part.cols.insert(part.cols.end(), seg.cols.begin(), seg.cols.end());
        part.values.insert(part.values.end(), seg.values.begin(), seg.values.end());
        part.features.insert(part.features.end(), seg.features.begin(), seg.features.end());
        seg = RowSegment{};
    }
    release(part.from);
}

/// The columns of `part`'s rows owned by other parts, grouped by owner (ascending), original
/// ids ascending in each group: HaloPlan::halo_from(part, owner) in original ids.
std::vector<std::pair<int, std::vector<global_id>>> halo_groups(const PartRows& part,
                                                                const Partition& partition) {
    std::vector<global_id> halo;
    for (const global_id u : part.cols) {
        if (partition.owner[static_cast<std::size_t>(u)] != part.part) {
            halo.push_back(u);
        }
    }
    std::sort(halo.begin(), halo.end());
    halo.erase(std::unique(halo.begin(), halo.end()), halo.end());
    std::stable_sort(halo.begin(), halo.end(), [&](global_id a, global_id b) {
        return partition.owner[static_cast<std::size_t>(a)] <
               partition.owner[static_cast<std::size_t>(b)];
    });
    std::vector<std::pair<int, std::vector<global_id>>> groups;
    for (const global_id u : halo) {
        const int q = partition.owner[static_cast<std::size_t>(u)];
        if (groups.empty() || groups.back().first != q) {
            groups.emplace_back(q, std::vector<global_id>{});
        }
        groups.back().second.push_back(u);
    }
    return groups;
}

/// Position of original id `v` among `sorted` (which must hold it).
std::size_t position(const std::vector<global_id>& sorted, global_id v, int part) {
    const auto it = std::lower_bound(sorted.begin(), sorted.end(), v);
    STRATA_CHECK(it != sorted.end() && *it == v, "distribute_parts: part ", part,
                 " does not own vertex ", v);
    return static_cast<std::size_t>(it - sorted.begin());
}

using IdLists = std::vector<std::pair<int, std::vector<global_id>>>;

/// A block of rounds 2 and 3 for rank `dest`: the number of messages, then per message the part
/// it is for (first of a pair of `lists`, living on rank part % P), the sending part, the
/// number of ids, and what `payload` writes for them.
template <class Payload>
std::vector<std::byte> messages_for(int dest, int size, const std::vector<PartRows>& parts,
                                    IdLists PartRows::*lists, Payload payload) {
    std::uint64_t count = 0;
    for (const PartRows& part : parts) {
        for (const auto& item : part.*lists) {
            count += item.first % size == dest ? 1 : 0;
        }
    }
    ByteWriter w;
    w.put(count);
    for (const PartRows& part : parts) {
        for (const auto& [to, ids] : part.*lists) {
            if (to % size == dest) {
                w.put(static_cast<std::int32_t>(to));
                w.put(static_cast<std::int32_t>(part.part));
                w.put(static_cast<std::uint64_t>(ids.size()));
                payload(w, part, ids);
            }
        }
    }
    return w.take();
}

/// Reads every block of a round of messages_for: handle(target part, sending part, n, reader)
/// reads each message's payload.
template <class Handle>
void read_messages(const ReceivedBlocks& received, int size, std::vector<PartRows>& parts,
                   const char* what, Handle handle) {
    for (int s = 0; s < size; ++s) {
        ByteReader r(received.from(s));
        const auto count = r.get<std::uint64_t>();
        for (std::uint64_t k = 0; k < count; ++k) {
            const auto target = static_cast<std::size_t>(r.get<std::int32_t>() / size);
            const int from = r.get<std::int32_t>();
            const auto n = static_cast<std::size_t>(r.get<std::uint64_t>());
            STRATA_CHECK(target < parts.size(), "distribute_parts: ", what,
                         " for a part this rank does not hold");
            handle(parts[target], from, n, r);
        }
        STRATA_CHECK(r.done(), "distribute_parts: ", what, " not all read");
    }
}

/// Rounds 2 and 3: every part's halo requests to the owners' ranks, their degrees back.
void exchange_halos(std::vector<PartRows>& parts, const Partition& partition, Communicator& comm) {
    const int size = comm.size();
    for (PartRows& part : parts) {
        part.halo = halo_groups(part, partition);
    }
    // Round 2: per request, owner part, asking part, n, the ids.
    const ReceivedBlocks requests = send_blocks(comm, [&](int dest) {
        return messages_for(dest, size, parts, &PartRows::halo,
                            [](ByteWriter& w, const PartRows&, const std::vector<global_id>& ids) {
                                w.put(std::span<const global_id>(ids));
                            });
    });
    read_messages(requests, size, parts, "halo requests",
                  [](PartRows& owner, int asking, std::size_t n, ByteReader& r) {
                      std::vector<global_id> ids;
                      r.append(ids, n);
                      owner.asked.emplace_back(asking, std::move(ids));
                  });
    for (PartRows& part : parts) {
        std::sort(part.asked.begin(), part.asked.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    // Round 3: per reply, asking part, owner part, n, the degrees of the ids asked for.
    const ReceivedBlocks replies = send_blocks(comm, [&](int dest) {
        return messages_for(
            dest, size, parts, &PartRows::asked,
            [](ByteWriter& w, const PartRows& part, const std::vector<global_id>& ids) {
                for (const global_id v : ids) {
                    w.put(part.degree[position(part.original, v, part.part)]);
                }
            });
    });
    for (PartRows& part : parts) {
        part.halo_degree.resize(part.halo.size());
    }
    read_messages(
        replies, size, parts, "degree replies",
        [](PartRows& part, int owner, std::size_t n, ByteReader& r) {
            const auto group = std::find_if(part.halo.begin(), part.halo.end(),
                                            [&](const auto& g) { return g.first == owner; });
            STRATA_CHECK(group != part.halo.end() && group->second.size() == n,
                         "distribute_parts: part ", part.part, " got ", n,
                         " degrees it did not ask part ", owner, " for");
            r.append(part.halo_degree[static_cast<std::size_t>(group - part.halo.begin())], n);
        });
}

/// The LocalGraph of one part, laid out as LocalGraphBuilder::build lays it out.
LocalGraph local_graph(PartRows& rows, const Partition& partition,
                       const std::vector<global_id>& part_offsets) {
    const int p = rows.part;
    const int num_parts = partition.num_parts;
    LocalGraph g;
    g.rank = p;
    g.num_parts = num_parts;
    g.num_global_vertices = static_cast<global_id>(partition.owner.size());
    g.first_owned = part_offsets[static_cast<std::size_t>(p)];
    LocalSizes sizes{.owned = static_cast<std::int64_t>(rows.original.size())};
    check_local_limits(sizes, p, num_parts);
    STRATA_CHECK(sizes.owned == part_offsets[static_cast<std::size_t>(p) + 1] - g.first_owned,
                 "distribute_parts: part ", p, " received ", sizes.owned, " rows");
    g.num_owned = static_cast<index_t>(sizes.owned);
    g.owned_original = std::move(rows.original);
    g.owned_degree = std::move(rows.degree);

    // Peers: the parts this one receives from or sends to, ascending.
    std::vector<int> peers;
    for (const auto& group : rows.halo) {
        peers.push_back(group.first);
    }
    for (const auto& request : rows.asked) {
        peers.push_back(request.first);
    }
    std::sort(peers.begin(), peers.end());
    peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
    g.pattern.peers = peers;
    auto find = [](const auto& list, int peer) {
        return std::find_if(list.begin(), list.end(),
                            [&](const auto& item) { return item.first == peer; });
    };
    for (const auto& request : rows.asked) {
        sizes.rows_sent += static_cast<std::int64_t>(request.second.size());
    }
    for (const auto& group : rows.halo) {
        sizes.halo += static_cast<std::int64_t>(group.second.size());
    }
    check_local_limits(sizes, p, num_parts);
    // group_of[q]: index of part q's halo group (-1: none); group_column: its first column.
    std::vector<int> group_of(static_cast<std::size_t>(num_parts), -1);
    for (std::size_t k = 0; k < rows.halo.size(); ++k) {
        group_of[static_cast<std::size_t>(rows.halo[k].first)] = static_cast<int>(k);
    }
    std::vector<index_t> group_column(rows.halo.size());
    for (const int q : peers) {
        const auto asked = find(rows.asked, q);
        if (asked != rows.asked.end()) {
            for (const global_id v : asked->second) {
                g.send_rows.push_back(static_cast<index_t>(position(g.owned_original, v, p)));
            }
        }
        const auto group = find(rows.halo, q);
        if (group != rows.halo.end()) {
            const auto k = static_cast<std::size_t>(group - rows.halo.begin());
            group_column[k] = g.num_owned + static_cast<index_t>(g.halo_original.size());
            g.halo_original.insert(g.halo_original.end(), group->second.begin(),
                                   group->second.end());
            g.halo_degree.insert(g.halo_degree.end(), rows.halo_degree[k].begin(),
                                 rows.halo_degree[k].end());
        }
        g.pattern.send_offsets.push_back(static_cast<index_t>(g.send_rows.size()));
        g.pattern.recv_offsets.push_back(static_cast<index_t>(g.halo_original.size()));
    }

    // Local column ids: owned columns [0, n), received columns n + position in the halo.
    sizes.entries = rows.row_ptr.back();
    check_local_limits(sizes, p, num_parts);
    std::vector<index_t> local(rows.cols.size());
    for (std::size_t k = 0; k < rows.cols.size(); ++k) {
        const global_id u = rows.cols[k];
        const int q = partition.owner[static_cast<std::size_t>(u)];
        if (q == p) {
            local[k] = static_cast<index_t>(position(g.owned_original, u, p));
            continue;
        }
        const auto j = static_cast<std::size_t>(group_of[static_cast<std::size_t>(q)]);
        local[k] = group_column[j] + static_cast<index_t>(position(rows.halo[j].second, u, q));
    }
    release(rows.cols);  // 8 bytes per entry, no longer needed: lowers the load's peak
    release(rows.halo);
    LocalBlocks blocks = split_local_rows(g.num_owned, g.pattern.recv_offsets, rows.row_ptr,
                                          local.data(), rows.values.data(), {});
    g.inner = std::move(blocks.inner);
    g.halo = std::move(blocks.halo);
    g.boundary_rows = std::move(blocks.boundary_rows);
    g.interior_rows = std::move(blocks.interior_rows);
    return g;
}

/// The LocalPart of one part: its graph and vertex data (masks split-major).
LocalPart local_part(PartRows& rows, const Partition& partition,
                     const std::vector<global_id>& part_offsets, const GraphSlice& slice,
                     const std::array<std::int64_t, 3>& split0) {
    LocalPart part;
    const auto n = static_cast<std::size_t>(rows.original.size());
    const auto splits = static_cast<std::size_t>(slice.num_splits);
    part.num_splits = slice.num_splits;
    for (auto* mask : {&part.train_mask, &part.val_mask, &part.test_mask}) {
        mask->resize(splits * n);
    }
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t s = 0; s < splits; ++s) {
            part.train_mask[s * n + i] = rows.masks[3 * splits * i + s];
            part.val_mask[s * n + i] = rows.masks[3 * splits * i + splits + s];
            part.test_mask[s * n + i] = rows.masks[3 * splits * i + 2 * splits + s];
        }
    }
    part.labels = std::move(rows.labels);
    part.features.rows = static_cast<std::int64_t>(n);
    part.features.cols = slice.features.cols;
    part.features.values = std::move(rows.features);
    part.num_classes = slice.num_classes;
    part.global_train = split0[0];
    part.global_val = split0[1];
    part.global_test = split0[2];
    part.graph = local_graph(rows, partition, part_offsets);
    return part;
}

}  // namespace

Partition gather_owners(const GraphSlice& slice, std::span<const int> slice_owner, int num_parts,
                        Communicator& comm) {
    Partition partition;
    partition.num_parts = num_parts;
    std::vector<std::byte> all = comm.gather(std::as_bytes(slice_owner), 0);
    partition.owner.resize(static_cast<std::size_t>(slice.num_vertices));
    auto owners = std::as_writable_bytes(std::span<int>(partition.owner));
    if (comm.rank() == 0) {
        STRATA_CHECK(all.size() == owners.size(), "gather_owners: ", all.size() / sizeof(int),
                     " owners gathered for ", slice.num_vertices, " vertices");
        std::copy(all.begin(), all.end(), owners.begin());
    }
    release(all);
    comm.broadcast(owners, 0);
    validate_partition(partition, slice.num_vertices, "distribute_parts: owners");
    return partition;
}

namespace {

/// Slice row boundaries of round 1's batches: 0 = b_0 < ... < b_m = num_local, each batch at
/// most batch_bytes of stored data (at least one row).
std::vector<std::size_t> batch_bounds(const GraphSlice& slice, std::size_t batch_bytes) {
    const auto nl = static_cast<std::size_t>(slice.num_local());
    const std::size_t row_bytes = static_cast<std::size_t>(slice.features.cols) * sizeof(float) +
                                  3 * static_cast<std::size_t>(slice.num_splits) + 40;
    std::vector<std::size_t> bounds{0};
    std::size_t bytes = 0;
    for (std::size_t i = 0; i < nl; ++i) {
        const auto edges = static_cast<std::size_t>(slice.indptr[i + 1] - slice.indptr[i]);
        const std::size_t row = row_bytes + edges * (sizeof(global_id) + sizeof(float));
        if (bytes > 0 && bytes + row > batch_bytes) {
            bounds.push_back(i);
            bytes = 0;
        }
        bytes += row;
    }
    if (bounds.back() != nl) {
        bounds.push_back(nl);
    }
    return bounds;
}

/// Reserves every part's segments for what they will receive: each source's row count and
/// stored edge count (an upper bound of the merged one) per part, in one small all_to_all.
void reserve_parts(std::vector<PartRows>& parts, const GraphSlice& slice,
                   std::span<const int> owner, int num_parts, Communicator& comm) {
    const int size = comm.size();
    const ReceivedBlocks counts = send_blocks(comm, [&](int dest) {
        std::vector<std::int64_t> per_part;  // per part on dest: rows, edges
        for (int p = dest; p < num_parts; p += size) {
            per_part.insert(per_part.end(), {0, 0});
        }
        for (std::size_t i = 0; i < owner.size(); ++i) {
            if (owner[i] % size == dest) {
                const auto k = 2 * static_cast<std::size_t>(owner[i] / size);
                ++per_part[k];
                per_part[k + 1] += slice.indptr[i + 1] - slice.indptr[i];
            }
        }
        ByteWriter w;
        w.put(std::span<const std::int64_t>(per_part));
        return w.take();
    });
    const auto f = static_cast<std::size_t>(slice.features.cols);
    const auto splits = static_cast<std::size_t>(slice.num_splits);
    for (PartRows& part : parts) {
        part.from.resize(static_cast<std::size_t>(size));
    }
    for (int s = 0; s < size; ++s) {
        ByteReader r(counts.from(s));
        std::vector<std::int64_t> from_s;
        r.append(from_s, 2 * parts.size());
        for (std::size_t k = 0; k < parts.size(); ++k) {
            const auto rows = static_cast<std::size_t>(from_s[2 * k]);
            const auto edges = static_cast<std::size_t>(from_s[2 * k + 1]);
            RowSegment& seg = parts[k].from[static_cast<std::size_t>(s)];
            seg.original.reserve(rows);
            seg.degree.reserve(rows);
            seg.labels.reserve(rows);
            seg.masks.reserve(3 * splits * rows);
            seg.row_ptr.reserve(rows + 1);
            seg.cols.reserve(edges);
            seg.values.reserve(edges);
            seg.features.reserve(rows * f);
        }
    }
}

/// distribute_parts; `release` (the same slice, or null) is emptied once its rows are sent.
std::vector<LocalPart> distribute(const GraphSlice& slice, GraphSlice* release,
                                  std::span<const int> slice_owner, int num_parts,
                                  Communicator& comm, std::size_t batch_bytes) {
    check_slice(slice, slice_owner, num_parts, comm);
    const Partition partition = gather_owners(slice, slice_owner, num_parts, comm);
    std::vector<global_id> part_offsets(static_cast<std::size_t>(num_parts) + 1, 0);
    for (const int q : partition.owner) {
        ++part_offsets[static_cast<std::size_t>(q) + 1];
    }
    std::partial_sum(part_offsets.begin(), part_offsets.end(), part_offsets.begin());
    const auto nl = static_cast<std::size_t>(slice.num_local());

    // Split 0's sizes over the whole graph (what attach_vertex_data counts).
    std::array<std::int64_t, 3> split0{};
    for (std::size_t i = 0; i < nl; ++i) {
        split0[0] += slice.train_mask[i] != 0 ? 1 : 0;
        split0[1] += slice.val_mask[i] != 0 ? 1 : 0;
        split0[2] += slice.test_mask[i] != 0 ? 1 : 0;
    }
    comm.allreduce_sum(split0);

    const int size = comm.size();
    std::vector<PartRows> parts;
    for (int p = comm.rank(); p < num_parts; p += size) {
        parts.emplace_back().part = p;
    }
    reserve_parts(parts, slice, slice_owner, num_parts, comm);
    // Round 1 in batches (the same number on every rank; a rank out of rows sends nothing).
    const std::vector<std::size_t> bounds = batch_bounds(slice, batch_bytes);
    std::array<std::int64_t, 1> batches{static_cast<std::int64_t>(bounds.size()) - 1};
    comm.allreduce_max(batches);
    for (std::size_t b = 0; b < static_cast<std::size_t>(batches[0]); ++b) {
        const std::size_t first = b + 1 < bounds.size() ? bounds[b] : nl;
        const std::size_t last = b + 1 < bounds.size() ? bounds[b + 1] : nl;
        // The batch's rows of A, merged as adjacency_matrix merges them, and their degrees
        // (Σ_u A_vu in double, columns ascending, as LocalGraphBuilder sums them).
        const GlobalCsr merged = merged_rows(
            std::span<const std::int64_t>(slice.indptr).subspan(first, last - first + 1),
            slice.indices, slice.edge_weight);
        std::vector<double> degree(last - first, 0.0);
        for (std::size_t i = 0; i < degree.size(); ++i) {
            for (auto k = static_cast<std::size_t>(merged.indptr[i]);
                 k < static_cast<std::size_t>(merged.indptr[i + 1]); ++k) {
                degree[i] += static_cast<double>(merged.values[k]);
            }
        }
        const ReceivedBlocks received = send_blocks(comm, [&](int dest) {
            return rows_for(dest, slice, slice_owner, first, merged, degree, size);
        });
        for (int s = 0; s < size; ++s) {
            receive_rows(received.from(s), s, parts, size, slice.num_splits, slice.features.cols,
                         slice.num_classes);
        }
    }
    GraphSlice shape;  // what local_part reads of the slice, kept past its release
    shape.num_classes = slice.num_classes;
    shape.features.cols = slice.features.cols;
    shape.num_splits = slice.num_splits;
    if (release != nullptr) {
        *release = GraphSlice{};  // everything is sent: the caller's slice is no longer needed
    }
    for (PartRows& part : parts) {
        assemble(part);
    }
    exchange_halos(parts, partition, comm);
    std::vector<LocalPart> out;
    for (PartRows& rows : parts) {
        out.push_back(local_part(rows, partition, part_offsets, shape, split0));
        rows = PartRows{};
    }
    return out;
}

}  // namespace

std::vector<LocalPart> distribute_parts(const GraphSlice& slice, std::span<const int> slice_owner,
                                        int num_parts, Communicator& comm,
                                        std::size_t batch_bytes) {
    return distribute(slice, nullptr, slice_owner, num_parts, comm, batch_bytes);
}

std::vector<LocalPart> distribute_parts(GraphSlice&& slice, std::span<const int> slice_owner,
                                        int num_parts, Communicator& comm,
                                        std::size_t batch_bytes) {
    return distribute(slice, &slice, slice_owner, num_parts, comm, batch_bytes);
}

}  // namespace strata
