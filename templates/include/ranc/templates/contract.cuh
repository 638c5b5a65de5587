// ranc/templates/contract.cuh: how a skeleton states its contract with the code generator, in
// C++ that a reader and a tool read alike. tools/template_indexer (Clang libTooling) parses every
// header of this folder in CUDA mode and writes the registry the code generator checks each
// instantiation against (compiler/include/ranc/codegen/skeleton_call.h), so a skeleton and the
// code that instantiates it cannot drift apart unnoticed.
//
// A skeleton is a struct (template) in ranc::tpl with a nested `struct Hooks`; a struct named
// *Agent must be one. Its parts:
//   * Template parameters: a type parameter named Policy is the tuning policy (a TilePolicy from
//     the tuning table, common.cuh); other type parameters are value types (KeyT); non-type
//     parameters are values (SetOp Op, int BlockThreads).
//   * Entry points: the public static member functions that take hooks. A hook is a parameter
//     whose type is a template type parameter of the entry point (`Pred pred`); the other template
//     parameters of an entry point are values given explicitly (run<SelectMode::count_only>) or
//     types deduced from ordinary parameters.
//   * `struct Hooks`: one declaration per hook, named like the entry points' parameter, never
//     defined. A member function declares a callable hook: the generator's functor is called with
//     exactly these parameter types and must return this type. A data member declares an object
//     hook (reduce's `agg`): the generator's object has the member types and functions of the data
//     member's struct. A struct that is declared but never defined (`struct State;`) stands for a
//     type the generator chooses and binds (its aggregate state, its key word).
//   * Shared memory: the nested type TempStorage, or the member template TempStorageT<...> when it
//     depends on a hook's types; the caller declares it `__shared__` and passes it to the entry.
//   * Launch rules: for each entry point E, `static constexpr LaunchRule E_launch{grid, items,
//     block_threads}` (below). The prose launch sequence in each header's comment says the rest
//     (kernel order, buffers).
// The indexer rejects a header whose skeleton breaks these rules (a hook with no declaration, a
// declaration no entry takes, a hook called with a different number of arguments than declared, an
// entry without a launch rule), naming the header, the skeleton and the hook.
#pragma once

namespace ranc::tpl {

/// The grid an entry point needs (tile = Policy::tile_items items).
enum class Grid : int {
  tiles,        // max(1, ceil(items / tile)) blocks; the launch may be skipped when items == 0
  tiles_exact,  // exactly max(1, ceil(items / tile)) blocks, launched also when items == 0: the
                // last block writes a count, or every tile writes its slot of a buffer
  partitions,   // one block per partition (2^bits blocks)
  threads,      // one thread per item, any block size, any grid that covers the items
  one_block,    // a single block
  strided,      // any grid of at least one block: the entry walks the items with a grid stride
                // (the generator bounds the grid; e.g. per-block histograms merged by atomics)
};

/// The launch rule of an entry point: its grid over `items` (the entry's parameters that count
/// them) and the block size it needs (0: any).
struct LaunchRule {
  Grid grid;
  const char* items;
  int block_threads;
};

}  // namespace ranc::tpl
