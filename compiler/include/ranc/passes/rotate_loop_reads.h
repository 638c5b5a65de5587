// rotate_loop_reads: one read-back per fixpoint iteration where the body starts by counting
// over its deltas (issue 12: "the size of the delta as the only read-back per iteration").
//
// A semi-naive round of a linear rule (transitive closure, reachability) starts with the
// join of the delta: a count kernel (per delta row its matches and their scan) and a
// read-back of the total, which sizes the join's output; the round ends with the read-back
// of the new delta's size (the loop's condition and the next round's delta size). That is
// two waits a round. The pass runs the next round's count at the end of this one, on the
// new delta, with its row count read from device memory (rt::Launch::device_sizes),
// just before the new delta's size is read back: the two read-backs share one wait
// (Executor's batched read-backs), and the count's total and per-row ranges are carried
// into the next round. The body's own first steps become the loop's prologue
// (rt::LoopBegin::prologue): they run for the first round and when a round starts on a
// piece of split deltas, whose count was not computed ahead.
//
// The head (the body's steps up to and including its first ReadSize, Frees aside) rotates
// when all of these hold, and is left alone otherwise:
//   - it holds only Alloc, SetSize and Launch steps before that ReadSize;
//   - every slot it reads is set in it, or a delta size (a carried slot whose source a
//     ReadSize of element 0 sets later in the body, of a delta the loop's `split` names:
//     the capacity of its columns bounds the device count), or set before the loop and
//     nowhere in the body; a Launch takes a delta size as an argument only as its
//     device size (rt::Launch::device_sizes); no slot it sets is set elsewhere in the body;
//   - every buffer it names is allocated in it, or before the loop and not carried into,
//     or carried into from a buffer the body allocates before the rotated copy's place
//     (the first ReadSize of a delta size it reads).
// Loops with an iteration limit keep their reads (they do not split, so no split delta
// gives the capacity). Runs after lower, before insert_frees.
#pragma once

#include "ranc/runtime/plan.h"

namespace ranc::passes {

// Returns the number of loops rotated.
int rotate_loop_reads(rt::Plan& plan);

}  // namespace ranc::passes
