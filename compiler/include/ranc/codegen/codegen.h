// Code generation: a checked program becomes an execution plan (rt::Plan), one CUDA
// translation unit plus steps over buffers and size slots (runtime/include/ranc/runtime/plan.h).
//
//   ranc::Program checked = ranc::check(program);
//   ranc::rt::Plan plan = ranc::codegen::generate_plan(checked);
//
// The pipeline (generate_plan runs passes/pass_runner.h): plan_sort_orders (physical
// planning: sort orders, join algorithm) -> fuse_pipelines (kernel groups) -> lower
// (per-operator lowering, ra_ops/<op>/lowering.cpp) -> insert_frees.
#pragma once

#include <string>
#include <vector>

#include "ranc/ir/program.h"
#include "ranc/runtime/plan.h"

namespace ranc::codegen {

class TemplateRegistry;

// Per inner join; semi/anti joins, and keys that do not pack into one 32- or 64-bit
// word, always use sort-merge (rules: passes/plan_sort_orders.h).
enum class JoinAlgorithm : uint8_t {
  Auto,       // sort-merge for now: the hash join measured slower (bench/RESULTS.md)
  SortMerge,  // sort the right input by the keys, binary-search it from each left row
  Hash,       // partitioned hash join (hash_join.cuh): radix-partition both inputs, then
              // build (right) and probe (left) each partition in shared memory
};

// How a reduce with group keys over input not ordered by them groups its rows: Auto
// hashes when the keys pack into one 63-bit word (strings, bools, 4-byte types; see
// ra_ops/reduce/lowering.cpp) and sorts otherwise; Sort always sorts the input first.
enum class GroupBy : uint8_t { Auto, Sort };

struct CodegenOptions {
  JoinAlgorithm join = JoinAlgorithm::Auto;
  // `ranc --group-by=sort`, RANC_GROUP_BY=sort.
  GroupBy group_by = GroupBy::Auto;
  // --join=auto, inner and semi joins whose right input is ordered by the keys as an input
  // declares it (through selects and projects): true merges (or, a semi join, searches) only
  // when the left input is ordered by them too and hashes otherwise, where false binary-searches
  // the right input once per left row (log2(n) dependent loads against one or two for a hash
  // probe). A right input ordered by an operator (a reduce's or a sort's output) is searched
  // either way, and so are a fixpoint's loop-carried relations (loop_body). With
  // `ranc run --observe-order` on TPC-H SF 10 (H100, bench/RESULTS.md, session 36) the hashing
  // undid the search's losses (Q19 1.11 -> 0.74 ms) and kept the merges' wins.
  // RANC_MERGE_ORDERED_PAIRS=0 turns it off. Same results.
  bool merge_ordered_pairs_only = true;
  // The program is a fixpoint's loop body (set by LoweringContext::inline_program): its joins
  // search the relations the loop carries (sorted sets that change every round) rather than
  // hashing them again each round, whatever merge_ordered_pairs_only says.
  bool loop_body = false;
  // A fixpoint that qualifies (ra_ops/fixpoint/resident.h) also gets a resident kernel, which
  // runs its rounds while the deltas are thin (rt::ResidentRounds). RANC_RESIDENT=0 turns it
  // off; the same results.
  bool resident_rounds = true;
  // Target architecture for the tuning table (TuningTable<Arch>); 900 = sm_90.
  int arch = 900;
  // Comments in the source that quote the program (sanitised); off gives source that
  // depends only on the program's structure.
  bool comments = true;
  // Kernel fusion (passes/fuse_pipelines.h); off: every operator's output is
  // materialised (`ranc --no-fusion`, RANC_NO_FUSION=1), with the same results.
  bool fusion = true;
  // Paged-list outputs (passes/plan_paged_edges.h); off: every output is dense
  // (`ranc --no-paged`, RANC_NO_PAGED=1), with the same results.
  bool paged = true;
  // Rows per page of a paged list (a power of two; RANC_PAGE_ROWS overrides). 1024:
  // measured on an H100 (bench/RESULTS.md, page size sweep).
  int page_rows = 1024;
  // A top-k sort (passes/plan_top_k.h) refines its threshold by another pass over the
  // input while the digit bin it falls in holds more than min(this, max(4096, n / 16)) rows
  // (RANC_TOPK_BIN_ROWS overrides; templates/topk.cuh): sorting a bin of 2^20 rows costs
  // about what another pass over a 2^28-row input does. Tests set it small to run every level.
  int64_t top_k_bin_rows = int64_t{1} << 20;
  // An inner sort-merge join of a left input sorted by its keys, whose matches are all
  // kept, writes its output in one pass (JoinMergeAgent, join.cuh). Off
  // (RANC_MERGE_JOIN=expand): per-left-row ranges and offsets are counted and scanned
  // first, then expanded (JoinCountAgent + JoinExpandAgent), with the same results.
  bool one_pass_merge_join = true;
  // The one-pass merge's tiles read their right-row ranges from JoinTileRangeAgent's
  // kernel, which searches every tile's bounds in one wave. Off (RANC_JOIN_RANGES=0): each
  // tile searches its own range (two warps) at its start; the same results. For A/B runs.
  bool join_tile_ranges = true;
  // The one-pass merge's tiles copy the packed join keys of their right-row range into
  // shared memory and search there (JoinMergeAgent's lword/rword hooks), when both sides'
  // key types are equal and pack into one order word. On: the PK-FK join of 2^28 rows
  // took 4.365 ms against 4.546 ms unstaged (H100, session 24, bench/RESULTS.md);
  // RANC_JOIN_STAGE=0 turns it off, with the same results.
  bool stage_join_keys = true;
  // A select written out (its view materialised) stages its kept rows' output values in
  // shared memory (select.cuh's SelectValuesAgent) when a row takes at most 8 bytes, instead
  // of their row numbers, so its write phase reads no input again: select -> select ->
  // project of 2^28 rows took 1.18 ms against 1.43 ms (H100, session 25, bench/RESULTS.md).
  // RANC_SELECT_VALUES=0 turns it off, with the same results.
  bool select_stage_values = true;
  // A reduce without group keys after an inner hash join (through selects and projects)
  // folds the join's matches in its join kernel (join_reduce.cuh's HashJoinReduceAgent)
  // instead of reading them from a paged list: join -> select -> global sum of 2^28 rows
  // took 9.13 ms against 11.95 ms paged (H100, session 25, bench/RESULTS.md).
  // RANC_HASH_FOLD=0 turns it off, with the same results.
  bool fold_hash_joins = true;
  // Private aggregate states per thread of the hash group-by (hash_reduce.cuh): rows of the
  // first this many keys a block meets fold into registers, without atomics; -1 picks by
  // the state's size (4 up to 8-word states, as TPC-H Q1's; fewer beyond), 0 turns them off
  // (RANC_HASH_PRIVATE=N). Same results; float sums in another order.
  int hash_private_states = -1;
  // An inner hash join whose build side keeps more rows than one shared-memory table holds
  // (2048) and at most this many (a table that stays in L2), or at most a quarter of the
  // probe rows kept and 2^26, builds one table in device memory (hash_join.cuh's
  // GlobalJoinTable) and probes it in row order: neither side is partitioned. Larger build
  // sides are radix-partitioned. 0 turns the global table off (RANC_HASH_GLOBAL_ROWS=N).
  // Chosen per run from the rows kept; the same results.
  int64_t hash_join_global_rows = int64_t{1} << 21;
  // Hash tables in device memory built in windows of 2^W slots (W = this, 0 to 30;
  // hash_join.cuh): a semi or anti join's set (without a residual) and an inner join's
  // global table. The build rows' hashes are radix-partitioned on the slot's bits above a
  // window (as many bits as the table's capacity has above 2^W slots, so none for a table
  // of at most 2^W slots) and inserted in that order, each window in L2 while its inserts
  // run, instead of in row order, where each insert into a table larger than L2 is a random
  // access to device memory. -1: inserted in row order (RANC_HASH_BUILD_WINDOW=W). Same
  // results (a join's matches of one key may come in another order). 2^20 slots (4 or 8 MB):
  // a semi join of 2^27 rows into a set of 2^27 keys took 10.1 instead of 15.1 ms, and inner
  // joins' global tables of 2^24 rows 11-17% less (H200, bench/RESULTS.md, session 42).
  int hash_build_window_bits = 20;
  // Only tables of at least 2^this slots are built in windows (chosen per run from the
  // build rows; RANC_HASH_BUILD_WINDOW_MIN=B): a smaller one stays in L2 (50 MB on an
  // H100 or H200) while it is built in row order, and its partition is time for nothing
  // (TPC-H SF 10 joins into sets of up to 2^23 slots took up to 12% longer in windows;
  // global tables of 2^21 slots 11%; session 42). At 2^24 slots the two are even in
  // `ra_bench semijoins 23` and Q8's set of 2^24 slots lost 0.13-0.22 ms in windows (four
  // calls); at 2^25 slots windows win (semi joins 19%, global tables 11-17%; H200, session
  // 43). Tests set 0 to take windows at any size.
  int hash_build_window_min_bits = 25;
  // The hash group-by's room for phase 1's records (hash_reduce.cuh); 0: the grid's blocks
  // times a block table's slots, or for a filtered input (a select fused in front) a
  // sixteenth of its rows when that is more, at most 128 MiB of records (at most the rows). When the records pass it (many
  // groups), the input is sorted and reduced instead (ra_ops/reduce/lowering.cpp). Tests set
  // it small to take both ways on small inputs (RANC_HASH_RECORDS overrides). Same results.
  int64_t hash_records = 0;
  // When phase 1's records pass their room and the kept rows' key words span at most the room
  // and at most this many values, the hash group-by aggregates into a table in device memory
  // indexed by the key word (hash_reduce.cuh's DenseGroupAgent: one atomic merge a row) instead
  // of sorting the input. -1: up to 2^22 values; 0 turns the dense way off
  // (RANC_HASH_DENSE=N). Same results; float sums in another order.
  int64_t hash_dense_slots = -1;
  // ... and only when they span at least this many values: fewer groups meet on fewer slots,
  // whose atomics serialise in L2 (H200, 2^28 rows into 2^14 keys: 6.2 ms the dense way, 5.4
  // sorted; into 2^17 keys 4.7 against 7.1; bench/RESULTS.md, session 49). Tests set 1
  // (RANC_HASH_DENSE_MIN=N).
  int64_t hash_dense_min_slots = int64_t{1} << 16;
  // Spans below that and within this many bytes of shared memory (a state and a byte a value)
  // take the dense way too, each block with a table of its own in shared memory that it merges
  // into the device's at the end (DenseGroupAgent::shared_run), so the rows' atomics stay in the
  // SM. -1: 192 KB on sm_90 (one block an SM; less on GPUs that give a block less), at most
  // 227 KB; 0 turns it off (RANC_HASH_DENSE_SHARED=N bytes).
  int64_t hash_dense_shared_bytes = -1;
  // ... and spans of up to this many such tables' slots, cut into as many ranges of keys,
  // each merged by a share of the blocks that read every row (RANC_HASH_DENSE_PARTS=N, at
  // least 1).
  int64_t hash_dense_shared_parts = 4;
  // The shared-memory tables first take the span of the key words phase 1's records hold (the
  // rows it read before it gave up), rounded up to whole tables, without a pass over the input
  // for its bounds; a kept row outside that span throws the run away and the bounds are found
  // as before (RANC_HASH_DENSE_SPECULATE=0 turns it off). Same results. On an H200, 2^28 rows
  // into 2^12-2^16 keys: 7-12% faster than finding the bounds first (bench/RESULTS.md, session
  // 52, call 1, measured before the shared-memory tables' whole steps went unchecked).
  bool hash_dense_speculate = true;
  // Before phase 1, for inputs of at least hash_dense_early_min_rows rows and states of up to
  // 4 words, not through a fused semi- or anti-join (whose probes wait on its one block an SM):
  // the bounds of a sample of the rows (65536 of them, evenly strided, or all below
  // that; the kept ones count), and when their span is at least hash_dense_early_min_span
  // values and fits the shared-memory tables (with a margin each side), the speculative run
  // over that span (DenseGroupAgent::early_run); when no kept row misses it, phase 1 and its
  // records' sort run over no rows (RANC_HASH_DENSE_EARLY=0 turns it off;
  // RANC_HASH_DENSE_EARLY_ROWS, RANC_HASH_DENSE_EARLY_SPAN). A miss costs the run up to the
  // miss and a read-back. Same results. On an H200, 2^28 rows into 2^10-2^14 keys: 0.69-0.71 ms,
  // against 0.87-1.33 ms without (bench/RESULTS.md, session 53).
  bool hash_dense_early = true;
  int64_t hash_dense_early_min_rows = int64_t{1} << 20;
  // (1: on an H200, 2^28 rows into 2^2 to 2^8 keys took 0.68-0.78 ms the early way, against
  // 1.3-4.0 ms by phase 1; bench/RESULTS.md, session 53)
  int64_t hash_dense_early_min_span = 1;
  // With the early run's sample (hash_dense_early), of 2048 or more distinct keys (hashed bits),
  // spans too wide for the shared-memory tables
  // but within 2048 tables of a power of two of slots (less one of margin; hash_dense_slots, when
  // set, bounds their slots) take the partitioned way
  // (PartitionGroupAgent): the rows counted by part, moved once into their parts (a key
  // offset and a one-row state each), and each part summed by its blocks in shared memory;
  // a row outside the sampled span's parts sends the plan on by phase 1 (a read-back). Off by
  // default until measured in plans (RANC_HASH_PARTITION=1 turns it on; H200, bench/
  // groupby_partition_bench, 2^28 rows into 2^24 keys: 4.07 ms these passes over 8-byte rows,
  // against 7.8 ms for the plan's sort; session 54). Same results.
  bool hash_partitioned = false;
  // The sorted (segmented) reduce copies each tile's rows of the columns it reads into
  // shared memory (coalesced 16-byte copies, reduce.cuh's stage hook) before folding them,
  // up to 32 KB a tile; false reads them in place (RANC_REDUCE_STAGE=0). Same results.
  bool stage_reduce_inputs = true;
  // A staged sorted reduce hands its key's copy back to the agent (reduce.cuh's release
  // hook), and tiles of many small groups store their groups a window at a time from it,
  // block-wide in group order, instead of each thread storing the groups it finishes
  // (RANC_REDUCE_DEFER=0 turns it off). Same results.
  bool defer_reduce_emits = true;
  // __launch_bounds__'s minimum blocks an SM for a sorted reduce kernel that may defer its
  // emits (-1: the default, 48 registers a thread, or 40 for one group key and a state of one
  // word when shared memory has room for six blocks; 0: none; RANC_REDUCE_MIN_BLOCKS).
  int32_t reduce_min_blocks = -1;
  // __launch_bounds__'s minimum blocks an SM for the merge kernel of a set operation whose
  // tuples pack into one order word (0: none, the default; RANC_SETOP_MIN_BLOCKS), for
  // measuring register caps against the tile shape (RANC_TUNE="Merge=...").
  int32_t set_op_min_blocks = 0;
  // A sort whose keys take one word and that carries one other attribute of 8 bytes (an f64,
  // an i64) moves it as the CUB sort's values (SortPairs::value_bytes 8) instead of row ids
  // and a gather through them after the sort: 4 more bytes a row in each radix pass against a
  // random 8-byte read a row (TPC-H Q17's l_quantity by l_partkey: its 60M-row gather took
  // about 2 ms of 5.8 on the H100; with it Q17 took 3.71 ms instead of 5.57, Q18 11.97 against
  // 11.72, whose lineitem rows arrive nearly sorted, so its gather was sequential: bench/RESULTS.md,
  // session 35). RANC_SORT_WIDE_PAYLOAD=0 turns it off. Same results.
  bool sort_wide_payload = true;
  // A union of tuples that pack into one 64-bit order word copies each tile's rows of both
  // inputs' columns into shared memory (cp.async, set_ops.cuh's SetOpStagedAgent) and writes
  // the kept rows from the copies; false stages the order words only and reads the kept rows
  // from global memory, as intersect and difference always do (RANC_SETOP_STAGE=0). Same results.
  bool stage_set_op_inputs = true;
  // NVRTC's --Ofast-compile=mid (`ranc --fast-compile`, RANC_FAST_COMPILE=1): a cold
  // compile takes a quarter to a half of the time and the kernels run slower (fewer
  // optimisations in NVVM and ptxas). For one-off programs on small inputs, where the
  // compile is the run, and for the random-program tests; the results are the same.
  bool fast_compile = false;
  // A kernel whose text equals one the unit has already, up to names (codegen/kernel_text.h),
  // is not emitted again: the first is launched in its place (it is then named after the
  // first operator that needed it). Off: one kernel per launch site, for tests of names.
  bool share_kernels = true;
  // Prefix of every generated kernel name (a fixpoint's loop body and base case are
  // compiled as programs of their own into the enclosing unit: ra_ops/fixpoint).
  std::string kernel_prefix = {};
  // Optional passes to switch off, and the pass after which run_pipeline keeps the plan
  // as text (passes/pass_runner.h).
  std::vector<std::string> disabled_passes = {};
  std::string dump_after = {};
  // The template registry generated instantiations are checked against (skeleton_call.h);
  // null: the one indexed from the built-in templates at build time. Tests pass a registry
  // indexed from modified headers.
  const TemplateRegistry* templates = nullptr;
};

// The plan of a checked program (ranc::check's output). Throws InternalError for an
// unchecked program.
rt::Plan generate_plan(const Program& checked, const CodegenOptions& options = {});
// Just the CUDA source of generate_plan (for `ranc emit`).
std::string emit_cuda(const Program& checked, const CodegenOptions& options = {});
// A readable dump of a plan's buffers, slots and steps (for `ranc explain`).
std::string describe_plan(const rt::Plan& plan);

}  // namespace ranc::codegen
