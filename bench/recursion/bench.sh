#!/usr/bin/env bash
# The recursion benchmark: transitive closure and same generation, ranc (GPU) against
# DuckDB's WITH RECURSIVE on the same host and the same CSV files.
#   bench/recursion/bench.sh RANC_BINARY OUT_DIR
# Needs python3 with numpy and duckdb (PYTHONPATH). Graph sizes: RANC_REC_GRAPHS (a list of
# "name kind args" lines); each DuckDB query stops after RANC_REC_TIMEOUT seconds (60).
set -uo pipefail
RANC=${1:?ranc binary}
OUT=${2:?output dir}
HERE=$(cd "$(dirname "$0")" && pwd)
TIMEOUT=${RANC_REC_TIMEOUT:-60}
mkdir -p "$OUT/data"
GRAPHS=${RANC_REC_GRAPHS:-"chain2k tc chain 2000
grid60 tc grid 60
grid100 tc grid 100
sparse1m tc sparse 1048576 0.9
sparse4m tc sparse 4194304 0.9
tree6k sg tree 6000 3
tree20k sg tree 20000 4"}
LOG="$OUT/recursion.jsonl"
: > "$LOG"
while read -r name query kind args; do
  [ -z "$name" ] && continue
  csv="$OUT/data/$name.csv"
  python3 "$HERE/graphs.py" "$kind" $args "$csv"
  edges=$(($(wc -l < "$csv") - 1))
  input=$([ "$query" = tc ] && echo edges || echo parent)
  # ranc: three runs (the kernel cache makes later runs skip NVRTC); the execute time of each.
  for rep in 1 2 3; do
    line=$("$RANC" run --gpu --time "$HERE/${query}_count.ra" --input "$input=$csv" 2>&1)
    rows=$(echo "$line" | awk 'f {print; exit} /^-+$/ {f=1}')
    exec_s=$(echo "$line" | grep -oE 'execute (\(CPU reference\) )?[0-9.]+ s' | grep -oE '[0-9.]+' | head -1)
    iters=$(echo "$line" | grep -oE '[0-9]+ loop iterations' | grep -oE '^[0-9]+')
    peak=$(echo "$line" | grep -oE 'peak device memory [0-9.]+' | grep -oE '[0-9.]+$')
    echo "{\"system\": \"ranc\", \"query\": \"$query\", \"file\": \"$name\", \"edges\": $edges, \"rows\": ${rows:-null}, \"rep\": $rep, \"execute_s\": ${exec_s:-null}, \"iterations\": ${iters:-null}, \"peak_mib\": ${peak:-null}}" >> "$LOG"
    echo "$line" | grep -E "^time|error" > "$OUT/$name.ranc$rep.txt"
  done
  if timeout "$TIMEOUT" python3 "$HERE/duckdb_recursive.py" "$query" "$csv" 1 > "$OUT/$name.duckdb.json" 2> "$OUT/$name.duckdb.err"; then
    sed "s/\"file\": \"[^\"]*\"/\"file\": \"$name\"/; s/}\$/, \"edges\": $edges}/" "$OUT/$name.duckdb.json" >> "$LOG"
  else
    echo "{\"system\": \"duckdb\", \"query\": \"$query\", \"file\": \"$name\", \"edges\": $edges, \"timeout_s\": $TIMEOUT}" >> "$LOG"
  fi
done <<< "$GRAPHS"
python3 - "$LOG" > "$OUT/recursion.md" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| graph | query | edges | result rows | rounds | ranc execute (best of 3) | peak MiB | DuckDB query | speed-up |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for name in dict.fromkeys(r["file"] for r in rows):
    rs = [r for r in rows if r["file"] == name and r["system"] == "ranc" and r.get("execute_s")]
    d = [r for r in rows if r["file"] == name and r["system"] == "duckdb"]
    best = min(r["execute_s"] for r in rs) if rs else None
    dq = d[0].get("query_s") if d else None
    q = rs[0]["query"] if rs else d[0]["query"]
    n = rs[0]["rows"] if rs else (d[0].get("rows") if d else None)
    e = (rs or d)[0]["edges"]
    dd = f"{dq:.3f} s" if dq is not None else (f"> {d[0]['timeout_s']} s" if d else "-")
    sp = f"{dq / best:.1f}x" if (dq is not None and best) else (f"> {d[0]['timeout_s'] / best:.0f}x" if d and best else "-")
    if d and dq is not None and d[0].get("rows") != n:
        dd += f" (rows {d[0].get('rows')}!)"
    it = rs[0].get("iterations") if rs else None
    pk = rs[0].get("peak_mib") if rs else None
    print(f"| {name} | {q} | {e} | {n} | {it} | {best:.4f} s | {pk} | {dd} | {sp} |" if best else f"| {name} | {q} | {e} | {n} | - | - | - | {dd} | - |")
PY
cat "$OUT/recursion.md"
