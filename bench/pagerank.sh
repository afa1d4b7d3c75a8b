#!/usr/bin/env bash
# Benchmark `ringactor pagerank` against python-igraph (PRPACK, in C) and
# networkx 2.8 on a 200,000-node, ~434,000-edge-line scale-free graph, in one
# run on one machine:
#
#   bash bench/pagerank.sh   # needs Debian's python3-networkx and python3-scipy;
#                            # python3-igraph for the igraph columns
#
# Whole processes, alternated run by run, each printing the top 10:
#   ringactor  `ringactor pagerank --edges FILE --top 10 --timings`
#   igraph     bench/pagerank_igraph.py (Read_Ncol, simplify, g.pagerank PRPACK)
#   networkx   bench/pagerank_nx.py --runs 1 (read_edgelist, nx.pagerank)
# plus ringactor's phases (--timings: read, parse, build, setup, iterate,
# write) beside igraph's pagerank call alone (timed inside its process) and
# networkx's call alone. Wall-clock medians and the medians of each process's
# CPU time (user + sys; steadier on a loaded machine). Goals: ringactor's whole
# process at least 20x igraph's; its iteration at most 0.5x the PRPACK call.
# The top 10 must agree with networkx's, and all ranks within 1e-9 in L1 of a
# tight networkx run is pinned by the Go tests (reference_test.go); here the
# L1 distance to networkx's defaults over all nodes is printed.
#
# Environment: RUNS (alternated runs, default 5), NX_RUNS (networkx whole
# processes, default 3), GRAPH (edge list, default /tmp/pagerank-200k.edges,
# made by bench/pagerank_graph.py when missing), RINGACTOR_BIN (a prebuilt
# binary; default: built into a temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."

PY=/usr/bin/python3 # Debian's python, with Debian's networkx 2.8 and igraph 0.10
RUNS=${RUNS:-5}
NX_RUNS=${NX_RUNS:-3}
GRAPH=${GRAPH:-/tmp/pagerank-200k.edges}

if ! "$PY" -c 'import networkx, scipy' 2>/dev/null; then
  echo "needs Debian's networkx and scipy: apt-get install -y python3-networkx python3-scipy" >&2
  exit 1
fi
IGRAPH=1
if ! "$PY" -c 'import igraph' 2>/dev/null; then
  echo "python-igraph is missing (apt-get install -y python3-igraph): skipping the igraph columns" >&2
  IGRAPH=0
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
if [[ $help != *--timings* ]]; then
  echo "$BIN has no pagerank --timings" >&2
  exit 1
fi

if [ ! -s "$GRAPH" ]; then
  echo "generating $GRAPH (nx.scale_free_graph(200000, seed=1), a few seconds)" >&2
  "$PY" bench/pagerank_graph.py --nodes 200000 --seed 1 "$GRAPH"
fi
# igraph's NCOL reader takes no comment lines: it reads a copy without them.
grep -v '^#' "$GRAPH" >"$tmp/graph.ncol"

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
row() { printf '  %-44s %s\n' "$1" "$2"; }

bytes=$(wc -c <"$GRAPH")
lines=$(grep -vc '^#' "$GRAPH" || true)
echo "pagerank benchmark: $GRAPH ($lines edge lines, $bytes bytes), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(go env GOVERSION)"

# Warm the page cache; every node's ranks from both, untimed, for the L1.
"$BIN" pagerank --edges "$GRAPH" >"$tmp/ra.all" 2>"$tmp/ra.err"
sed 's/^/  ringactor: /' "$tmp/ra.err"
"$PY" bench/pagerank_nx.py --runs 1 --top 10 --all "$tmp/nx.all" "$GRAPH" >"$tmp/nx.ref"

for _ in $(seq "$RUNS"); do
  timed ra "$BIN" pagerank --edges "$GRAPH" --top 10 --timings
  grep '^timings' "$tmp/ra.err" >>"$tmp/ra.timings"
  if [ "$IGRAPH" = 1 ]; then
    timed ig "$PY" bench/pagerank_igraph.py --runs 1 --top 10 "$tmp/graph.ncol"
    grep '^seconds' "$tmp/ig.out" | awk '{ print $2 }' >>"$tmp/ig.call"
  fi
done
for _ in $(seq "$NX_RUNS"); do
  timed nx "$PY" bench/pagerank_nx.py --runs 1 --top 10 "$GRAPH"
  grep '^seconds' "$tmp/nx.out" | awk '{ print $2 }' >>"$tmp/nx.call"
done

# ringactor's phase P (ms), median over the runs
phase() { awk -v p="$1" '{ for (i = 1; i < NF; i++) if ($i == p) print $(i + 1) }' "$tmp/ra.timings" | median; }
ra_wall=$(median <"$tmp/ra.wall")
ra_cpu=$(median <"$tmp/ra.cpu")
parse=$(phase parse)
iterate=$(phase iterate)
echo "medians of $RUNS alternated runs (wall seconds; CPU = user + sys seconds):"
row "ringactor pagerank --top 10, whole process" "wall $ra_wall  CPU $ra_cpu"
row "  its phases, ms (--timings)" "read $(phase read)  parse $(phase parse)  build $(phase build)  setup $(phase setup)  iterate $iterate  write $(phase write)"
awk -v b="$bytes" -v p="$parse" 'BEGIN { printf "  %-44s %.0f MB/s\n", "  parse rate (edge-list bytes / parse)", b / p / 1000 }'
if [ "$IGRAPH" = 1 ]; then
  ig_wall=$(median <"$tmp/ig.wall")
  ig_cpu=$(median <"$tmp/ig.cpu")
  ig_call=$(median <"$tmp/ig.call")
  row "$(head -1 "$tmp/ig.out") whole process" "wall $ig_wall  CPU $ig_cpu"
  row "  its g.pagerank() call alone (PRPACK)" "$ig_call s"
fi
nx_wall=$(median <"$tmp/nx.wall")
row "$(head -1 "$tmp/nx.out") whole process ($NX_RUNS runs)" "wall $nx_wall  CPU $(median <"$tmp/nx.cpu")"
row "  its nx.pagerank(G) call alone" "$(median <"$tmp/nx.call") s"
if [ "$IGRAPH" = 1 ]; then
  awk -v r="$ra_wall" -v i="$ig_wall" -v rc="$ra_cpu" -v ic="$ig_cpu" 'BEGIN {
    printf "whole process, igraph / ringactor: %.1fx wall, %.1fx CPU (goal: at least 20x)\n", i / r, ic / rc }'
  awk -v it="$iterate" -v c="$ig_call" 'BEGIN {
    printf "iteration / PRPACK call: %.2f (goal: at most 0.5)\n", it / 1000 / c }'
fi
awk -v r="$ra_wall" -v n="$nx_wall" 'BEGIN { printf "whole process, networkx / ringactor: %.1fx wall\n", n / r }'

# The top 10 of each against networkx's.
head -10 "$tmp/ra.all" >"$tmp/ra.top"
grep -v -e '^seconds' -e '^networkx' "$tmp/nx.ref" >"$tmp/nx.top"
status=0
if diff <(cut -f1 "$tmp/ra.top") <(cut -f1 "$tmp/nx.top") >/dev/null; then
  echo "top 10 nodes, ringactor and networkx: the same, in the same order"
else
  echo "top 10 nodes of ringactor and networkx DIFFER:"
  paste "$tmp/ra.top" "$tmp/nx.top"
  status=1
fi
if [ "$IGRAPH" = 1 ]; then
  grep -v -e '^seconds' -e '^igraph' -e '^load' "$tmp/ig.out" >"$tmp/ig.top"
  if diff <(cut -f1 "$tmp/ig.top") <(cut -f1 "$tmp/nx.top") >/dev/null; then
    echo "top 10 nodes, igraph and networkx: the same, in the same order"
  else
    echo "top 10 nodes of igraph and networkx differ (igraph's own convergence test):"
    paste "$tmp/ig.top" "$tmp/nx.top"
  fi
fi
awk -F'\t' 'NR == FNR { r[$1] = $2; next } ($1 in r) { d = r[$1] - $2; if (d < 0) d = -d; s += d; n++ }
  END { printf "L1 distance between ringactor and networkx over all %d nodes (defaults): %.3g\n", n, s }' "$tmp/ra.all" "$tmp/nx.all"
exit $status
