// ranc/templates/set_ops.cuh: union / intersect / difference (and merge-all) of two sorted inputs.
//
// Preconditions: A and B are each sorted by the whole tuple, in the same order; duplicates within
// an input are allowed (the DupA/DupB hooks recognise them, so no distinct pass is needed first).
// Output: sorted and duplicate-free (for SetOp::merge_all: the stable merge of both inputs,
// duplicates kept). One pass per tile: merge path + order-preserving compaction with decoupled
// look-back (TileCompactor), no count-then-write.
//
// With A-first tie-breaking, a row A[i] is merged when B[0..j) < A[i] <= B[j], and a row B[j] when
// A[0..i) <= B[j] < A[i]. So A[i] is the first copy of its value when !DupA(i); it is in B when
// B[j] == A[i]; and B[j] is new to the union when !DupB(j) and A[i-1] != B[j].
//
// Hooks: SetOpAgent::Hooks (cmp, dup_a, dup_b, emit).
//
// Kernels, in order on one stream (P = merge policy, tiles = max(1, ceil((na + nb) / P::tile_items))):
//   1. init:       init_tile_state(tile_state, tiles)            items tiles, threads 256,
//                                                                 grid max(1, ceil(tiles / 256))
//   2. partition:  MergePathAgent<P>::partitions(na, nb, cmp, partitions)   (merge_path.cuh)
//                  items tiles + 1, threads 256, grid ceil((tiles + 1) / 256)
//   3. set op:     SetOpAgent<P, Op>::run(temp, na, nb, partitions, cmp, dup_a, dup_b, emit, tile_state,
//                                         out_count)
//                  threads P::block_threads, grid = tiles (exactly)
// Buffers: tile_state tile_state_elems(tiles) int64; partitions tiles + 1 int64; out_count 1 int64.
// Output columns sized by the upper bound: union/merge_all na + nb, intersect min(na, nb),
// difference na. The exact size is *out_count.
//
// SetOpKeysAgent<P, Op>: the same, for tuples whose order packs into one 64-bit word (the sort's
// packed keys, sort_layout.h: unsigned order = tuple order, equal words = equal tuples). Each tile
// first loads the words of its A rows [a0 - 1, a1) and B rows [b0 - 1, b1] (coalesced) into
// shared memory; the merge-path search, the serial merge and the duplicate and membership tests
// then read shared memory instead of chasing rows through the comparator (a chain of dependent
// global loads per item). The kernels and buffers are those above (the partition kernel's cmp
// compares the words); run(temp, na, nb, partitions, key_a, key_b, emit, tile_state, out_count,
// order_flag_a, order_flag_b).
//   Hooks: SetOpKeysAgent::Hooks (key_a, key_b, emit).
//   order_flag_a / order_flag_b (int32, zeroed; null: the input is known to be ordered): the
//   input's declared order is verified here instead of by a separate pass: a tile sets the flag
//   when two adjacent staged words of that input decrease, or when the partitions do not
//   advance (a1 < a0 or b1 < b0, which only unordered input produces; such a tile keeps
//   nothing). With monotone partitions the tiles' staged ranges cover every adjacent pair.
//
// SetOpStagedAgent<P, Op>: the same tiles, for packed tuples whose columns the hooks read by row
// number. Each tile first calls the stage hook with its rows of A ([a0 - 1, a1)) and of B
// ([b0 - 1, b1]), which starts copying those rows of every column into shared memory
// (stage_rows_async: cp.async, 16 bytes a copy, all of them in flight at once; A's and B's rows
// of a column share one array, stage_pair_offset apart) and points the hooks at the copies. The
// merge then reads each word from the copies (key_a / key_b), and the kept rows are written
// from them, not read again from global memory. The compactor's storage is separate from the
// copies (int tags relative to the tile). Kernels, buffers and the order check as above;
// run(temp, na, nb, partitions, key_a, key_b, emit, tile_state, out_count, order_flag_a,
// order_flag_b, stage).
//   Hooks: SetOpStagedAgent::Hooks (key_a, key_b, emit, stage).
#pragma once

#include <ranc/templates/merge_path.cuh>

namespace ranc::tpl {

enum class SetOp { set_union, set_intersect, set_difference, merge_all };

/// The rows of A and B one tile of the keyed skeletons merges: outputs [diag0, diag1) are A's
/// rows [a0, a1) and B's [b0, b1); it reads A's [sa0, a1) and B's [sb0, sb1) (the row before
/// each range, and B row b1 for the membership test of A's last rows). Partitions that do not
/// advance (a1 < a0 or b1 < b0), which only unordered input produces, set both order flags
/// (null: not checked) and leave the tile empty.
struct SetOpTile {
  i64 diag0, diag1, a0, a1, b0, b1, sa0, sb0, sb1;
  __device__ __forceinline__ static SetOpTile make(i64 tile_items, i64 na, i64 nb, const i64* partitions,
                                                   int* order_flag_a, int* order_flag_b) {
    SetOpTile t;
    const i64 tile = tile_index();
    t.diag0 = min64(tile * tile_items, na + nb);
    t.diag1 = min64(t.diag0 + tile_items, na + nb);
    t.a0 = partitions[tile];
    t.a1 = partitions[tile + 1];
    t.b0 = t.diag0 - t.a0;
    t.b1 = t.diag1 - t.a1;
    if (t.a1 < t.a0 || t.b1 < t.b0) {  // only unordered input: report it, keep nothing
      if (threadIdx.x == 0) {
        if (order_flag_a != nullptr) *order_flag_a = 1;
        if (order_flag_b != nullptr) *order_flag_b = 1;
      }
      t.a1 = t.a0;
      t.b1 = t.b0;
      t.diag1 = t.diag0;
    }
    t.sa0 = max64(0, t.a0 - 1);
    t.sb0 = max64(0, t.b0 - 1);
    t.sb1 = min64(nb, t.b1 + 1);
    return t;
  }
};

/// The merge of one tile of the keyed skeletons on indices relative to the tile: x in A is row
/// a0 + x, y in B is row b0 + y, and pa(x) / pb(y) are their order words, readable for x in
/// [-1, la_t) when prev_a (a0 > 0; else from 0) and for y in [-1, lbs) when prev_b (else from
/// 0), where lbs counts the rows from b0 the tile reads (B row b1 too when it exists: the
/// membership test of A's last rows reads it). Thread t merges the tile's outputs t * kItems
/// onwards (tile_count outputs in all) and sets keep[k] and tags[k] (x, or ~y for B's rows).
/// kCarry: keep the head words in registers (for words that cost several loads to read).
template <int kItems, SetOp Op, bool kCarry, class PA, class PB>
__device__ __forceinline__ void set_op_merge_tile(PA pa, PB pb, int la_t, int lb_t, int lbs, bool prev_a,
                                                  bool prev_b, int tile_count, bool (&keep)[kItems],
                                                  int (&tags)[kItems]) {
  const int d = min(static_cast<int>(threadIdx.x) * kItems, tile_count);
  int lo = d - lb_t > 0 ? d - lb_t : 0, hi = d < la_t ? d : la_t;
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (pa(mid) <= pb(d - 1 - mid)) lo = mid + 1; else hi = mid;
  }
  int x = lo, y = d - lo;
  const int count = min(kItems, tile_count - d);
  if constexpr (!kCarry) {
    // Each test reads its words again: cheap when they are staged words (one shared-memory
    // load each), and five fewer registers than carrying them (48: 5 blocks an SM on sm_90).
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      keep[k] = false;
      tags[k] = 0;
      if (k >= count) continue;
      const bool take_a = x < la_t && (y >= lb_t || pa(x) <= pb(y));
      if (take_a) {
        if constexpr (Op == SetOp::merge_all) {
          keep[k] = true;
        } else {
          const u64 w = pa(x);
          bool kept = !((x > 0 || prev_a) && pa(x - 1) == w);
          if (Op != SetOp::set_union && kept) {
            const bool in_b = y < lbs && pb(y) == w;
            kept = Op == SetOp::set_intersect ? in_b : !in_b;
          }
          keep[k] = kept;
        }
        tags[k] = x++;
      } else {
        if constexpr (Op == SetOp::set_union) {
          const u64 w = pb(y);
          keep[k] = !((y > 0 || prev_b) && pb(y - 1) == w) && !((x > 0 || prev_a) && pa(x - 1) == w);
        } else {
          keep[k] = Op == SetOp::merge_all;
        }
        tags[k] = ~y++;
      }
    }
    return;
  }
  // kCarry: the words at the heads of both inputs and the last word of each before them ride in
  // registers: each step reads one new word (the head it advances), not the three or four
  // its tests look at.
  u64 wa = x < la_t ? pa(x) : 0, wb = y < lbs ? pb(y) : 0;
  bool has_last_a = x > 0 || prev_a, has_last_b = y > 0 || prev_b;
  u64 last_a = has_last_a ? pa(x - 1) : 0;
  u64 last_b = 0;
  if constexpr (Op == SetOp::set_union) {
    if (has_last_b) last_b = pb(y - 1);
  }
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    keep[k] = false;
    tags[k] = 0;
    if (k >= count) continue;
    const bool take_a = x < la_t && (y >= lb_t || wa <= wb);
    if (take_a) {  // A's first copy of a value, kept by its membership in B (union: always)
      if constexpr (Op == SetOp::merge_all) {
        keep[k] = true;
      } else {
        bool kept = !(has_last_a && last_a == wa);
        if (Op != SetOp::set_union && kept) {
          const bool in_b = y < lbs && wb == wa;
          kept = Op == SetOp::set_intersect ? in_b : !in_b;
        }
        keep[k] = kept;
      }
      last_a = wa;
      has_last_a = true;
      tags[k] = x++;
      if (x < la_t) wa = pa(x);
    } else {  // B's first copy of a value not in A: kept by union (merge_all keeps every row)
      if constexpr (Op == SetOp::set_union) {
        keep[k] = !(has_last_b && last_b == wb) && !(has_last_a && last_a == wb);
        last_b = wb;
        has_last_b = true;
      } else {
        keep[k] = Op == SetOp::merge_all;
      }
      tags[k] = ~y++;
      if (y < lbs) wb = pb(y);
    }
  }
}

/// The declared-order check of a tile's staged rows: A's la words wa(0 .. la - 1) and B's lb
/// words wb(0 .. lb - 1) (each from its first staged row, the one before the tile's when it has
/// one). Each thread checks a contiguous run of each input, carrying the previous word (one
/// word read a row, for words assembled from several staged columns), and sets *flag_a /
/// *flag_b (null: that input is not checked) when two adjacent words decrease.
template <int kThreads, class W>
__device__ __forceinline__ bool set_op_run_decreases(int n, W w) {
  const int per = (n + kThreads - 1) / kThreads, t = static_cast<int>(threadIdx.x);
  const int r0 = max(1, t * per), r1 = min(n, (t + 1) * per);
  bool bad = false;
  if (r0 < r1) {
    u64 prev = w(r0 - 1);
    for (int r = r0; r < r1; ++r) {
      const u64 cur = w(r);
      bad = bad || prev > cur;
      prev = cur;
    }
  }
  return bad;
}
template <int kThreads, class WA, class WB>
__device__ __forceinline__ void set_op_check_order(int la, int lb, WA wa, WB wb, int* flag_a, int* flag_b) {
  if (flag_a != nullptr && set_op_run_decreases<kThreads>(la, wa)) *flag_a = 1;
  if (flag_b != nullptr && set_op_run_decreases<kThreads>(lb, wb)) *flag_b = 1;
}

template <class Policy, SetOp Op>
struct SetOpAgent {
  static constexpr int kItems = Policy::items_per_thread;
  using Compactor = TileCompactor<Policy>;
  using TempStorage = typename Compactor::TempStorage;

  /// The hooks of run() (contract.cuh).
  struct Hooks {
    __device__ int cmp(i64 i, i64 j) const;  // A row i vs B row j, whole tuple: <0, 0, >0
    __device__ bool dup_a(i64 i) const;      // i > 0 and A row i equals A row i - 1
    __device__ bool dup_b(i64 j) const;      // j > 0 and B row j equals B row j - 1 (false when
                                             // the input is known to be duplicate-free)
    // Copy A row `row` (from_b false) or B row `row` (from_b true) to output row out_row.
    __device__ void emit(bool from_b, i64 row, i64 out_row) const;
  };
  /// Exactly `tiles` blocks, also for empty inputs: the last block writes *out_count.
  static constexpr LaunchRule run_launch{Grid::tiles_exact, "na + nb", Policy::block_threads};

  template <class Cmp, class DupA, class DupB, class Emit>
  __device__ __forceinline__ static void run(TempStorage& temp, i64 na, i64 nb, const i64* partitions,
                                             Cmp cmp, DupA dup_a, DupB dup_b, Emit emit, void* tile_state,
                                             i64* out_count) {
    TileState state = make_tile_state(tile_state);
    bool keep[kItems];
    i64 tags[kItems];
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      keep[k] = false;
      tags[k] = 0;
    }
    MergeTile<Policy>::merge(tile_index(), na, nb, partitions, cmp, [&](int k, bool from_b, i64 i, i64 j) {
      bool kept;
      if (!from_b) {
        if constexpr (Op == SetOp::merge_all) {
          kept = true;
        } else {
          kept = !dup_a(i);
          if (Op != SetOp::set_union && kept) {
            const bool in_b = j < nb && cmp(i, j) == 0;
            kept = Op == SetOp::set_intersect ? in_b : !in_b;
          }
        }
        tags[k] = i;
      } else {
        if constexpr (Op == SetOp::set_union) {
          kept = !dup_b(j) && !(i > 0 && cmp(i - 1, j) == 0);
        } else {
          kept = Op == SetOp::merge_all;
        }
        tags[k] = ~j;  // negative tags mark B rows
      }
      keep[k] = kept;
    });
    Compactor::run(temp, keep, tags, state, out_count, [&](i64 tag, i64 o) {
      if (tag >= 0) emit(false, tag, o); else emit(true, ~tag, o);
    });
  }
};

template <class Policy, SetOp Op>
struct SetOpKeysAgent {
  static constexpr int kThreads = Policy::block_threads;
  static constexpr int kItems = Policy::items_per_thread;
  static constexpr int kTile = Policy::tile_items;
  // Intersect and difference merge on int indices relative to the tile, with int tags (48
  // registers instead of 64 on sm_90: 5 blocks an SM instead of 4, 7% faster on the H100);
  // union and merge_all measured 10% slower so (54 registers, still 4 blocks; 73 with i64
  // relative indices) and keep absolute i64 rows and tags.
  static constexpr bool kRelative = Op == SetOp::set_intersect || Op == SetOp::set_difference;
  using Compactor = TileCompactor<Policy, conditional_t<kRelative, int, i64>>;
  struct TempStorage {
    union {
      u64 keys[kTile + 3];  // A[a0 - 1, a1), then B[b0 - 1, b1] (clipped to the inputs)
      typename Compactor::TempStorage compact;
    } u;
  };

  /// The hooks of run() (contract.cuh).
  struct Hooks {
    __device__ u64 key_a(i64 i) const;  // A row i's order word
    __device__ u64 key_b(i64 j) const;  // B row j's order word
    // Copy A row `row` (from_b false) or B row `row` (from_b true) to output row out_row.
    __device__ void emit(bool from_b, i64 row, i64 out_row) const;
  };
  /// Exactly `tiles` blocks, also for empty inputs: the last block writes *out_count.
  static constexpr LaunchRule run_launch{Grid::tiles_exact, "na + nb", Policy::block_threads};

  template <class KeyA, class KeyB, class Emit>
  __device__ __forceinline__ static void run(TempStorage& temp, i64 na, i64 nb, const i64* partitions,
                                             KeyA key_a, KeyB key_b, Emit emit, void* tile_state,
                                             i64* out_count, int* order_flag_a, int* order_flag_b) {
    TileState state = make_tile_state(tile_state);
    const SetOpTile rows = SetOpTile::make(kTile, na, nb, partitions, order_flag_a, order_flag_b);
    const i64 diag0 = rows.diag0, diag1 = rows.diag1, a0 = rows.a0, a1 = rows.a1, b0 = rows.b0, b1 = rows.b1;
    const i64 sa0 = rows.sa0, sb0 = rows.sb0, sb1 = rows.sb1;
    const int la = static_cast<int>(a1 - sa0), lb = static_cast<int>(max64(0, sb1 - sb0));
    u64* ka = temp.u.keys;
    u64* kb = ka + la;
    for (int t = threadIdx.x; t < la + lb; t += kThreads) {
      if (t < la) ka[t] = key_a(sa0 + t);
      else kb[t - la] = key_b(sb0 + (t - la));
    }
    __syncthreads();
    if (order_flag_a != nullptr || order_flag_b != nullptr) {
      // Interleaved pairs (t - 1, t): with one shared-memory load a word, this measured faster
      // here than set_op_check_order's runs (H100, 2^28: intersect 3.65 against 3.88 ms).
      bool bad_a = false, bad_b = false;
      for (int t = threadIdx.x + 1; t < la + lb; t += kThreads) {
        if (t < la) bad_a = bad_a || ka[t - 1] > ka[t];
        else if (t > la) bad_b = bad_b || kb[t - la - 1] > kb[t - la];
      }
      if (bad_a && order_flag_a != nullptr) *order_flag_a = 1;
      if (bad_b && order_flag_b != nullptr) *order_flag_b = 1;
    }
    if constexpr (kRelative) {
      // The merge runs on indices relative to the tile (ints; the tags too; set_op_merge_tile).
      const int la_t = static_cast<int>(a1 - a0), lb_t = static_cast<int>(b1 - b0);
      const int lbs = static_cast<int>(sb1 - b0);
      const u64* pa = ka + (a0 - sa0);
      const u64* pb = kb + (b0 - sb0);
      const bool prev_a = a0 > 0;

      bool keep[kItems];
      int tags[kItems];
      set_op_merge_tile<kItems, Op, false>([&](int x) { return pa[x]; }, [&](int y) { return pb[y]; }, la_t, lb_t,
                                    lbs, prev_a, b0 > 0, static_cast<int>(diag1 - diag0), keep, tags);
      __syncthreads();  // the words are dead: the compactor reuses their space
      Compactor::run(temp.u.compact, keep, tags, state, out_count, [&](int tag, i64 o) {
        if (tag >= 0) emit(false, a0 + tag, o); else emit(true, b0 + ~tag, o);
      });
    } else {
      auto A = [&](i64 i) { return ka[i - sa0]; };  // i in [a0 - 1, a1), i >= 0
      auto B = [&](i64 j) { return kb[j - sb0]; };  // j in [b0 - 1, b1], 0 <= j < nb

      const i64 d = min64(static_cast<i64>(threadIdx.x) * kItems, diag1 - diag0);
      i64 lo = max64(0, d - (b1 - b0)), hi = min64(d, a1 - a0);
      while (lo < hi) {
        const i64 mid = lo + ((hi - lo) >> 1);
        if (A(a0 + mid) <= B(b0 + d - 1 - mid)) lo = mid + 1; else hi = mid;
      }
      i64 i = a0 + lo, j = b0 + (d - lo);
      const int count = static_cast<int>(min64(kItems, diag1 - diag0 - d));
      bool keep[kItems];
      i64 tags[kItems];
#pragma unroll
      for (int k = 0; k < kItems; ++k) {
        keep[k] = false;
        tags[k] = 0;
        if (k >= count) continue;
        const bool take_a = i < a1 && (j >= b1 || A(i) <= B(j));
        if (take_a) {
          const u64 w = A(i);
          if constexpr (Op == SetOp::merge_all) {
            keep[k] = true;
          } else {
            bool kept = !(i > 0 && A(i - 1) == w);
            if (Op != SetOp::set_union && kept) {
              const bool in_b = j < nb && B(j) == w;
              kept = Op == SetOp::set_intersect ? in_b : !in_b;
            }
            keep[k] = kept;
          }
          tags[k] = i++;
        } else {
          const u64 w = B(j);
          if constexpr (Op == SetOp::set_union) {
            keep[k] = !(j > 0 && B(j - 1) == w) && !(i > 0 && A(i - 1) == w);
          } else {
            keep[k] = Op == SetOp::merge_all;
          }
          tags[k] = ~j++;  // negative tags mark B rows
        }
      }
      __syncthreads();  // the words are dead: the compactor reuses their space
      Compactor::run(temp.u.compact, keep, tags, state, out_count, [&](i64 tag, i64 o) {
        if (tag >= 0) emit(false, tag, o); else emit(true, ~tag, o);
      });
    }
  }
};

template <class Policy, SetOp Op>
struct SetOpStagedAgent {
  static constexpr int kThreads = Policy::block_threads;
  static constexpr int kItems = Policy::items_per_thread;
  static constexpr int kTile = Policy::tile_items;
  using Compactor = TileCompactor<Policy, int>;
  using TempStorage = typename Compactor::TempStorage;
  /// The rows of A and B one tile reads, together: [a0 - 1, a1) and [b0 - 1, b1].
  static constexpr i64 max_stage_rows = kTile + 3;

  /// The hooks of run() (contract.cuh).
  struct Hooks {
    __device__ u64 key_a(i64 i) const;  // A row i's order word
    __device__ u64 key_b(i64 j) const;  // B row j's order word
    // Copy A row `row` (from_b false) or B row `row` (from_b true) to output row out_row.
    __device__ void emit(bool from_b, i64 row, i64 out_row) const;
    // Called by every thread before any other hook with the rows the tile's hooks read: A's
    // [alo, ahi) and B's [blo, bhi) (at most max_stage_rows together). It may start copying
    // those rows of the columns the hooks read into shared memory (stage_rows_async; A's and
    // B's rows of a column in one array, stage_pair_offset apart) and point the hooks at the
    // copies; it returns whether it did (then the agent waits for the copies and synchronises).
    __device__ bool stage(i64 alo, i64 ahi, i64 blo, i64 bhi);
  };
  /// Exactly `tiles` blocks, also for empty inputs: the last block writes *out_count.
  static constexpr LaunchRule run_launch{Grid::tiles_exact, "na + nb", Policy::block_threads};

  template <class KeyA, class KeyB, class Emit, class Stage>
  __device__ __forceinline__ static void run(TempStorage& temp, i64 na, i64 nb, const i64* partitions,
                                             KeyA key_a, KeyB key_b, Emit emit, void* tile_state,
                                             i64* out_count, int* order_flag_a, int* order_flag_b,
                                             Stage stage) {
    TileState state = make_tile_state(tile_state);
    const SetOpTile rows = SetOpTile::make(kTile, na, nb, partitions, order_flag_a, order_flag_b);
    const i64 diag0 = rows.diag0, diag1 = rows.diag1, a0 = rows.a0, a1 = rows.a1, b0 = rows.b0, b1 = rows.b1;
    const i64 sa0 = rows.sa0, sb0 = rows.sb0, sb1 = rows.sb1;
    if (stage(sa0, a1, sb0, max64(sb0, sb1))) {
      copy_async_wait();
      __syncthreads();
    }
    const int la = static_cast<int>(a1 - sa0), lb = static_cast<int>(max64(0, sb1 - sb0));
    set_op_check_order<kThreads>(la, lb, [&](int t) { return key_a(sa0 + t); },
                                 [&](int t) { return key_b(sb0 + t); }, order_flag_a, order_flag_b);
    bool keep[kItems];
    int tags[kItems];
    set_op_merge_tile<kItems, Op, true>([&](int x) { return key_a(a0 + x); }, [&](int y) { return key_b(b0 + y); },
                                  static_cast<int>(a1 - a0), static_cast<int>(b1 - b0),
                                  static_cast<int>(sb1 - b0), a0 > 0, b0 > 0, static_cast<int>(diag1 - diag0),
                                  keep, tags);
    // The staged rows stay: the compactor's storage is its own, and emit reads the copies.
    Compactor::run(temp, keep, tags, state, out_count, [&](int tag, i64 o) {
      if (tag >= 0) emit(false, a0 + tag, o); else emit(true, b0 + ~tag, o);
    });
  }
};

}  // namespace ranc::tpl
