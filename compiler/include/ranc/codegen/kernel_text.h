// Identical kernels, found by their text. A generated unit often holds kernels that differ
// only in names: the sort of two relations of the same types, the same filter over two
// inputs, a reduce of the same aggregates. codegen emits such a kernel once and launches it
// wherever it is needed (CodegenOptions::share_kernels): NVRTC's time is per kernel, and the
// random-program units hold a quarter fewer kernels that way.
#pragma once

#include <string>
#include <string_view>

namespace ranc::codegen {

// The canonical text of kernel `kernel` given `block`, its definition together with what was
// emitted for it since the previous kernel (its functor and state structs): comment lines
// dropped, the names `block` defines (the kernel's own, every `struct` name and every
// `__forceinline__` function's) renamed D0, D1, ... and its parameters (b<buffer>, s<slot>) renamed P0, P1, ... in order of first
// appearance. Names defined elsewhere (another kernel's state struct, a prelude function)
// stay as they are. Two kernels with the same canonical text compute the same function of
// their arguments, passed in the same order.
std::string canonical_kernel_text(std::string_view block, std::string_view kernel);

}  // namespace ranc::codegen
