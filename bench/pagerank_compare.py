#!/usr/bin/python3
"""Compare two PageRank vectors with each other and with a tight reference, for bench/pagerank.sh.

    /usr/bin/python3 bench/pagerank_compare.py [--top 100] REF A B

Each file is node<TAB>rank a line, every node once (ringactor pagerank's
output without --top; bench/pagerank_igraph.py --all). REF is a tighter
solution (ringactor --tol-abs 1e-16) that stands in for the exact PageRank.
Prints the L1 distance of A and of B from REF and of A from B, then whether
the top --top nodes of A and B (highest rank first, ties broken by node id)
are the same nodes in the same order; where they are not, each differing
position is listed with both ranks and whether REF ranks the two nodes
within 1e-12 of each other (a tie that neither order can be faulted for).
Exits 1 if the node sets differ or the top lists differ other than by ties.
"""
import argparse
import sys


def load(path):
    ranks = {}
    with open(path) as f:
        for line in f:
            node, rank = line.rstrip("\n").split("\t")
            ranks[node] = float(rank)
    return ranks


def l1(a, b):
    return sum(abs(a[k] - b[k]) for k in a)


def top(r, k):
    return sorted(r, key=lambda n: (-r[n], n))[:k]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=100)
    ap.add_argument("--names", default="ringactor,igraph")
    ap.add_argument("ref")
    ap.add_argument("a")
    ap.add_argument("b")
    args = ap.parse_args()
    na, nb = args.names.split(",")
    ref, a, b = load(args.ref), load(args.a), load(args.b)
    if set(a) != set(ref) or set(b) != set(ref):
        print(f"node sets differ: ref {len(ref)}, {na} {len(a)}, {nb} {len(b)}")
        return 1
    print(f"L1 over all {len(ref)} nodes: {na} vs reference {l1(a, ref):.3g}, "
          f"{nb} vs reference {l1(b, ref):.3g}, {na} vs {nb} {l1(a, b):.3g}")
    ta, tb = top(a, args.top), top(b, args.top)
    if ta == tb:
        print(f"top {args.top}: {na} and {nb} the same nodes in the same order")
        return 0
    status, ties = 0, 0
    for i, (x, y) in enumerate(zip(ta, tb)):
        if x == y:
            continue
        tie = abs(ref[x] - ref[y]) < 1e-12
        ties += tie
        status |= not tie
        print(f"  position {i + 1}: {na} {x} ({a[x]!r}), {nb} {y} ({b[y]!r}); "
              f"reference {ref[x]!r} vs {ref[y]!r}{' (a tie)' if tie else ''}")
    if status:
        print(f"top {args.top}: {na} and {nb} DIFFER")
    else:
        print(f"top {args.top}: {na} and {nb} the same but for {ties} positions of tied nodes")
    return status


if __name__ == "__main__":
    sys.exit(main())
