#!/usr/bin/env python3
"""Graphs for the recursion benchmark, written as CSV with a `src,dst` header (int32).

  grid K       a K x K grid with edges right and down: long paths (about 2K rounds),
               transitive closure of about (K(K+1)/2)^2 pairs
  sparse N D   a random digraph on N nodes with D*N edges (D < 1: small reachable sets,
               closure about N/(1-D)), fixed seed
  chain N      a path of N nodes: N-1 rounds, closure N(N-1)/2 pairs
  tree N B     parent(child, par) of a B-ary tree on N nodes (same generation input)

Usage: graphs.py KIND ARGS... OUT.csv [--seed S]
"""
import sys

import numpy as np


def write(path, a, b, header="src,dst"):
    with open(path, "w") as f:
        f.write(header + "\n")
        np.savetxt(f, np.stack([a, b], axis=1).astype(np.int64), fmt="%d", delimiter=",")


def main(argv):
    seed = 20261123
    if "--seed" in argv:
        i = argv.index("--seed")
        seed = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    kind, out = argv[1], argv[-1]
    rng = np.random.default_rng(seed)
    if kind == "grid":
        k = int(argv[2])
        idx = np.arange(k * k).reshape(k, k)
        right = (idx[:, :-1].ravel(), idx[:, 1:].ravel())
        down = (idx[:-1, :].ravel(), idx[1:, :].ravel())
        write(out, np.concatenate([right[0], down[0]]), np.concatenate([right[1], down[1]]))
    elif kind == "sparse":
        n, d = int(argv[2]), float(argv[3])
        m = int(n * d)
        a, b = rng.integers(0, n, m), rng.integers(0, n, m)
        keep = a != b
        pairs = np.unique(np.stack([a[keep], b[keep]], axis=1), axis=0)
        write(out, pairs[:, 0], pairs[:, 1])
    elif kind == "chain":
        n = int(argv[2])
        write(out, np.arange(n - 1), np.arange(1, n))
    elif kind == "tree":
        n, b = int(argv[2]), int(argv[3])
        child = np.arange(1, n)
        write(out, child, (child - 1) // b, header="child,par")
    else:
        sys.exit(f"unknown graph kind {kind}")


if __name__ == "__main__":
    main(sys.argv)
