#!/usr/bin/env python3
"""How soon a kernel's global loads are waited for, from its SASS (no GPU needed).

For each loop of a kernel (a backward branch spanning at least --min-loop instructions), prints
the distance, in instructions, from each global load (LDG) to the first instruction that reads
the register it loads. A loop that keeps its loads in flight (a tile's rows all loaded before
the first is used) shows distances of tens to hundreds; a loop whose loads wait for each other
shows distances of a few instructions (session 51: the speculative dense run's 1-13 against
shared_run's 29-163, which explained its 2.0 ms against 0.73 on an H200).

    ranc emit prog.ra -o prog.cu
    nvcc -cubin -arch=sm_90 -std=c++17 -I templates/include \\
         -I /usr/local/cuda/include/cccl -o prog.cubin prog.cu
    scripts/sass_load_use.py prog.cubin n1_dense_shared_run

cuobjdump comes with the CUDA toolkit; where the toolkit lacks it, the `nvidia-cuda-cuobjdump`
wheel has it (pip download --no-deps nvidia-cuda-cuobjdump; unzip; nvidia/cu13/bin/cuobjdump),
and --cuobjdump names it.
"""
import argparse
import re
import shutil
import subprocess
import sys


def sass(cuobjdump, cubin, kernel):
    text = subprocess.run([cuobjdump, "-sass", "-fun", kernel, cubin], check=True,
                          capture_output=True, text=True).stdout
    out = []
    for line in text.splitlines():
        m = re.match(r"\s+/\*([0-9a-f]+)\*/\s+(.*?)\s*;", line)
        if m:
            out.append((int(m.group(1), 16), m.group(2)))
    return out


def reads(instr, reg):
    """Whether `instr` reads register `reg` (as a source operand or an address)."""
    body = instr.split(None, 1)[1] if instr.startswith("@") else instr
    parts = body.split(None, 1)
    if len(parts) < 2:
        return False
    ops = [p.strip() for p in parts[1].split(",")]
    return any(re.fullmatch(re.escape(reg) + r"(\.reuse)?", p) or
               re.search(r"\[" + re.escape(reg) + r"(\.64)?[\]+ ]", p) for p in ops[1:])


def loops(ins, min_loop):
    found = []
    for addr, instr in ins:
        m = re.search(r"BRA (?:\S+, )?0x([0-9a-f]+)", instr)
        if m:
            target = int(m.group(1), 16)
            if target < addr and (addr - target) // 16 >= min_loop:
                found.append((target, addr))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cubin")
    ap.add_argument("kernel")
    ap.add_argument("--cuobjdump", default=shutil.which("cuobjdump") or "cuobjdump")
    ap.add_argument("--min-loop", type=int, default=200,
                    help="the fewest instructions a loop spans to be reported (default 200)")
    args = ap.parse_args()
    ins = sass(args.cuobjdump, args.cubin, args.kernel)
    if not ins:
        sys.exit(f"no SASS for {args.kernel} in {args.cubin}")
    for lo, hi in loops(ins, args.min_loop):
        body = [(a, t) for a, t in ins if lo <= a <= hi]
        dist = []
        for i, (_, instr) in enumerate(body):
            m = re.search(r"LDG[.\w]* (R\d+),", instr)
            if not m:
                continue
            for j in range(i + 1, len(body)):
                if reads(body[j][1], m.group(1)):
                    dist.append(j - i)
                    break
        if not dist:
            continue
        s = sorted(dist)
        print(f"loop {lo:#x}-{hi:#x} ({len(body)} instructions): {len(dist)} loads, first use "
              f"min {s[0]} median {s[len(s) // 2]}, within 8: {sum(d <= 8 for d in dist)}; "
              f"in order: {dist}")


if __name__ == "__main__":
    main()
