#!/usr/bin/python3
"""Make the reference PageRank data that package pagerank's tests compare against.

Run it from anywhere with Debian's networkx 2.8 (the tests' reference):

    apt-get install -y python3-networkx python3-scipy
    /usr/bin/python3 pagerank/testdata/make_reference.py

It writes, beside itself:

  karate.ranks.tsv     nx.pagerank of Zachary's karate club, read from the edge
                       list the Go package embeds (pagerank/karate.edges)
  scalefree.edges      a seeded directed scale-free graph of 2,000 nodes
                       (nx.scale_free_graph: duplicate edges, self-loops and
                       dangling nodes included), nodes named v0 ... v1999, lines
                       shuffled with the same seed
  scalefree.ranks.tsv  nx.pagerank of that graph

Each graph is read back with nx.read_edgelist(..., create_using=nx.DiGraph), as
the Go parser reads it: '#' comments, whitespace-separated "src dst", a
duplicate edge counting once. Each .ranks.tsv has two columns of ranks, in
repr() (round-trip) precision: "tight", nx.pagerank(G, tol=1e-12,
max_iter=1000), and "default", nx.pagerank(G) with the defaults (alpha 0.85,
tol 1e-6, max_iter 100); a comment line gives the number of iterations the
default call made (found as the smallest max_iter that does not raise
PowerIterationFailedConvergence).
"""
import os
import random
import sys

import networkx as nx

HERE = os.path.dirname(os.path.abspath(__file__))
KARATE = os.path.join(HERE, "..", "karate.edges")
SEED = 20240601
NODES = 2000


def iterations(g):
    """The number of iterations nx.pagerank(g) makes with the defaults."""
    for k in range(1, 101):
        try:
            nx.pagerank(g, max_iter=k)
            return k
        except nx.PowerIterationFailedConvergence:
            pass
    raise SystemExit("the default pagerank does not converge")


def write_ranks(g, path, source):
    tight = nx.pagerank(g, tol=1e-12, max_iter=1000)
    default = nx.pagerank(g)
    with open(path, "w") as f:
        f.write(f"# networkx {nx.__version__} pagerank of {source}: {g.number_of_nodes()} nodes, "
                f"{g.number_of_edges()} distinct edges\n")
        f.write("# tight: nx.pagerank(G, tol=1e-12, max_iter=1000); default: nx.pagerank(G)\n")
        f.write(f"# made by make_reference.py; default iterations: {iterations(g)}\n")
        f.write("node\ttight\tdefault\n")
        for node in g:  # first-appearance order, as the Go parser numbers them
            f.write(f"{node}\t{tight[node]!r}\t{default[node]!r}\n")


def read(path):
    return nx.read_edgelist(path, create_using=nx.DiGraph, nodetype=str, comments="#")


def main():
    if not nx.__version__.startswith("2.8"):
        print(f"warning: networkx {nx.__version__}, the reference is 2.8 (Debian's python3-networkx)", file=sys.stderr)

    karate = read(KARATE)
    # The embedded file is the karate club, unweighted, both directions.
    undirected = nx.karate_club_graph()
    assert set(karate.edges()) == {(str(u), str(v)) for u, v in undirected.to_directed().edges()}
    want = nx.pagerank(undirected, weight=None)
    got = nx.pagerank(karate)
    assert max(abs(got[str(n)] - want[n]) for n in undirected) < 1e-15
    write_ranks(karate, os.path.join(HERE, "karate.ranks.tsv"), "Zachary's karate club (pagerank/karate.edges)")

    sf = nx.scale_free_graph(NODES, seed=SEED)
    lines = [f"v{u} v{v}\n" for u, v in sf.edges()]
    random.Random(SEED).shuffle(lines)
    edges = os.path.join(HERE, "scalefree.edges")
    with open(edges, "w") as f:
        f.write(f"# nx.scale_free_graph({NODES}, seed={SEED}) (networkx {nx.__version__}): {len(lines)} lines,\n")
        f.write("# duplicates and self-loops included; shuffled with random.Random(seed). See make_reference.py.\n")
        f.writelines(lines)
    write_ranks(read(edges), os.path.join(HERE, "scalefree.ranks.tsv"), "scalefree.edges")


if __name__ == "__main__":
    main()
