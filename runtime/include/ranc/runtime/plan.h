// The execution plan: the contract between the compiler (which produces it) and the
// runtime (which executes it). The runtime never includes compiler headers; all it
// knows about a program is this structure.
//
// A plan is one CUDA translation unit (`source`) plus a straight-line list of steps
// over numbered device buffers and numbered 64-bit size slots:
//   - size slots hold tuple counts; input sizes are set at bind time, others are
//     computed by SetSize from other slots or read back from a device counter;
//   - buffers are device arrays of `elem_size`-byte elements whose element count is
//     a SizeExpr evaluated when the buffer is allocated;
//   - kernel launches take 8-byte arguments only (device pointers and int64 values).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "ranc/data/host_relation.h"

namespace ranc::rt {

using SlotId = int32_t;
using BufferId = int32_t;

// An element count: min(at_most, max(at_least, fn(ceil((constant + sum of terms) /
// divisor)))), where a term is factor * product of slots and fn is the identity, ceil(log2 x)
// (0 for x <= 1) or 2^x (SizeFn). Covers n, n_a * n_b, n + m
// (two terms), fixed sizes, tile counts max(1, ceil((n + m) / tile)) and limits
// min(k, max(0, n - offset)) (constant -offset with `saturate`) without a device round
// trip. A negative sum is an error unless `saturate` is set, when it counts as 0.
// A gated expression (gate >= 0) is 0, bounds and all, unless slot `gate` holds a value in
// [gate_min, gate_max] (gate_max -1: no upper end): a buffer or a launch that one size range
// of an input needs (e.g. the hash join's global table, only for mid-sized build sides).
enum class SizeFn : uint8_t { None, CeilLog2, Pow2 };
struct SizeTerm {
  int64_t factor = 1;
  std::vector<SlotId> slots;  // product of these slot values
};
struct SizeExpr {
  int64_t constant = 0;
  std::vector<SizeTerm> terms;  // sum of terms
  int64_t divisor = 1;          // >= 1; the sum is divided rounding up
  int64_t at_least = 0;         // lower bound of the result
  int64_t at_most = -1;         // upper bound of the result; -1: none
  bool saturate = false;        // a negative sum counts as 0 instead of an error
  SizeFn fn = SizeFn::None;     // applied after the divisor, before the bounds
  SlotId gate = -1;             // >= 0: the result is 0 unless gate_min <= slot <= gate_max
  int64_t gate_min = 0;
  int64_t gate_max = -1;        // -1: no upper end
  static SizeExpr fixed(int64_t c) { return SizeExpr{c, {}}; }
  static SizeExpr slot(SlotId s) { return SizeExpr{0, {SizeTerm{1, {s}}}}; }
  // max(1, ceil((a [+ b]) / tile)): the number of tiles over a (+ b) items.
  static SizeExpr tiles(SlotId a, SlotId b, int64_t tile) {
    SizeExpr e{0, {SizeTerm{1, {a}}}, tile, 1};
    if (b >= 0) e.terms.push_back(SizeTerm{1, {b}});
    return e;
  }
  // This expression gated by slot `s`: 0 unless min <= s <= max (max -1: no upper end).
  SizeExpr gated(SlotId s, int64_t min, int64_t max = -1) const {
    SizeExpr e = *this;
    e.gate = s;
    e.gate_min = min;
    e.gate_max = max;
    return e;
  }
};

struct BufferDecl {
  std::string name;       // for messages ("k3_select.out.l_price")
  int32_t elem_size = 4;  // bytes per element
  SizeExpr count;         // elements, evaluated at allocation
  int32_t node = -1;      // the program node that owns it, for OOM messages
};

// One 8-byte kernel argument.
struct ArgBuffer {
  BufferId buffer;
};
struct ArgSlot {
  SlotId slot;
};
struct ArgConst {
  int64_t value;
};
using KernelArg = std::variant<ArgBuffer, ArgSlot, ArgConst>;

// Steps.
struct Alloc {
  BufferId buffer;
  bool zero = false;  // memset to 0 after allocation
};
struct Free {
  BufferId buffer;
};
struct SetSize {  // slot = evaluated expression (on the host)
  SlotId slot;
  SizeExpr value;
};
// slot = the int64 at element `index` (+ the value of slot `index_slot` when it is set) of
// `buffer`, device to host: e.g. the total at offsets[n] after an exclusive scan. With
// `when`, a step of a path the plan takes only at some sizes: 0 without a read-back (and so
// without a synchronisation) when that slot is 0.
struct ReadSize {
  SlotId slot;
  BufferId buffer;
  int64_t index = 0;
  SlotId index_slot = -1;
  SlotId when = -1;  // >= 0: read only when that slot is non-zero, else `slot` is set to 0
};
// A launch that writes a paged list (templates/paged.cuh) whose capacity is an estimate:
// after it the executor reads the int64 at element `index` of `header` (the pages the list
// needed). When that exceeds slot `capacity`, it sets the slot to it, reallocates the
// `grow` buffers (their counts re-evaluated; they must be arguments of the launch),
// zeroes `header` and launches once more, which must then fit. Running out of memory
// while growing is the usual OutOfMemoryError naming the operator. Slot `needed` receives
// the value at `index` after the last launch (the pages needed, so no separate ReadSize
// of the header follows). The hash reduce uses the same step for its records.
struct Regrow {
  BufferId header = -1;
  int64_t index = 0;
  SlotId capacity = -1;
  SlotId needed = -1;
  std::vector<BufferId> grow;
};
struct DeviceSize {
  SlotId slot = -1;
  int32_t arg = -1;
  bool operator==(const DeviceSize&) const = default;
};
struct Launch {
  std::string kernel;       // extern "C" name in `source`
  SizeExpr items;           // work items; grid = ceil(items / items_per_block)
  int64_t items_per_block;  // items one block handles
  int32_t block_threads;
  int32_t dynamic_smem = 0;
  bool skip_if_empty = true;  // no launch when items == 0
  std::vector<KernelArg> args;
  int32_t node = -1;  // the program node, for error messages
  // The program nodes fused into this kernel, in pipeline order (empty: just `node`),
  // for explain and profiles.
  std::vector<int32_t> nodes = {};
  std::optional<Regrow> regrow = std::nullopt;  // set for producers of paged lists
  // When slot alt_when (>= 0) holds a nonzero value, alt_kernel runs instead of `kernel`,
  // with the same grid, arguments and shared memory: two specialisations of one step chosen
  // by a size (the hash join's global-table kernel beside its partitioned one).
  std::string alt_kernel = {};
  SlotId alt_when = -1;
  // Row counts the kernel can take from device memory: for each (slot, arg), argument `arg`
  // (an ArgConst 0, a null `const long long*`) may be replaced by the buffer whose element 0
  // holds the count of slot `slot`, and the slot's arguments and sizes then only bound it
  // (the grid covers them, rows past the count do nothing). Set by lowerings for passes that
  // move a launch before the count is read back (rotate_loop_reads); the executor does not
  // look at it.
  std::vector<DeviceSize> device_sizes = {};
  // Whole waves: a grid of more blocks than the GPU holds at once (this kernel's occupancy at
  // block_threads and dynamic_smem, times the SMs) is rounded to the nearest whole number of
  // such waves, so no last, partial wave leaves SMs idle. Only for kernels whose blocks stride
  // over their work (any grid covers it; blocks past it do nothing): the hash group-by's phase
  // 1, whose grid of 512 blocks was 1.29 waves on the H100 at 3 blocks an SM.
  bool whole_waves = false;
  // One wave at most: the grid is cut to the blocks the GPU holds at once (as whole_waves
  // computes them), for kernels whose blocks stride over their work and pay a fixed cost each
  // (the hash group-by's shared-memory dense table: a clearing and a flush a block).
  bool one_wave = false;
};
// Built-in device-wide primitives, compiled at build time with nvcc.
// Stable sort of (key, value) pairs, ascending or descending: keys of elem size 4 or 8
// of the given scalar type, values uint32 (row ids or a 4-byte payload column) or, with
// value_bytes 8, an 8-byte payload column.
// `encoded`: the keys are already unsigned words whose unsigned order is the wanted one
// (packed sort keys, codegen's sort); key_type then only gives their width (I32: 32-bit
// words, I64: 64-bit). values_in and values_out may both be -1: a keys-only sort.
// Integer and encoded keys are sorted on the bits in which they differ only (the
// executor finds them with one pass over the keys).
// `radix_bits` (a slot; -1: none) makes it a radix partition of encoded keys, ascending: a
// stable sort on bits [0, value) of the words only (0 bits: a copy), e.g. the hash join's
// partitions (templates/hash_join.cuh). Stable and deterministic: partitions of the same
// keys with different values permute the values alike. `more_values` (radix partitions
// only): further 4-byte value arrays (in, out) that the same permutation moves; the executor
// sorts each with the keys again (CUB), or with RANC_PARTITION_COLUMNS=1 moves them all
// with the keys in one pass per 8 bits (builtins::partition_columns).
struct SortPairs {
  BufferId keys_in, keys_out, values_in, values_out;
  Type key_type;
  bool descending = false;
  SizeExpr count;
  int32_t node = -1;
  bool encoded = false;
  SlotId radix_bits = -1;
  std::vector<std::pair<BufferId, BufferId>> more_values = {};
  // Bytes of each value: 4, or 8 for an 8-byte payload column moved by the sort itself
  // (codegen's sort with one other attribute of 8 bytes; native and encoded keys only, not
  // radix partitions).
  int32_t value_bytes = 4;
};
// Exclusive prefix sum over int64: out[i] = sum(in[0..i)), out[count] = total.
struct ScanInt64 {
  BufferId in, out;
  SizeExpr count;
  int32_t node = -1;
};
// dst[i] = src[index[i]] for i < count; elem_size 1, 4 or 8; index uint32.
struct Gather {
  BufferId src, index, dst;
  int32_t elem_size;
  SizeExpr count;
  int32_t node = -1;
};
// Fill index buffer with 0..count-1 (uint32).
struct Iota {
  BufferId buffer;
  SizeExpr count;
};
// Raise ExecutionError when the int32 at element 0 of `buffer` is non-zero
// (kernels set error flags, e.g. integer division by zero).
struct CheckFlag {
  BufferId buffer;
  std::string message;
  int32_t node = -1;
};
// dst[0..count) = src[0..count) (device to device; both buffers have elem_size bytes
// per element).
struct CopyBuffer {
  BufferId src, dst;
  SizeExpr count;
  int32_t node = -1;
};
// Loops (the fixpoint operator's semi-naive iterations). The steps after a LoopBegin up to
// the LoopEnd with the same `loop` id are the body; it runs at least once. Loops do not
// nest. A buffer allocated in the body must be freed in it or carried by the LoopEnd.
//
// `prologue` > 0: the body's first `prologue` steps compute state from the deltas (e.g. a
// join's per-row match counts and their total) that the end of each iteration computes
// again for the next one and carries (rotate_loop_reads). They run when the loop starts
// and whenever an iteration starts on rows other than the previous iteration's new tuples
// (a piece of split deltas); other iterations start after them. Buffers allocated in the
// prologue may be carried into (and freed in the body before the carry).
struct LoopBegin {
  int32_t loop = 0;
  int32_t node = -1;
  int32_t prologue = 0;
};
// The end of one iteration. First the carries, in order: a carried buffer `dst` is freed
// and takes over the memory (and element count) of `src`, which becomes unallocated as if
// freed, without its memory being released; a carried slot `dst` takes the value of slot
// `src`. Then `iterations` (a slot; -1: none) is set to the number of iterations run so
// far. The loop ends when every slot in `until_zero` is 0, or when `max_iterations` > 0
// iterations have run; otherwise execution continues with the first step of the body.
//
// `split` names the loop's semi-naive deltas (each a carried relation: its column
// buffers, carry destinations, and its size slot, a carried slot). With it, an iteration
// that runs out of device memory (or past a size limit of a step) does not fail the
// program while a delta has rows to split: the executor frees what the body allocated in
// that iteration, queues the second half of every delta's rows and runs the body again on
// the first half. Each later iteration takes the next queued piece; the new tuples an
// iteration derives (the carried deltas) join the back of the queue, and the loop ends
// when the queue is empty. The deltas are sorted relations and a contiguous run of rows
// of one is too, so the body reads a piece as it reads a whole delta. This is sound and
// complete for monotone rules (a fixpoint): every tuple is in exactly one piece, and
// when the last-processed piece holding some rule's body tuples runs, the other body
// tuples are already in the full relations. Only a loop without `max_iterations` may
// split (the pieces' iterations are not the rounds an iteration limit counts).
struct SplitDelta {
  std::vector<BufferId> columns;
  SlotId size = -1;
};
// Resident rounds of a loop (a fixpoint of one recursive relation whose rules read it once,
// through selects, projects and joins with sorted loop invariants: ra_ops/fixpoint/
// resident.cpp). While an iteration leaves a delta of at most RANC_RESIDENT_ROWS rows
// (default kDefaultEnterRows), the executor runs the rounds that follow in launches of
// `kernel` instead of the body (templates/resident.cuh): a prologue launch (slot `prologue`
// 1) inserts the full relation's words into a hash set (`table`; for a large full relation
// the rounds binary-search it instead) and measures the invariants' key runs; then one
// cooperative launch, of a block for about RANC_RESIDENT_BLOCK_ROWS delta rows (default
// kDefaultBlockRows), runs the rounds. Each block keeps the new tuples it finds (those the
// set takes) in its shared memory, evaluates the rules on them in the next round, and
// copies them to `words` at the place the round's barrier (one atomic a block) gives it:
// each round's new tuples are a contiguous range of `words`. The kernel stops at the
// fixpoint, at the loop's iteration limit, or before a round whose delta passes `max_rows`,
// whose candidates might not fit the room left, or that some block could not hold; the
// executor then reads the control block back once, merges the words into the full
// relation (sorted), makes the last round's words the delta, counts the rounds as
// iterations and continues the loop (its prologue first). Same fixpoint, same iterations.
// Without an iteration limit (slot `rounds` kWorklist) the blocks run no rounds: each block's
// warps take its tuples from a queue in shared memory, up to 32 at once, and push the new
// ones back (the worklist), appending the tuples they take to `words` by one atomic a batch;
// `max_rows` then bounds a block's queue, and the room passed or a block whose queue cannot
// hold one more tuple's candidates stops every block, and the tuples still queued are
// copied after the found ones (control words kFound, kDeltaBegin, kWords): the delta. Same
// fixpoint; the rounds counted are the deepest tuple's (the round that would have found it,
// plus one). A block then takes about kWorklistBlockRows delta rows, and `words` has
// kAsyncSlackBuffers x blocks x kLocalRows words past the room (resident.cuh's async_slack).
// `words`, `table` and `control` are declared buffers the executor allocates for a launch
// and frees after it; `room`, `mask`, `rounds`, `max_rows`, `search_full` and `prologue`
// are slots it sets: the words' capacity, the table's slots - 1 (a power of two, at least
// four times what it holds), the iterations left, the largest delta a round may take, whether
// the full relation is searched, and whether the launch is the prologue.
enum class Packing : uint8_t { I32, I32x2, I64 };  // builtins::Packing
struct ResidentRounds {
  static constexpr int32_t kBlockThreads = 1024;
  static constexpr int64_t kDefaultEnterRows = int64_t{1} << 15;
  // The delta rows a block takes when a launch starts (RANC_RESIDENT_BLOCK_ROWS): rounds, and
  // the worklist (whose blocks never wait for each other: more of them, fewer tuples an SM).
  static constexpr int64_t kDefaultBlockRows = 256;
  static constexpr int64_t kWorklistBlockRows = 4;
  // A block's shared memory for its tuples: two buffers of kLocalRows words (templates/
  // resident.cuh's kLocalRows), and as many tags for the worklist's queue (the buffers).
  static constexpr int32_t kLocalRows = 4096;
  static constexpr int32_t kLocalBytes = 2 * 2 * kLocalRows * 8;
  // The words past the room, in buffers of kLocalRows a block (resident.cuh's async_slack).
  static constexpr int64_t kAsyncSlackBuffers = 5;
  // Slot `rounds` exactly this: the blocks run a worklist instead of rounds (resident.cuh's
  // kWorklist).
  static constexpr int64_t kWorklist = INT64_MAX;
  std::string kernel;
  std::vector<KernelArg> args;
  Packing packing = Packing::I32x2;
  std::vector<BufferId> full, delta;  // the carried relations (carry destinations)
  SlotId full_size = -1, delta_size = -1;
  BufferId words = -1, table = -1, control = -1;
  SlotId room = -1, mask = -1, rounds = -1, max_rows = -1;
  // 1: a candidate is looked up in the full relation by binary search (a large one), 0: the
  // kernel inserts the full relation's words into the set first (a small one).
  SlotId search_full = -1;
  // 1: the launch is the prologue (it fills the set and measures the invariants' key runs,
  // and runs no round); 0: it runs the rounds.
  SlotId prologue = -1;
  // The control block's long longs (templates/resident.cuh): kControlHeader, then one a join.
  static constexpr int32_t kControlHeader = 32;
  int32_t control_words = kControlHeader;
};
struct LoopEnd {
  int32_t loop = 0;
  std::vector<std::pair<BufferId, BufferId>> carry_buffers;  // (dst, src)
  std::vector<std::pair<SlotId, SlotId>> carry_slots;        // (dst, src)
  std::vector<SlotId> until_zero;
  int64_t max_iterations = 0;  // 0: no limit
  SlotId iterations = -1;
  int32_t node = -1;
  std::vector<SplitDelta> split;  // empty: an iteration that runs out of memory fails
  std::optional<ResidentRounds> resident = std::nullopt;
};
using Step = std::variant<Alloc, Free, SetSize, ReadSize, Launch, SortPairs, ScanInt64, Gather,
                          Iota, CheckFlag, CopyBuffer, LoopBegin, LoopEnd>;

// Calls buffer(BufferId&) for every buffer a step names and slot(SlotId&) for every size slot
// (also those in its SizeExprs), on a Step or a const Step: passes that collect or renumber
// them (insert_frees, codegen's inlining) go through this one list of fields, so a field
// added to a step is added here once. Unset optional ids (-1) are skipped.
template <class S, class FB, class FS>
void for_each_buffer_and_slot(S& step, FB&& buffer, FS&& slot) {
  auto expr = [&](auto& e) {
    for (auto& t : e.terms)
      for (auto& s : t.slots) slot(s);
    if (e.gate >= 0) slot(e.gate);
  };
  std::visit(
      [&](auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Alloc> || std::is_same_v<T, Free>) {
          buffer(x.buffer);
        } else if constexpr (std::is_same_v<T, SetSize>) {
          slot(x.slot);
          expr(x.value);
        } else if constexpr (std::is_same_v<T, ReadSize>) {
          slot(x.slot);
          buffer(x.buffer);
          if (x.index_slot >= 0) slot(x.index_slot);
          if (x.when >= 0) slot(x.when);
        } else if constexpr (std::is_same_v<T, Launch>) {
          expr(x.items);
          for (auto& arg : x.args) {
            if (auto* b = std::get_if<ArgBuffer>(&arg)) buffer(b->buffer);
            if (auto* s = std::get_if<ArgSlot>(&arg)) slot(s->slot);
          }
          if (x.alt_when >= 0) slot(x.alt_when);
          for (auto& d : x.device_sizes) slot(d.slot);
          if (x.regrow) {
            buffer(x.regrow->header);
            slot(x.regrow->capacity);
            slot(x.regrow->needed);
            for (auto& g : x.regrow->grow) buffer(g);
          }
        } else if constexpr (std::is_same_v<T, SortPairs>) {
          buffer(x.keys_in);
          buffer(x.keys_out);
          if (x.values_in >= 0) buffer(x.values_in);
          if (x.values_out >= 0) buffer(x.values_out);
          expr(x.count);
          if (x.radix_bits >= 0) slot(x.radix_bits);
          for (auto& [in, out] : x.more_values) {
            buffer(in);
            buffer(out);
          }
        } else if constexpr (std::is_same_v<T, ScanInt64>) {
          buffer(x.in);
          buffer(x.out);
          expr(x.count);
        } else if constexpr (std::is_same_v<T, Gather>) {
          buffer(x.src);
          buffer(x.index);
          buffer(x.dst);
          expr(x.count);
        } else if constexpr (std::is_same_v<T, Iota>) {
          buffer(x.buffer);
          expr(x.count);
        } else if constexpr (std::is_same_v<T, CheckFlag>) {
          buffer(x.buffer);
        } else if constexpr (std::is_same_v<T, CopyBuffer>) {
          buffer(x.src);
          buffer(x.dst);
          expr(x.count);
        } else if constexpr (std::is_same_v<T, LoopEnd>) {
          for (auto& [dst, src] : x.carry_buffers) {
            buffer(dst);
            buffer(src);
          }
          for (auto& [dst, src] : x.carry_slots) {
            slot(dst);
            slot(src);
          }
          for (auto& s : x.until_zero) slot(s);
          if (x.iterations >= 0) slot(x.iterations);
          for (auto& d : x.split) {
            for (auto& b : d.columns) buffer(b);
            slot(d.size);
          }
          if (x.resident) {
            auto& r = *x.resident;
            for (auto& arg : r.args) {
              if (auto* b = std::get_if<ArgBuffer>(&arg)) buffer(b->buffer);
              if (auto* s = std::get_if<ArgSlot>(&arg)) slot(s->slot);
            }
            for (auto& b : r.full) buffer(b);
            for (auto& b : r.delta) buffer(b);
            slot(r.full_size);
            slot(r.delta_size);
            buffer(r.words);
            buffer(r.table);
            buffer(r.control);
            slot(r.room);
            slot(r.mask);
            slot(r.rounds);
            slot(r.max_rows);
            slot(r.search_full);
            slot(r.prologue);
          }
        } else {
          static_assert(std::is_same_v<T, LoopBegin>, "for_each_buffer_and_slot: a step is missing");
        }
      },
      step);
}

// String handling: at bind time the runtime merges the dictionaries of every string
// column of every input into one order-preserving dictionary for the run, adds the
// strings the program makes (ValueCode texts, the substrings of every string for each
// SubstringMap) and recodes the inputs, so codes compare across relations. String
// literals and patterns in the program are turned into codes here, after that merge, so
// the generated source does not depend on the data (and stays cacheable). Outputs carry
// the run's dictionary.
struct DictParam {
  enum class Kind : uint8_t {
    EqCode,        // slot = code of text, or -1 when absent
    LowerBound,    // slot = first code whose string >= text
    UpperBound,    // slot = first code whose string > text
    PrefixEnd,     // slot = first code whose string does not start with text and is > it
    LikeMask,      // buffer (uint8, one per code, at least 1 element) = matches LIKE pattern
    ValueCode,     // slot = code of text, which the run's dictionary is made to hold (a
                   // string value the program produces, such as a NULL's '')
    SubstringMap,  // buffer (int32, one per code, at least 1 element) = the code of
                   // utf8_substring(string, from, length), which the dictionary holds
  };
  Kind kind;
  std::string text;
  SlotId slot = -1;
  BufferId mask = -1;        // LikeMask, SubstringMap: the buffer the runtime fills
  int64_t from = 0, length = 0;  // SubstringMap
};

// A relation at the plan's boundary: one buffer per attribute and a size slot. A nullable
// attribute also has a validity buffer (one byte per row, 1 = a value; a NULL row's
// value holds the type's zero): validity[i] >= 0 exactly for the schema's nullable ones
// (validity is empty when none is).
struct PlanRelation {
  std::string name;
  Schema schema;
  std::vector<BufferId> columns;
  SlotId size;
  std::vector<BufferId> validity = {};
  BufferId validity_of(size_t i) const { return i < validity.size() ? validity[i] : -1; }
};

struct Plan {
  std::string source;  // one CUDA translation unit
  std::vector<std::string> nvrtc_options;
  std::vector<std::string> kernels;  // every extern "C" kernel name in source
  int32_t num_slots = 0;
  std::vector<BufferDecl> buffers;
  std::vector<PlanRelation> inputs;  // buffers of inputs are bound, not allocated
  std::vector<PlanRelation> outputs;
  std::vector<DictParam> dict_params;  // evaluated after binding, before the steps
  std::vector<Step> steps;
  // Node id -> readable operator name ("n4 join"), for errors.
  std::vector<std::string> node_names;
};

}  // namespace ranc::rt
