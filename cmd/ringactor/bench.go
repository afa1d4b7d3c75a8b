package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ringactor/ringactor/internal/bench"
)

// Help text of the bench command.
const (
	benchSynopsis    = "[-json] [-quick] [-v]"
	benchDescription = `Measure ringactor's message paths in one process, against baselines taken in
the same run:

  round trip   sequential typed Requests through one echo ring kernel, against
               Proto.Actor RequestFuture to a bare echo actor and a Go channel
               ping-pong between two goroutines (p50 and p99, nanoseconds)
  pipelined    many requesters in flight through one ring kernel, against the
               same requesters served by one goroutine over a buffered Go
               channel (messages per second)
  allocations  heap allocations per sequential ring kernel Request

The full configuration takes a while for steadier numbers; -quick finishes in
under a minute on two cores. Without -json the results are an aligned table
with the ring/baseline ratios; with -json stdout holds exactly one JSON object
whose keys are: go_version, gomaxprocs, ring_rtt_p50_ns, ring_rtt_p99_ns,
protoactor_rtt_p50_ns, protoactor_rtt_p99_ns, chan_rtt_p50_ns,
chan_rtt_p99_ns, ring_pipelined_msgs_per_s, chan_pipelined_msgs_per_s,
ring_allocs_per_request, rtt_p50_ratio_ring_vs_protoactor,
pipelined_ratio_ring_vs_chan. Progress is logged on stderr.
`
)

// benchCommand is the "bench" subcommand.
var benchCommand = command{
	name:    "bench",
	summary: "measure ring kernel round trips and throughput against Proto.Actor and Go channels",
	run:     runBenchCommand,
}

// runBenchCommand parses the bench's flags and runs it.
func runBenchCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bench", benchSynopsis, benchDescription, stderr)
	asJSON := fs.Bool("json", false, "print the result as one JSON object on stdout instead of a table")
	quick := fs.Bool("quick", false, "run the quick configuration (under a minute on two cores) instead of the full one")
	verbose := fs.Bool("v", false, "log at debug level")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	log := newLogger(stderr, *verbose)
	cfg, label := bench.Full, "full"
	if *quick {
		cfg, label = bench.Quick, "quick"
	}
	log.Info("bench: running", "config", label,
		"rtt_samples", cfg.RTTSamples, "pipelined_msgs", cfg.PipelinedMsgs,
		"in_flight", cfg.InFlight, "warmup", cfg.WarmupRequests)
	if err := runBench(ctx, stdout, cfg, label, *asJSON); err != nil {
		return failure(log, "bench", err)
	}
	return exitOK
}

// runBench runs the benchmark with cfg and writes its result to w: one JSON
// object (and its newline) when asJSON, else a table headed with label (the
// configuration's name). Nothing is written when the run fails.
func runBench(ctx context.Context, w io.Writer, cfg bench.Config, label string, asJSON bool) error {
	res, err := bench.Run(ctx, cfg)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if asJSON {
		return json.NewEncoder(w).Encode(res)
	}
	_, err = io.WriteString(w, benchTable(res, cfg, label))
	return err
}

// benchTable formats res as an aligned table: one row per measure with the
// ring kernel's number and the baselines', then the ratios.
func benchTable(res bench.Result, cfg bench.Config, label string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ringactor bench (%s: %d round trips, %d pipelined messages, %d in flight) %s GOMAXPROCS=%d\n\n",
		label, cfg.RTTSamples, cfg.PipelinedMsgs, cfg.InFlight, res.GoVersion, res.GOMAXPROCS)
	const row = "%-34s %14s %14s %14s\n"
	fmt.Fprintf(&b, row, "measure", "ring kernel", "Proto.Actor", "Go channel")
	fmt.Fprintf(&b, row, "round trip p50 (ns)", count(float64(res.RingRTTP50)), count(float64(res.ProtoActorRTTP50)), count(float64(res.ChanRTTP50)))
	fmt.Fprintf(&b, row, "round trip p99 (ns)", count(float64(res.RingRTTP99)), count(float64(res.ProtoActorRTTP99)), count(float64(res.ChanRTTP99)))
	fmt.Fprintf(&b, row, fmt.Sprintf("pipelined, %d in flight (msg/s)", cfg.InFlight), count(res.RingPipelinedMsgsPerS), "-", count(res.ChanPipelinedMsgsPerS))
	fmt.Fprintf(&b, row, "heap allocations per Request", fmt.Sprintf("%.2f", res.RingAllocsPerRequest), "-", "-")
	b.WriteString("\n")
	const ratio = "%-34s %14.2f   %s\n"
	fmt.Fprintf(&b, ratio, "ring / Proto.Actor round trip p50", res.RTTRatioRingVsActor, "(below 1: ring kernel faster)")
	fmt.Fprintf(&b, ratio, "ring / Go channel pipelined", res.PipelinedRatioRingChan, "(above 1: ring kernel faster)")
	return b.String()
}

// count formats a non-negative number rounded to an integer with thousands
// separators: 4361234.5 → "4,361,235".
func count(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	if len(s) <= 3 || strings.HasPrefix(s, "-") {
		return s
	}
	var b strings.Builder
	lead := len(s) % 3
	if lead > 0 {
		b.WriteString(s[:lead])
	}
	for i := lead; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}
