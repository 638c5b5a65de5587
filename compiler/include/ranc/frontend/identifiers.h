// The only ways text a user wrote may reach generated CUDA source: identifiers that
// passed is_valid_identifier (emitted with a prefix by mangle_identifier) and
// string bytes escaped by cuda_string_literal. The .ra front end enforces the
// identifier rule on every name; code generation must use these functions.
#pragma once

#include <string>
#include <string_view>

namespace ranc {

// True for [A-Za-z_][A-Za-z0-9_]* of at most kMaxIdentifierLength (128) bytes.
bool is_valid_identifier(std::string_view name);

// A C/C++/CUDA string literal, quotes included, whose value is exactly `bytes`
// (any bytes, NUL included). Only [A-Za-z0-9_ .,:-] pass through; every other byte
// becomes a three-digit octal escape (\042), which can never absorb a following
// digit, close the literal, start a comment or form a trigraph.
std::string cuda_string_literal(std::string_view bytes);

// prefix + name for use as a C++ identifier in generated code (the prefix keeps
// user names apart from C++ keywords, CUDA built-ins and macros). Throws
// InternalError when name is not a valid identifier or prefix is not made of
// [A-Za-z0-9_] (so a bug upstream cannot turn into injected code).
std::string mangle_identifier(std::string_view prefix, std::string_view name);

}  // namespace ranc
