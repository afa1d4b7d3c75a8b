#!/usr/bin/python3
"""Time networkx's pagerank call alone on an edge list (a networkx baseline by hand).

    /usr/bin/python3 bench/pagerank_nx.py [--runs 3] [--top 10] [--all OUT] FILE

Loads FILE with nx.read_edgelist(create_using=nx.DiGraph) (not timed: the same
reading as ringactor's parser, a duplicate edge counting once), then times
nx.pagerank(G) with the defaults --runs times with time.perf_counter. Prints
"networkx VERSION", one "seconds S" line per run, then the top nodes as
node<TAB>rank, highest first. With --all, every node's rank goes to OUT as
node<TAB>rank (for bench/pagerank_compare.py).
"""
import argparse
import time

import networkx as nx


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--all", help="write every node's rank to this file")
    ap.add_argument("file")
    args = ap.parse_args()
    g = nx.read_edgelist(args.file, create_using=nx.DiGraph, nodetype=str, comments="#")
    print("networkx", nx.__version__)
    ranks = None
    for _ in range(args.runs):
        start = time.perf_counter()
        ranks = nx.pagerank(g)
        print("seconds", f"{time.perf_counter() - start:.4f}")
    if args.all:
        with open(args.all, "w") as f:
            for node, rank in ranks.items():
                f.write(f"{node}\t{rank!r}\n")
    best = sorted(ranks.items(), key=lambda kv: -kv[1])[: args.top]
    for node, rank in best:
        print(f"{node}\t{rank!r}")


if __name__ == "__main__":
    main()
