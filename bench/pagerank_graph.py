#!/usr/bin/env python3
"""Write a seeded scale-free directed graph as an edge list, for bench/pagerank.sh.

    /usr/bin/python3 bench/pagerank_graph.py [--nodes 200000] [--seed 1] OUT

The graph is networkx's scale_free_graph (Bollobas, Borgs, Chayes and Riordan's
directed preferential attachment; Debian's python3-networkx 2.8): 200,000 nodes
give some 434,000 edge lines (about 386,000 distinct edges, with self-loops and
duplicates, which count once). The lines are shuffled with the same seed so that
node numbering owes nothing to the generator's order.
"""
import argparse
import random

import networkx as nx


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("out")
    args = ap.parse_args()
    g = nx.scale_free_graph(args.nodes, seed=args.seed)
    lines = [f"{u} {v}\n" for u, v in g.edges()]
    random.Random(args.seed).shuffle(lines)
    with open(args.out, "w") as f:
        f.write(f"# nx.scale_free_graph({args.nodes}, seed={args.seed}), edges shuffled with the same seed\n")
        f.writelines(lines)


if __name__ == "__main__":
    main()
