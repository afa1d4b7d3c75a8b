#!/usr/bin/env bash
# Benchmark `ringactor pagerank` against networkx 2.8's nx.pagerank on a
# 200,000-node, ~434,000-edge-line scale-free graph, in one run:
#
#   bash bench/pagerank.sh            # needs Debian's python3-networkx and python3-scipy
#
# ringactor is timed as a whole process (read and parse the file, compute
# with the partition and coordinator ring kernels, print the top 10); networkx
# as its nx.pagerank(G) call alone, timed inside Python after the graph is
# loaded. Both use the defaults (damping 0.85, tol 1e-6, max-iter 100). The
# script prints every sample, the medians and their ratio (goal: ringactor at
# least 5x faster), and checks that both agree on the top 10.
#
# Environment: RUNS (ringactor runs, default 5), NX_RUNS (networkx runs,
# default 3), GRAPH (edge list path, default /tmp/pagerank-200k.edges, made
# by bench/pagerank_graph.py when missing), RINGACTOR_BIN (a prebuilt
# ringactor binary; default: built into a temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."

PY=/usr/bin/python3 # Debian's python, with Debian's networkx 2.8
RUNS=${RUNS:-5}
NX_RUNS=${NX_RUNS:-3}
GRAPH=${GRAPH:-/tmp/pagerank-200k.edges}

if ! "$PY" -c 'import networkx, scipy' 2>/dev/null; then
  echo "needs Debian's networkx and scipy: apt-get install -y python3-networkx python3-scipy" >&2
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

BIN=${RINGACTOR_BIN:-}
if [ -z "$BIN" ]; then
  BIN=$tmp/ringactor
  go build -o "$BIN" ./cmd/ringactor
fi
if ! "$BIN" help pagerank >/dev/null 2>&1; then
  echo "$BIN has no pagerank command" >&2
  exit 1
fi

if [ ! -s "$GRAPH" ]; then
  echo "generating $GRAPH (nx.scale_free_graph(200000, seed=1), a few seconds)" >&2
  "$PY" bench/pagerank_graph.py --nodes 200000 --seed 1 "$GRAPH"
fi

# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

lines=$(grep -vc '^#' "$GRAPH" || true)
echo "pagerank benchmark: $GRAPH ($lines edge lines), $(nproc) cores, $(go env GOVERSION)"

# Warm the page cache and check the output once.
"$BIN" pagerank --edges "$GRAPH" --top 10 >"$tmp/ra.top" 2>"$tmp/ra.err"
sed 's/^/  ringactor: /' "$tmp/ra.err"

: >"$tmp/ra.times"
for _ in $(seq "$RUNS"); do
  start=$EPOCHREALTIME
  "$BIN" pagerank --edges "$GRAPH" --top 10 >/dev/null 2>&1
  end=$EPOCHREALTIME
  awk -v s="$start" -v e="$end" 'BEGIN { printf "%.4f\n", e - s }' >>"$tmp/ra.times"
done
ra=$(median <"$tmp/ra.times")
echo "ringactor pagerank --edges FILE --top 10, whole process, seconds: $(tr '\n' ' ' <"$tmp/ra.times")(median $ra)"

"$PY" bench/pagerank_nx.py --runs "$NX_RUNS" --top 10 "$GRAPH" >"$tmp/nx.out"
grep '^seconds' "$tmp/nx.out" | awk '{ print $2 }' >"$tmp/nx.times"
grep -v -e '^seconds' -e '^networkx' "$tmp/nx.out" >"$tmp/nx.top"
nx=$(median <"$tmp/nx.times")
echo "$(grep '^networkx' "$tmp/nx.out") nx.pagerank(G) call alone, seconds: $(tr '\n' ' ' <"$tmp/nx.times")(median $nx)"

awk -v r="$ra" -v n="$nx" 'BEGIN { printf "speed-up (networkx median / ringactor median): %.2fx (goal: at least 5x)\n", n / r }'

if diff <(cut -f1 "$tmp/ra.top") <(cut -f1 "$tmp/nx.top") >/dev/null; then
  echo "top 10 nodes: the same, in the same order"
else
  echo "top 10 nodes DIFFER:"
  paste "$tmp/ra.top" "$tmp/nx.top"
  exit 1
fi
awk -F'\t' 'NR == FNR { r[FNR] = $2; next } { d = r[FNR] - $2; if (d < 0) d = -d; if (d > m) m = d } END { printf "largest rank difference in the top 10: %.2g\n", m }' "$tmp/ra.top" "$tmp/nx.top"
