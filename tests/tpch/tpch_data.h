// TPC-H data for tests: generates a scale factor's .tbl files once into a cache
// in the build directory (scripts/tpch_gen.sh, which runs tpchgen-cli) and
// loads them with the TPC-H schemas of ranc/io/tpch.h.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "ranc/data/host_relation.h"

namespace ranc::testing {

// The cache directory (RANC_TPCH_CACHE_DIR at build time, or the environment
// variable of that name); data for SF lives in <cache>/sf<SF>.
std::string tpch_cache_dir();

// The directory holding the eight .tbl files at scale factor sf ("0.01"),
// generating them when missing. nullopt, with the reason in *why, when they
// cannot be generated (tpchgen-cli not installed, ...); tests then skip.
std::optional<std::string> tpch_data_dir(const std::string& sf = "0.01",
                                         std::string* why = nullptr);

using TpchTables = std::map<std::string, HostRelation, std::less<>>;
// All eight tables loaded from dir (see ranc::tpch::load_tables).
TpchTables load_tpch(const std::string& dir);

}  // namespace ranc::testing
