// ranc/templates/paged.cuh: paged-list relations (DESIGN.md section 2; paper 002 section 6.1,
// paper 001's direct output buffer): output of unknown size written in one pass, with no count
// pass, read-back or global gather before it.
//
// Layout of a paged list of capacity C pages of R rows (R = PageRows, a power of two):
//   column k:      one buffer of C * R elements; page p holds its rows at [p * R, p * R + R).
//                  A row handle h = p * R + slot addresses every column directly, so a reader
//                  streams the handles 0 .. pages * R - 1 and keeps those with slot < rows[p]
//                  (paged_keep): the paged list is a view over row handles with a filter.
//   page_rows[C]:  int32 rows used in each page (every claimed page below C has it set).
//   page_next[C]:  int32 next page in list order, -1 after the last page of its producer block.
//   heads[G]:      int32 first page of producer chain b's pages (-1: it wrote nothing), one chain
//                  per block (BlockPageWriter) or per warp (WarpPageWriter); the list order is
//                  chain 0, then chain 1, ...
//   header[4]:     int64, zeroed before the producer runs:
//                    [0] pages claimed (may exceed C: then it is the number of pages needed, and
//                        nothing was written to pages >= C),
//                    [1] rows written (those in pages >= C included).
// Pages are claimed with one atomicAdd per block per round, consecutively, so a block's pages
// fill in order and only the last page of each block is partial. A producer that overflows C
// leaves header[0] = the exact number of pages a rerun needs: the runtime's Launch::regrow
// reallocates and relaunches once (runtime/include/ranc/runtime/plan.h).
#pragma once

#include <ranc/templates/common.cuh>

namespace ranc::tpl {

/// The metadata of a paged list being written (columns are written by the producer's emit hook
/// at the handles the writer hands out).
struct PagedOut {
  int* page_rows;
  int* page_next;
  int* heads;
  i64* header;
  i64 capacity;  // pages
};

/// Does handle h hold a row of the paged list (slot below its page's row count)?
template <int PageRows>
__device__ __forceinline__ bool paged_keep(const int* page_rows, i64 h) {
  static_assert(PageRows > 0 && (PageRows & (PageRows - 1)) == 0, "PageRows must be a power of two");
  return static_cast<i64>(page_rows[h / PageRows]) > (h & (PageRows - 1));
}

/// Block-level page writer: every thread of the block calls reserve() once per round with the
/// number of rows it will write this round; afterwards handle(x) maps the block's x-th row of the
/// round (x in [0, total)) to a row handle, or -1 when its page lies beyond the capacity. finish()
/// closes the block's last page. Threads pass their rows in thread order, so a block's rows keep
/// their order along its chain of pages.
template <int BlockThreads, int PageRows>
struct BlockPageWriter {
  static_assert(PageRows > 0 && (PageRows & (PageRows - 1)) == 0, "PageRows must be a power of two");
  using Scan = BlockScan<i64, BlockThreads>;
  struct TempStorage {
    typename Scan::TempStorage scan;
    i64 cur;         // the page being filled (-1: none yet)
    i64 fill;        // rows in it (R when there is none, so the next row claims one)
    i64 head;        // first page of this block (-1: none)
    i64 rows;        // rows this block wrote
    i64 round_cur;   // cur and fill at the start of the round, the first page claimed in it
    i64 round_fill;
    i64 round_base;
    i64 round_total;
  };

  __device__ __forceinline__ static void init(TempStorage& t) {
    if (threadIdx.x == 0) {
      t.cur = -1;
      t.fill = PageRows;
      t.head = -1;
      t.rows = 0;
    }
    __syncthreads();
  }

  // Reserves `count` rows for this thread; returns the round position of its first row.
  // Claims the pages the round needs with one atomicAdd. Every thread must call it.
  __device__ __forceinline__ static i64 reserve(TempStorage& t, const PagedOut& out, i64 count) {
    i64 first = 0, total = 0;
    __syncthreads();  // the previous round's handles are done; temp.scan may be reused
    Scan(t.scan).ExclusiveSum(count, first, total);
    if (threadIdx.x == 0) {
      t.round_cur = t.cur;
      t.round_fill = t.fill;
      t.round_total = total;
      t.round_base = -1;
      if (total > 0) {
        // Pages beyond the current one: rows at positions fill .. fill + total - 1.
        const i64 fresh = (t.fill + total - 1) / PageRows;
        if (fresh > 0) {
          const i64 base = static_cast<i64>(atomicAdd(reinterpret_cast<u64*>(&out.header[0]),
                                                      static_cast<u64>(fresh)));
          t.round_base = base;
          if (t.cur >= 0 && t.cur < out.capacity) {
            out.page_rows[t.cur] = PageRows;  // full now
            out.page_next[t.cur] = static_cast<int>(base < out.capacity ? base : -1);
          }
          if (t.head < 0) t.head = base;
          t.cur = base + fresh - 1;
        }
        t.fill = t.fill + total - fresh * PageRows;
        t.rows += total;
      }
    }
    __syncthreads();
    // The full pages claimed in this round before its last one: rows and links.
    const i64 fresh = t.round_base < 0 ? 0 : t.cur - t.round_base + 1;
    for (i64 k = threadIdx.x; k + 1 < fresh; k += BlockThreads) {
      const i64 p = t.round_base + k;
      if (p < out.capacity) {
        out.page_rows[p] = PageRows;
        out.page_next[p] = static_cast<int>(p + 1 < out.capacity ? p + 1 : -1);
      }
    }
    return first;
  }

  // The handle of the round's x-th row, or -1 when its page is beyond the capacity.
  __device__ __forceinline__ static i64 handle(const TempStorage& t, const PagedOut& out, i64 x) {
    const i64 q = t.round_fill + x;
    const i64 ord = q / PageRows;
    const i64 page = ord == 0 ? t.round_cur : t.round_base + ord - 1;
    if (page >= out.capacity) return -1;
    return page * PageRows + (q & (PageRows - 1));
  }

  // Closes the block's last page and records its chain; `block` indexes heads.
  __device__ __forceinline__ static void finish(TempStorage& t, const PagedOut& out, i64 block) {
    __syncthreads();
    if (threadIdx.x == 0) {
      if (t.cur >= 0 && t.cur < out.capacity) {
        out.page_rows[t.cur] = static_cast<int>(t.fill);
        out.page_next[t.cur] = -1;
      }
      out.heads[block] = static_cast<int>(t.head < out.capacity ? t.head : -1);
      if (t.rows) atomicAdd(reinterpret_cast<u64*>(&out.header[1]), static_cast<u64>(t.rows));
    }
  }
};

/// Warp-level page writer: the same contract as BlockPageWriter for the 32 lanes of one warp,
/// with no block barrier (a warp scan and one atomicAdd by lane 0 per round that needs pages):
/// for producers whose rounds are warp-uniform but would pay for block-wide synchronisation (the
/// hash join's probe). Each warp owns its chain of pages, so a producer leaves up to one partial
/// page per warp. All 32 lanes must call reserve() together; the state is kept, identical, in
/// every lane's registers.
template <int PageRows>
struct WarpPageWriter {
  static_assert(PageRows > 0 && (PageRows & (PageRows - 1)) == 0, "PageRows must be a power of two");
  i64 cur = -1, fill = PageRows, head = -1, rows = 0;
  i64 round_cur = -1, round_fill = PageRows, round_base = -1;

  __device__ __forceinline__ i64 reserve(const PagedOut& out, i64 count) {
    const int lane = static_cast<int>(threadIdx.x & 31);
    i64 incl = count;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const i64 v = __shfl_up_sync(0xffffffffu, incl, d);
      if (lane >= d) incl += v;
    }
    const i64 total = __shfl_sync(0xffffffffu, incl, 31);
    round_cur = cur;
    round_fill = fill;
    round_base = -1;
    if (total > 0) {
      const i64 fresh = (fill + total - 1) / PageRows;
      if (fresh > 0) {
        i64 base = 0;
        if (lane == 0)
          base = static_cast<i64>(
              atomicAdd(reinterpret_cast<u64*>(&out.header[0]), static_cast<u64>(fresh)));
        base = __shfl_sync(0xffffffffu, base, 0);
        round_base = base;
        if (lane == 0 && cur >= 0 && cur < out.capacity) {
          out.page_rows[cur] = PageRows;
          out.page_next[cur] = static_cast<int>(base < out.capacity ? base : -1);
        }
        for (i64 k = lane; k + 1 < fresh; k += 32) {
          const i64 p = base + k;
          if (p < out.capacity) {
            out.page_rows[p] = PageRows;
            out.page_next[p] = static_cast<int>(p + 1 < out.capacity ? p + 1 : -1);
          }
        }
        if (head < 0) head = base;
        cur = base + fresh - 1;
      }
      fill = fill + total - fresh * PageRows;
      rows += total;
    }
    return incl - count;
  }

  __device__ __forceinline__ i64 handle(const PagedOut& out, i64 x) const {
    const i64 q = round_fill + x;
    const i64 ord = q / PageRows;
    const i64 page = ord == 0 ? round_cur : round_base + ord - 1;
    if (page >= out.capacity) return -1;
    return page * PageRows + (q & (PageRows - 1));
  }

  // Closes the warp's last page; `chain` indexes heads (e.g. block * warps + warp).
  __device__ __forceinline__ void finish(const PagedOut& out, i64 chain) const {
    if ((threadIdx.x & 31) != 0) return;
    if (cur >= 0 && cur < out.capacity) {
      out.page_rows[cur] = static_cast<int>(fill);
      out.page_next[cur] = -1;
    }
    out.heads[chain] = static_cast<int>(head < out.capacity ? head : -1);
    if (rows) atomicAdd(reinterpret_cast<u64*>(&out.header[1]), static_cast<u64>(rows));
  }
};

}  // namespace ranc::tpl
