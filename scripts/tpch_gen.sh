#!/usr/bin/env bash
# Generates the eight TPC-H tables as .tbl files with tpchgen-cli (pip install
# tpchgen-cli), reusing OUTDIR when it already holds a complete set for SF.
#
#   scripts/tpch_gen.sh SF OUTDIR        e.g. scripts/tpch_gen.sh 0.01 build/tpch-data/sf0.01
#
# Writes into a temporary directory next to OUTDIR and renames it into place, so a
# killed run or two concurrent runs never leave a half-written OUTDIR. OUTDIR/.sf
# records the scale factor. Exit codes: 0 ok, 1 generation failed, 2 usage error,
# 3 tpchgen-cli not found.
set -euo pipefail

if [[ $# -ne 2 || "$1" == -h || "$1" == --help ]]; then
  echo "usage: $0 SF OUTDIR   (generate TPC-H .tbl files at scale factor SF into OUTDIR)" >&2
  exit 2
fi
sf="$1"
out="$2"
if ! [[ "$sf" =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
  echo "$0: scale factor '$sf' is not a number" >&2
  exit 2
fi

tables=(region nation supplier customer part partsupp orders lineitem)
complete() {
  [[ -f "$out/.sf" && "$(cat "$out/.sf")" == "$sf" ]] || return 1
  for t in "${tables[@]}"; do [[ -s "$out/$t.tbl" ]] || return 1; done
}
if complete; then
  exit 0
fi

gen="${TPCHGEN_CLI:-}"
if [[ -z "$gen" ]]; then
  for c in tpchgen-cli "$HOME/.local/bin/tpchgen-cli"; do
    if command -v "$c" > /dev/null 2>&1; then gen="$c"; break; fi
  done
fi
if [[ -z "$gen" ]]; then
  echo "$0: tpchgen-cli not found; install it with: pip install tpchgen-cli" >&2
  exit 3
fi

parent="$(dirname "$out")"
mkdir -p "$parent"
tmp="$(mktemp -d "$parent/.tpch-gen.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
if ! "$gen" tbl --scale-factor "$sf" --output-dir "$tmp" --no-progress --quiet >&2; then
  echo "$0: tpchgen-cli failed (scale factor $sf)" >&2
  exit 1
fi
for t in "${tables[@]}"; do
  if [[ ! -f "$tmp/$t.tbl" ]]; then
    echo "$0: tpchgen-cli did not write $t.tbl" >&2
    exit 1
  fi
done
echo "$sf" > "$tmp/.sf"
chmod 755 "$tmp"
# Another run may have finished first; keep whichever complete set is there.
if complete; then exit 0; fi
rm -rf "$out"
mv -T "$tmp" "$out" 2>/dev/null || { complete && exit 0; echo "$0: cannot create $out" >&2; exit 1; }
trap - EXIT
