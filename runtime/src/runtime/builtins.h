// Device-wide primitives compiled by nvcc at build time (builtins.cu): the plan's
// SortPairs, ScanInt64, Gather and Iota steps. Internal to the runtime.
//
// Sorting: integer keys and codegen's packed order words go to cub::DeviceRadixSort
// as they are (sort_words: signed or unsigned 32/64-bit words, either direction, pairs
// or keys only). Bool and float keys (sort_pairs) are first turned into unsigned
// integers whose order is the type's total order (floats: IEEE totalOrder, so -0.0
// sorts before +0.0 and NaNs sort by sign and payload), sorted, then turned back.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace ranc::rt::builtins {

// Key types sorted through an order-preserving transform (integers sort as native words:
// sort_words).
enum class SortKey : uint8_t { U8, F32, F64 };
int sort_key_bytes(SortKey k);

// Scratch needed by sort_pairs: key_scratch of n * sort_key_bytes(k) bytes and CUB
// temporary storage of the returned size.
size_t sort_pairs_temp_bytes(SortKey key, bool descending, int64_t n);
// keys_in may equal keys_out; values_in must differ from values_out.
cudaError_t sort_pairs(SortKey key, bool descending, const void* keys_in, void* keys_out,
                       const uint32_t* values_in, uint32_t* values_out, int64_t n,
                       void* key_scratch, void* temp, size_t temp_bytes, cudaStream_t stream);

// Radix sort of words CUB sorts natively: unsigned order words (codegen's packed sort
// keys) or signed integers (a key column itself). Stable, ascending or descending, on
// bits [begin_bit, end_bit) only (bits outside must be equal in every key: see
// differing_bits), with uint32 values or keys only when values_in is null. The inputs
// are left unchanged; keys_in must differ from keys_out and values_in from values_out.
// Keys-only ascending sorts of unsigned words on all their bits, of 4865 to
// RANC_MERGE_SORT_MAX (2^18) keys, run CUB's merge sort instead (builtins.cu): fewer
// kernels at those sizes, and equal words are equal keys, so stability is moot.
enum class Word : uint8_t { U32, U64, I32, I64 };
int word_bits(Word w);
// Values (when pairs) of value_bytes 4 or 8 each: row ids or a payload column.
size_t sort_words_temp_bytes(Word w, bool descending, bool pairs, int begin_bit, int end_bit,
                             int64_t n, int value_bytes = 4);
cudaError_t sort_words(Word w, bool descending, int begin_bit, int end_bit, const void* keys_in,
                       void* keys_out, const void* values_in, void* values_out, int64_t n,
                       void* temp, size_t temp_bytes, cudaStream_t stream, int value_bytes = 4);
// A stable radix partition of n unsigned key words (U32 or U64) on bits [0, bits), 0 < bits
// <= the word's bits, that moves nv <= kPartitionMaxValues arrays of 4-byte values along (the
// hash join's partitions with all carried columns at once; partition.cu): the same result as
// a stable sort of the keys on those bits with each value array as its values, in one read
// and one write of keys and values per pass of up to 8 bits. Inputs are only read; outputs
// must differ from inputs. n < 2^32. temp: partition_columns_temp_bytes bytes.
constexpr int kPartitionMaxValues = 8;
struct PartitionValues {
  uint32_t* p[kPartitionMaxValues];
};
size_t partition_columns_temp_bytes(Word w, int bits, int nv, int64_t n);
cudaError_t partition_columns(Word w, int bits, const void* keys_in, void* keys_out,
                              const uint32_t* const* values_in, uint32_t* const* values_out, int nv,
                              int64_t n, void* temp, size_t temp_bytes, cudaStream_t stream);
// out[0] (device) = the OR over all keys of key ^ keys[0]: the bits in which keys differ
// (0: all keys are equal); out[1] = 0 when every key is at or after the one before it in the
// order asked (the word's: signed for I32 and I64; non-increasing when descending), else 1.
// One pass over the keys; with samples > 0, over about that many keys evenly spaced instead,
// which gives a subset of those bits and the order of the sample only. out: 2 words.
cudaError_t differing_bits(Word w, const void* keys, int64_t n, unsigned long long* out,
                           cudaStream_t stream, int64_t samples = 0, bool descending = false);

// out[0] = 0, out[i] = in[0] + ... + in[i-1] for i <= n.
size_t scan_int64_temp_bytes(int64_t n);
cudaError_t scan_int64(const int64_t* in, int64_t* out, int64_t n, void* temp, size_t temp_bytes,
                       cudaStream_t stream);

// dst[i] = src[index[i]], elem_size 1, 4 or 8.
cudaError_t gather(const void* src, const uint32_t* index, void* dst, int elem_size, int64_t n,
                   cudaStream_t stream);
// out[i] = i.
cudaError_t iota(uint32_t* out, int64_t n, cudaStream_t stream);

// Tuples packed into one 64-bit word whose unsigned order is their ascending order (a
// fixpoint's resident rounds, rt::ResidentRounds; resident.cu): one i32 (or date), two, or
// one i64; signed values with the sign bit flipped, the first attribute in the high half.
enum class Packing : uint8_t { I32, I32x2, I64 };
int packing_columns(Packing p);
// out = the rows of the sorted full relation's columns merged with n_added sorted words of
// tuples it lacks, as columns (full_rows + added_rows rows). temp: merge_packed_temp_bytes.
size_t merge_packed_temp_bytes(int64_t full_rows, int64_t added_rows);
cudaError_t merge_packed(Packing p, void* const* full_cols, int64_t full_rows,
                         const uint64_t* added_sorted, int64_t added_rows, void* const* out_cols,
                         void* temp, size_t temp_bytes, cudaStream_t stream);
// The n words as columns.
cudaError_t unpack(Packing p, const uint64_t* words, int64_t n, void* const* out_cols,
                   cudaStream_t stream);

}  // namespace ranc::rt::builtins
