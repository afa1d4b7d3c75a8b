#!/usr/bin/env bash
# Benchmark `ringactor pagerank` against python-igraph's PRPACK at the same
# accuracy, on two graphs, in one run on one machine:
#
#   bash bench/pagerank.sh   # needs Debian's python3-igraph; python3-networkx
#                            # and python3-numpy to generate the graphs
#
# The graphs (generated once, seeded, into /tmp):
#   200k  nx.scale_free_graph(200000, seed=1), ~434,000 edge lines
#         (bench/pagerank_graph.py, a few seconds)
#   2m    2,000,000 nodes, 10,000,000 edge lines, heavy-tailed in-degrees
#         (bench/pagerank_biggraph.py, numpy, ~15 s)
#
# Same accuracy: PRPACK solves to its own tolerance (its ranks measured
# here within some 1e-13 to 1e-12 in L1 of the reference),
# where ringactor's default (networkx's rule, the L1 change below N x tol)
# loosens with N: 4 iterations on the 200k graph, 1 on the 2m one. So
# ringactor runs with an absolute L1 tolerance, `--tol-abs $TOL_ABS
# --max-iter 1000`: its ranks then within 5.67 x TOL_ABS of the exact
# PageRank in L1, the default 1e-14 putting them at least as close as
# PRPACK's. Each size first ranks every node untimed three ways: ringactor
# at --tol-abs 1e-16 (the reference), ringactor at TOL_ABS and igraph;
# bench/pagerank_compare.py prints the L1 distance of each from the
# reference and from each other, and whether the top $TOP nodes
# agree (differences between tied nodes are named as such). Then RUNS
# alternated whole processes of each, printing the top 10:
#   ringactor  ringactor pagerank --edges FILE --tol-abs T --max-iter 1000 --top 10 --timings
#   igraph     bench/pagerank_igraph.py FILE (Read_Ncol, simplify, g.pagerank PRPACK)
# and the medians of their wall and CPU (user + sys) times, of ringactor's
# iterate phase and iterations, and of igraph's read and its pagerank() call
# (timed inside its process). /proc/loadavg is printed before and after each
# size: figures taken at a load above the core count are mostly waiting.
#
# Environment: RUNS (alternated runs per size, default 5), SIZES (default
# "200k 2m"), TOL_ABS (default 1e-14), TOP (default 100), RINGACTOR_BIN (a
# prebuilt binary; default: built into a temporary directory), PY (a python
# with igraph, default /usr/bin/python3), GRAPH_DIR
# (where the graphs are kept, default /tmp).
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PY:-/usr/bin/python3} # Debian's python, with Debian's igraph 0.10, networkx 2.8, numpy
RUNS=${RUNS:-5}
SIZES=${SIZES:-200k 2m}
TOL_ABS=${TOL_ABS:-1e-14}
TOP=${TOP:-100}
GRAPH_DIR=${GRAPH_DIR:-/tmp}

if ! "$PY" -c 'import igraph' 2>/dev/null; then
  echo "python-igraph is missing (apt-get install -y python3-igraph): nothing to compare against, not run" >&2
  exit 0
fi
if [ ! -x /usr/bin/time ]; then
  echo "needs /usr/bin/time (apt-get install -y time)" >&2
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

BIN=${RINGACTOR_BIN:-}
if [ -z "$BIN" ]; then
  BIN=$tmp/ringactor
  go build -o "$BIN" ./cmd/ringactor
fi
help=$("$BIN" help pagerank 2>&1 || true)
if [[ $help != *--tol-abs* || $help != *--timings* ]]; then
  echo "$BIN has no pagerank --tol-abs or --timings" >&2
  exit 1
fi

# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# timed NAME CMD...: run CMD with stdout to $tmp/NAME.out, stderr to
# $tmp/NAME.err, appending its wall and CPU seconds to $tmp/NAME.wall and .cpu
timed() {
  local name=$1
  shift
  /usr/bin/time -f '%e %U %S' -o "$tmp/time" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  awk '{ print $1 }' "$tmp/time" >>"$tmp/$name.wall"
  awk '{ print $2 + $3 }' "$tmp/time" >>"$tmp/$name.cpu"
}
row() { printf '  %-52s %s\n' "$1" "$2"; }
load() { echo "load average ($1): $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"; }

# graph SIZE: the edge list's path, generated when missing
graph() {
  local f
  case $1 in
  200k)
    f=$GRAPH_DIR/pagerank-200k.edges
    if [ ! -s "$f" ]; then
      echo "generating $f (nx.scale_free_graph(200000, seed=1), a few seconds)" >&2
      "$PY" bench/pagerank_graph.py --nodes 200000 --seed 1 "$f"
    fi
    ;;
  2m)
    f=$GRAPH_DIR/pagerank-2m.edges
    if [ ! -s "$f" ]; then
      echo "generating $f (2,000,000 nodes, 10,000,000 edges, seed 1, ~15 s)" >&2
      "$PY" bench/pagerank_biggraph.py --nodes 2000000 --edges 10000000 --seed 1 "$f"
    fi
    ;;
  *)
    echo "unknown size $1 (SIZES takes 200k and 2m)" >&2
    return 1
    ;;
  esac
  echo "$f"
}

status=0
echo "pagerank benchmark: ringactor --tol-abs $TOL_ABS against igraph $("$PY" -c 'import igraph; print(igraph.__version__)') (PRPACK), $RUNS alternated runs per size, $(go env GOVERSION)"
for size in $SIZES; do
  g=$(graph "$size")
  rm -f "$tmp"/ra.* "$tmp"/ig.*
  # igraph's NCOL reader takes no comment lines: it reads a copy without them.
  grep -v '^#' "$g" >"$tmp/graph.ncol"
  echo
  echo "== $size: $g ($(wc -l <"$tmp/graph.ncol") edge lines, $(wc -c <"$g") bytes)"
  load "before"

  # Untimed (and warming the page cache): every node's ranks, three ways.
  "$BIN" pagerank --edges "$g" --tol-abs 1e-16 --max-iter 1000 >"$tmp/ref.all" 2>"$tmp/ref.err"
  "$BIN" pagerank --edges "$g" --tol-abs "$TOL_ABS" --max-iter 1000 >"$tmp/ra.all" 2>"$tmp/ra.err"
  "$PY" bench/pagerank_igraph.py --top 0 --all "$tmp/ig.all" "$tmp/graph.ncol" >/dev/null
  sed 's/^/  reference: /' "$tmp/ref.err"
  sed 's/^/  ringactor: /' "$tmp/ra.err"
  if ! "$PY" bench/pagerank_compare.py --top "$TOP" "$tmp/ref.all" "$tmp/ra.all" "$tmp/ig.all" | sed 's/^/  /'; then
    status=1
  fi
  rm -f "$tmp/ref.all" "$tmp/ra.all" "$tmp/ig.all"

  for _ in $(seq "$RUNS"); do
    timed ra "$BIN" pagerank --edges "$g" --tol-abs "$TOL_ABS" --max-iter 1000 --top 10 --timings
    grep '^timings' "$tmp/ra.err" >>"$tmp/ra.timings"
    sed -n 's/.*converged after \([0-9]*\) iterations.*/\1/p' "$tmp/ra.err" >>"$tmp/ra.iters"
    timed ig "$PY" bench/pagerank_igraph.py --runs 1 --top 10 "$tmp/graph.ncol"
    awk '$1 == "seconds" { print $2 }' "$tmp/ig.out" >>"$tmp/ig.call"
    awk '$1 == "load" { print $2 }' "$tmp/ig.out" >>"$tmp/ig.load"
  done

  # ringactor's phase P (ms), median over the runs
  phase() { awk -v p="$1" '{ for (i = 1; i < NF; i++) if ($i == p) print $(i + 1) }' "$tmp/ra.timings" | median; }
  ra_wall=$(median <"$tmp/ra.wall")
  ra_cpu=$(median <"$tmp/ra.cpu")
  iterate=$(phase iterate)
  ig_wall=$(median <"$tmp/ig.wall")
  ig_cpu=$(median <"$tmp/ig.cpu")
  ig_call=$(median <"$tmp/ig.call")
  echo "  medians of $RUNS alternated runs (wall seconds; CPU = user + sys seconds):"
  row "ringactor, whole process" "wall $ra_wall  CPU $ra_cpu"
  row "  its phases, ms (--timings)" "read $(phase read)  parse $(phase parse)  build $(phase build)  setup $(phase setup)  iterate $iterate  write $(phase write)"
  row "  iterations to --tol-abs $TOL_ABS" "$(median <"$tmp/ra.iters")"
  row "igraph, whole process" "wall $ig_wall  CPU $ig_cpu"
  row "  its Read_Ncol + simplify" "$(median <"$tmp/ig.load") s"
  row "  its g.pagerank() call alone (PRPACK)" "$ig_call s"
  awk -v r="$ra_wall" -v i="$ig_wall" -v rc="$ra_cpu" -v ic="$ig_cpu" -v it="$iterate" -v c="$ig_call" 'BEGIN {
    printf "  whole process, igraph / ringactor: %.1fx wall, %.1fx CPU\n", i / r, ic / rc
    printf "  PRPACK call / ringactor iterate: %.2fx (above 1: ringactor iterates faster)\n", c / (it / 1000) }'
  load "after"
done
exit $status
