#!/usr/bin/python3
"""Time python-igraph's PageRank (PRPACK, in C) on an edge list, for bench/pagerank.sh.

    /usr/bin/python3 bench/pagerank_igraph.py [--runs 1] [--top 10] [--all OUT] FILE

FILE is an NCOL edge list without comment lines ("src dst" a line; the script
strips bench/pagerank.sh's header line into a copy first). Loads it with
Graph.Read_Ncol(names=True, directed=True) and merges duplicate edges
(simplify(multiple=True, loops=False): networkx's DiGraph and ringactor count a
duplicate once and keep self-loops), then times g.pagerank(damping=0.85,
implementation="prpack") --runs times with time.perf_counter. Prints
"igraph VERSION", "load S" (the read and simplify), one "seconds S" line per
call, then the top nodes as node<TAB>rank, highest first. Run once as a whole
process it is the igraph user's program. With --all, every node's rank goes
to OUT as node<TAB>rank (untimed; for bench/pagerank_compare.py).
"""
import argparse
import time

import igraph


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--all", help="write every node's rank to this file")
    ap.add_argument("file")
    args = ap.parse_args()
    start = time.perf_counter()
    g = igraph.Graph.Read_Ncol(args.file, names=True, directed=True, weights=False)
    g.simplify(multiple=True, loops=False)
    print("igraph", igraph.__version__)
    print("load", f"{time.perf_counter() - start:.4f}")
    ranks = None
    for _ in range(args.runs):
        start = time.perf_counter()
        ranks = g.pagerank(damping=0.85, implementation="prpack")
        print("seconds", f"{time.perf_counter() - start:.4f}")
    names = g.vs["name"]
    if args.all:
        with open(args.all, "w") as f:
            for name, rank in zip(names, ranks):
                f.write(f"{name}\t{rank!r}\n")
    best = sorted(range(len(ranks)), key=lambda i: (-ranks[i], i))[: args.top]
    for i in best:
        print(f"{names[i]}\t{ranks[i]!r}")


if __name__ == "__main__":
    main()
