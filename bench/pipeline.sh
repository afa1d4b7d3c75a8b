#!/usr/bin/env bash
# Benchmark of the streaming sensor pipeline (examples/pipeline, issue 6):
# generates a seeded 5M-row CSV, builds ringactor, and runs
# `ringactor pipeline` on it holding every window and with --lateness-ms,
# reporting input rows per second (wall clock of the whole process: read,
# parse, scale, window, write) and peak RSS ("Maximum resident set size" of
# /usr/bin/time -v). Targets: at least 1,000,000 rows/s, and under 200 MB
# peak RSS with --lateness-ms.
#
#   bench/pipeline.sh                 # 5M rows, 3 runs of each mode
#   ROWS=1000000 RUNS=1 bench/pipeline.sh
#
# Environment: ROWS (5000000), RUNS (3), LATENESS_MS (1000), WINDOW_MS
# (1000), DIR (/tmp/ringactor-pipeline-bench: input, binary, outputs).
set -euo pipefail
cd "$(dirname "$0")/.."

ROWS=${ROWS:-5000000}
RUNS=${RUNS:-3}
LATENESS_MS=${LATENESS_MS:-1000}
WINDOW_MS=${WINDOW_MS:-1000}
DIR=${DIR:-/tmp/ringactor-pipeline-bench}
mkdir -p "$DIR"

if [ ! -x /usr/bin/time ]; then
	echo "installing GNU time (for peak RSS)" >&2
	apt-get install -y time >/dev/null || { apt-get update >/dev/null && apt-get install -y time >/dev/null; }
fi

go build -o "$DIR/ringactor" ./cmd/ringactor
if ! "$DIR/ringactor" help pipeline >/dev/null 2>&1; then
	echo "ringactor has no pipeline command: add pipelineCommand to commands in cmd/ringactor/main.go" >&2
	exit 1
fi
IN="$DIR/sensors-$ROWS.csv"
go run ./examples/pipeline/gen -rows "$ROWS" -sensors 64 -seed 1 -o "$IN"

echo "ringactor pipeline benchmark: $(go version | cut -d' ' -f3), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "input: $IN, $ROWS rows, $(du -m "$IN" | cut -f1) MB (64 sensors, events up to 200 ms out of order, ~1 bad row in 100,000)"
echo

# run MODE ARGS...: RUNS timed runs; prints one line per run and keeps the
# last run's output for the checks below.
run() {
	local mode=$1
	shift
	local rates=()
	for i in $(seq "$RUNS"); do
		local t0 t1
		t0=$(date +%s%N)
		/usr/bin/time -v -o "$DIR/time-$mode.txt" "$DIR/ringactor" pipeline --window-ms "$WINDOW_MS" "$@" "$IN" \
			>"$DIR/out-$mode.csv" 2>"$DIR/err-$mode.txt"
		t1=$(date +%s%N)
		local secs rss rate
		secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
		rss=$(awk -F': ' '/Maximum resident set size/ { printf "%.1f", $2 / 1024 }' "$DIR/time-$mode.txt")
		rate=$(awk -v n="$ROWS" -v s="$secs" 'BEGIN { printf "%.0f", n / s }')
		rates+=("$rate")
		printf "%-28s run %d: %7s s  %12d rows/s  peak RSS %6s MB  %s, %d windows\n" \
			"$mode" "$i" "$secs" "$rate" "$rss" "$(tail -1 "$DIR/err-$mode.txt")" "$(($(wc -l <"$DIR/out-$mode.csv") - 1))"
	done
	local median
	median=$(printf '%s\n' "${rates[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
	printf "%-28s median %d rows/s\n\n" "$mode" "$median"
}

run "hold (exact)"
run "--lateness-ms $LATENESS_MS" --lateness-ms "$LATENESS_MS"

# With a lateness above the input's disorder nothing is late, so both modes
# must give the same windows (in different orders).
if cmp -s <(LC_ALL=C sort "$DIR/out-hold (exact).csv") <(LC_ALL=C sort "$DIR/out---lateness-ms $LATENESS_MS.csv"); then
	echo "check: both modes wrote the same $(($(wc -l <"$DIR/out-hold (exact).csv") - 1)) windows"
else
	echo "check: the two modes' windows differ (expected only when --lateness-ms is below the input's disorder)"
fi
echo "command: $DIR/ringactor pipeline [--lateness-ms $LATENESS_MS] $IN > out.csv 2> rejects.txt"
