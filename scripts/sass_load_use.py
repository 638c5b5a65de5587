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

Kernels whose loads are not in a long loop (a tile's straight-line code: set operations, joins,
a declared-order check) take --each: every global load of the kernel in address order, with its
distance to the first read of any register it loads, and cp.async copies (LDGSTS) and waits
(DEPBAR, BAR) as markers. With --nvdisasm and a CUBIN compiled with -lineinfo, each line also
names the source line it comes from (the generated .cu or a template; session 52 found the
declared-order check's serialized pairs so).

    scripts/sass_load_use.py prog.cubin n1_check_order --each --nvdisasm PATH/nvdisasm

cuobjdump comes with the CUDA toolkit; where the toolkit lacks it, the `nvidia-cuda-cuobjdump`
wheel has it (pip download --no-deps nvidia-cuda-cuobjdump; unzip; nvidia/cu13/bin/cuobjdump),
and --cuobjdump names it (nvdisasm likewise: nvidia-cuda-nvdisasm).
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


def lines_of(nvdisasm, cubin, kernel):
    """{address: "file:line"} for the kernel's instructions (nvdisasm -g; empty without -lineinfo)."""
    text = subprocess.run([nvdisasm, "-g", "-c", cubin], check=True, capture_output=True,
                          text=True).stdout
    head = f"//--------------------- .text.{kernel} "
    if head not in text:
        return {}
    section = text.split(head, 1)[1].split("//---------------------", 1)[0]
    where, cur = {}, "?"
    for line in section.splitlines():
        m = re.search(r'//## File "([^"]+)", line (\d+)', line)
        if m:
            cur = f"{m.group(1).split('/')[-1]}:{m.group(2)}"
            continue
        m = re.match(r"\s+/\*([0-9a-f]+)\*/", line)
        if m:
            where[int(m.group(1), 16)] = cur
    return where


def regs_of(operand):
    """The registers an operand names: R4.64 is R4 and R5, R8.128 R8 to R11."""
    found = set()
    for r, width in re.findall(r"\bR(\d+)(\.64|\.128)?", operand):
        found |= {int(r) + k for k in range({"": 1, ".64": 2, ".128": 4}[width or ""])}
    return found


def sources(instr):
    """The registers `instr` reads: its source operands and its address registers (a store's,
    an atomic's or a reduction's first operand is read, not written)."""
    body = instr.split(None, 1)[1] if instr.startswith("@") else instr
    parts = body.split(None, 1)
    if len(parts) < 2:
        return set()
    ops = [p.strip() for p in parts[1].split(",")]
    if parts[0].startswith(("ST", "RED")):
        read = ops
    else:
        read = ops[1:] + re.findall(r"\[[^\]]*\]", ops[0])
    found = set()
    for o in read:
        found |= regs_of(o)
    return found


def loaded(instr):
    """The registers a global load (LDG) writes, else None."""
    m = re.search(r"(LDG[.\w]*) (R\d+),", instr)
    if not m:
        return None
    width = 4 if ".128" in m.group(1) else 2 if ".64" in m.group(1) else 1
    return {int(m.group(2)[1:]) + k for k in range(width)}


def first_use(body, i):
    """Instructions from body[i] (a load) to the first that reads what it loaded, or None."""
    regs = loaded(body[i][1])
    return next((j - i for j in range(i + 1, len(body)) if sources(body[j][1]) & regs), None)


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
    ap.add_argument("--each", action="store_true",
                    help="every global load of the kernel instead of the loops' summaries")
    ap.add_argument("--nvdisasm", help="nvdisasm, to name each load's source line (--each)")
    args = ap.parse_args()
    ins = sass(args.cuobjdump, args.cubin, args.kernel)
    if not ins:
        sys.exit(f"no SASS for {args.kernel} in {args.cubin}")
    if args.each:
        where = lines_of(args.nvdisasm, args.cubin, args.kernel) if args.nvdisasm else {}
        for i, (addr, instr) in enumerate(ins):
            if loaded(instr):
                use = first_use(ins, i)
                print(f"{addr:#07x}  {instr[:60]:60s} use+{use if use is not None else '-':<4} "
                      f"{where.get(addr, '')}")
            elif re.search(r"\b(LDGSTS|LDGDEPBAR|DEPBAR|BAR\.SYNC)", instr):
                print(f"{addr:#07x}  {instr[:60]:60s}          {where.get(addr, '')}")
        return
    for lo, hi in loops(ins, args.min_loop):
        body = [(a, t) for a, t in ins if lo <= a <= hi]
        dist = [d for i, (_, instr) in enumerate(body) if loaded(instr)
                for d in [first_use(body, i)] if d is not None]
        if not dist:
            continue
        s = sorted(dist)
        print(f"loop {lo:#x}-{hi:#x} ({len(body)} instructions): {len(dist)} loads, first use "
              f"min {s[0]} median {s[len(s) // 2]}, within 8: {sum(d <= 8 for d in dist)}; "
              f"in order: {dist}")


if __name__ == "__main__":
    main()
