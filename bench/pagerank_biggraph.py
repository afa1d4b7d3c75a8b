#!/usr/bin/python3
"""Write a large seeded directed graph with skewed in-degrees, for bench/pagerank.sh.

    /usr/bin/python3 bench/pagerank_biggraph.py [--nodes 2000000] [--edges 10000000] [--seed 1] OUT

networkx's scale_free_graph takes minutes at millions of nodes, so this uses
numpy (Debian's python3-numpy, PCG64 seeded with --seed): each edge's source is
uniform over the nodes and its target is node floor(N * u**3) for u uniform in
[0, 1) (a heavy-tailed in-degree: a few nodes with tens of thousands of in-links,
most with few or none), node ids then relabelled by a seeded permutation so that
the numbering owes nothing to the degrees. Some 0.7% of the nodes have no
out-edge (dangling); duplicates and self-loops are kept as written (both
ringactor and the igraph script count a duplicate once). The same arguments
give the same file, byte for byte, with the same numpy version.
"""
import argparse

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=2_000_000)
    ap.add_argument("--edges", type=int, default=10_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("out")
    args = ap.parse_args()
    n, m = args.nodes, args.edges
    rng = np.random.default_rng(args.seed)
    perm = rng.permutation(n)
    src = perm[rng.integers(0, n, size=m)]
    dst = perm[np.minimum((n * rng.random(m) ** 3).astype(np.int64), n - 1)]
    with open(args.out, "w") as f:
        f.write(f"# pagerank_biggraph.py --nodes {n} --edges {m} --seed {args.seed} (numpy {np.__version__})\n")
        step = 1_000_000
        for i in range(0, m, step):
            s = src[i : i + step].astype(str)
            d = dst[i : i + step].astype(str)
            f.write("\n".join(np.char.add(np.char.add(s, " "), d).tolist()))
            f.write("\n")


if __name__ == "__main__":
    main()
