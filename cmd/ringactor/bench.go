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
	benchSynopsis    = "[-json] [-quick] [-cluster] [--device[=sim]] [-v] | overload [flags]"
	benchDescription = `Measure ringactor's message paths in one process, against baselines taken in
the same run:

  round trip   sequential typed Requests through one echo ring kernel, against
               Proto.Actor RequestFuture to a bare echo actor and a Go channel
               ping-pong between two goroutines (p50 and p99, nanoseconds)
  pipelined    many requesters in flight through one ring kernel, against the
               same requesters served by one goroutine over a buffered Go
               channel (messages per second)
  allocations  heap allocations per sequential ring kernel Request

The round trips (ring kernel with telemetry on and off, Proto.Actor, Go
channel) and the two pipelined rates are taken interleaved: each runs in
rounds, one chunk of each per round in alternating order, pooled over the
rounds, so that a change in the machine's load during the run weighs on a
measure and its baselines alike. Within a round the ring kernels' and the
Go channel's round trips alternate in blocks of 500, and their p50 ratios
(rtt_p50_ratio_ring_vs_chan, rtt_p50_ratio_telemetry_on_vs_off) are the
median over the blocks of the two p50s' ratio in the same block, so that
quick and full runs compare round trips taken under the same conditions.

  compute      Runtime.Execute against direct Go on the same data: the
               overhead of a 1-element float32 "add" over a direct cpu.Add
               (medians of per-call times), sequential tiny Executes per
               second with pooled outputs (median of ten batches) and
               their heap allocations, "add" on 10M float32 against a Go
               copy of the same 40 MB (medians of 5) and "matmul" of
               1024×1024 float64 against gonum's blas64.Gemm (medians of 3)
  stream       the sensor pipeline (package stream/sensor) as a stream graph of
               ring kernels against the same stages hand-written as a
               goroutine-per-stage pipeline of buffered Go channels, over
               the same generated input, streaming windows (rows per
               second, medians of 3)

The full configuration takes a while for steadier numbers; -quick finishes in
under a minute on two cores. Without -json the results are an aligned table
with the ring/baseline ratios; with -json stdout holds exactly one JSON object
whose keys are: go_version, gomaxprocs, ring_rtt_p50_ns, ring_rtt_p99_ns,
protoactor_rtt_p50_ns, protoactor_rtt_p99_ns, chan_rtt_p50_ns,
chan_rtt_p99_ns, ring_pipelined_msgs_per_s, chan_pipelined_msgs_per_s,
ring_allocs_per_request, rtt_p50_ratio_ring_vs_protoactor,
ring_rtt_telemetry_off_p50_ns, ring_rtt_telemetry_off_p99_ns,
rtt_p50_ratio_telemetry_on_vs_off (the ring round trip with telemetry on,
the default, against a runtime with telemetry off), rtt_p50_ratio_ring_vs_chan,
pipelined_ratio_ring_vs_chan, rtt_p99_over_p50_ring, rtt_p99_over_p50_chan,
rtt_p99_ratio_ring_vs_chan (the round trips' tails), execute_add_tiny_p50_ns,
direct_add_tiny_p50_ns, execute_overhead_ns, executions_per_s, execute_allocs_per_call,
elementwise_len, execute_add_10m_f32_ns, copy_10m_f32_ns,
elementwise_10m_f32_ratio_vs_copy, matmul_n, execute_matmul_1024_f64_ns,
gonum_gemm_1024_f64_ns, matmul_1024_f64_ratio_vs_gonum, stream_rows,
stream_rows_per_s, chan_stream_rows_per_s, stream_ratio_vs_chan. Progress is logged
on stderr.

-cluster adds the cluster measures, with a second member in a process of
its own (this binary's serve command) on loopback: typed requests
(KindOf.Ref(m, id).Request) round trips to a ring-kernel identity on the other member against raw
Proto.Actor cluster requests to a plain echo grain there, and both paths'
throughput with 64 requests in flight over 8 identities. Its JSON keys:
cluster_rtt_p50_ns, cluster_rtt_p99_ns, protoactor_cluster_rtt_p50_ns,
protoactor_cluster_rtt_p99_ns, cluster_rtt_p50_ratio_vs_protoactor,
cluster_msgs_per_s, protoactor_cluster_msgs_per_s, cluster_in_flight,
cluster_client_allocs_per_request, protoactor_cluster_client_allocs_per_request
(heap allocations per request in the requesting process),
cluster_server_allocs_per_request, protoactor_cluster_server_allocs_per_request
(in the hosting member's), cluster_client_cpu_ns_per_request,
protoactor_cluster_client_cpu_ns_per_request, cluster_server_cpu_ns_per_request,
protoactor_cluster_server_cpu_ns_per_request (CPU time per request of each
process, throughput runs).

--device adds the device measures on the machine's GPU, --device=sim on the
simulated device: 10,000 device ring kernels of one program (one persistent
grid serves them as mailboxes); one kernel's round trip alone and among the
others idle, the aggregate rate of 1, 16 and 1024 busy kernels (4 requests in
flight each), and what a kernel costs. Its JSON keys (device_sim_* for either
mode): device_sim_kernels, device_sim_grids, device_sim_rtt_p50_alone_ns,
device_sim_rtt_p50_one_of_many_ns, device_sim_pipelined_msgs_per_s_1,
device_sim_pipelined_msgs_per_s_16, device_sim_pipelined_msgs_per_s_1024,
device_sim_host_bytes_per_mailbox (Go heap), device_sim_pinned_bytes_per_mailbox,
device_sim_state_link_bytes_per_msg (0: the State is in device memory).

"ringactor bench overload" overloads a member instead (its own -h).
`
)

// benchCommand is the "bench" subcommand.
var benchCommand = command{
	name:    "bench",
	summary: "measure ring kernel round trips and throughput, and Execute, against Proto.Actor, Go channels and direct Go",
	run:     runBenchCommand,
}

// runBenchCommand parses the bench's flags and runs it.
func runBenchCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "overload" {
		return runBenchOverload(ctx, args[1:], stdout, stderr)
	}
	fs := newFlagSet("bench", benchSynopsis, benchDescription, stderr)
	asJSON := fs.Bool("json", false, "print the result as one JSON object on stdout instead of a table")
	quick := fs.Bool("quick", false, "run the quick configuration (under a minute on two cores) instead of the full one")
	withCluster := fs.Bool("cluster", false, "also measure cluster requests to a member in another process")
	verbose := fs.Bool("v", false, "log at debug level")
	var device deviceFlag
	fs.Var(&device, "device", "also measure device ring kernels on the GPU; --device=sim on the simulated device")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	log := fs.newLogger(*verbose)
	cfg, label := bench.Full, "full"
	ccfg := bench.FullCluster
	if *quick {
		cfg, label, ccfg = bench.Quick, "quick", bench.QuickCluster
	}
	var clusterRun func(context.Context) (*bench.ClusterResult, error)
	if *withCluster {
		clusterRun = func(ctx context.Context) (*bench.ClusterResult, error) { return benchCluster(ctx, ccfg, log) }
	}
	log.Info("bench: running", "config", label,
		"rtt_samples", cfg.RTTSamples, "pipelined_msgs", cfg.PipelinedMsgs,
		"in_flight", cfg.InFlight, "warmup", cfg.WarmupRequests, "exec_samples", cfg.ExecSamples,
		"elementwise_samples", cfg.ElementwiseSamples, "matmul_samples", cfg.MatMulSamples)
	var deviceRun func(context.Context) (*bench.DeviceResult, error)
	if device.mode != "" {
		deviceRun = func(ctx context.Context) (*bench.DeviceResult, error) {
			return benchDevice(ctx, device.mode, *quick, log)
		}
	}
	if err := runBench(ctx, stdout, cfg, label, *asJSON, clusterRun, deviceRun); err != nil {
		return failure(stderr, "bench", err)
	}
	return exitOK
}

// runBench runs the benchmark with cfg (and clusterRun's measures, when
// given) and writes its result to w: one JSON object (and its newline) when
// asJSON, else a table headed with label (the configuration's name). Nothing
// is written when the run fails.
func runBench(ctx context.Context, w io.Writer, cfg bench.Config, label string, asJSON bool, clusterRun func(context.Context) (*bench.ClusterResult, error),
	deviceRun func(context.Context) (*bench.DeviceResult, error)) error {
	res, err := bench.Run(ctx, cfg)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if clusterRun != nil {
		if res.ClusterResult, err = clusterRun(ctx); err != nil {
			return fmt.Errorf("bench: cluster: %w", err)
		}
	}
	if deviceRun != nil {
		if res.DeviceResult, err = deviceRun(ctx); err != nil {
			return fmt.Errorf("bench: device: %w", err)
		}
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
	fmt.Fprintf(&b, row, "round trip p50, telemetry off (ns)", count(float64(res.RingRTTOffP50)), "-", "-")
	fmt.Fprintf(&b, row, "heap allocations per Request", fmt.Sprintf("%.2f", res.RingAllocsPerRequest), "-", "-")
	b.WriteString("\n")
	const ratio = "%-34s %14.2f   %s\n"
	fmt.Fprintf(&b, ratio, "ring / Proto.Actor round trip p50", res.RTTRatioRingVsActor, "(below 1: ring kernel faster)")
	fmt.Fprintf(&b, ratio, "ring / Go channel round trip p50", res.RTTRatioRingVsChan, "(below 1: ring kernel faster)")
	fmt.Fprintf(&b, ratio, "ring round trip p99 / its p50", res.RTTTailRing, fmt.Sprintf("(the Go channel's: %.2f)", res.RTTTailChan))
	fmt.Fprintf(&b, ratio, "ring / Go channel round trip p99", res.RTTP99RingVsChan, "(below 1: ring kernel's tail shorter)")
	fmt.Fprintf(&b, ratio, "telemetry on / off round trip p50", res.RTTRatioTelemetryOn, "(goal: at most 1.10)")
	fmt.Fprintf(&b, ratio, "ring / Go channel pipelined", res.PipelinedRatioRingChan, "(above 1: ring kernel faster)")
	b.WriteString("\n")
	computeTable(&b, res)
	if c := res.ClusterResult; c != nil {
		b.WriteString("\n")
		fmt.Fprintf(&b, row, "cluster (other process)", "ring kernel", "Proto.Actor", "")
		fmt.Fprintf(&b, row, "round trip p50 (ns)", count(float64(c.ClusterRTTP50)), count(float64(c.ProtoActorClusterRTTP50)), "")
		fmt.Fprintf(&b, row, "round trip p99 (ns)", count(float64(c.ClusterRTTP99)), count(float64(c.ProtoActorClusterRTTP99)), "")
		fmt.Fprintf(&b, row, fmt.Sprintf("%d in flight (msg/s)", c.ClusterInFlight), count(c.ClusterMsgsPerS), count(c.ProtoActorClusterMsgsPS), "")
		fmt.Fprintf(&b, row, "requester allocs / request", fmt.Sprintf("%.1f", c.ClusterClientAllocs), fmt.Sprintf("%.1f", c.ProtoActorClusterClientAllocs), "")
		fmt.Fprintf(&b, ratio, "ring / Proto.Actor cluster p50", c.ClusterRTTRatio, "(below 1: ring kernel faster)")
	}
	if d := res.DeviceResult; d != nil {
		b.WriteString("\n")
		deviceTable(&b, d)
	}
	return b.String()
}

// computeTable writes the compute rows of res to b: Execute's numbers and
// their direct-Go baselines, then the overhead and the ratios.
func computeTable(b *strings.Builder, res bench.Result) {
	row := func(measure, exec, direct, baseline string) {
		b.WriteString(strings.TrimRight(fmt.Sprintf("%-34s %14s %14s   %s", measure, exec, direct, baseline), " "))
		b.WriteByte('\n')
	}
	row("compute", "Execute", "direct Go", "baseline")
	row("add, 1 float32, p50 (ns)", count(float64(res.ExecuteAddTinyP50)), count(float64(res.DirectAddTinyP50)), "cpu.Add on the same slices")
	row("executions/s, pooled output", count(res.ExecutionsPerS), "-", "")
	row("heap allocations per Execute", fmt.Sprintf("%.2f", res.ExecuteAllocsPerCall), "-", "")
	row(fmt.Sprintf("add, %s float32, median (ms)", size(res.ElementwiseLen)),
		millis(res.ExecuteAdd10M), millis(res.Copy10M), "Go copy of the same bytes")
	row(fmt.Sprintf("matmul, %d² float64, median (ms)", res.MatMulN),
		millis(res.ExecuteMatMul1024), millis(res.GonumGemm1024), "gonum blas64.Gemm, same data")
	b.WriteString("\n")
	fmt.Fprintf(b, "%-34s %14s   %s\n", "Execute overhead (ns)", count(float64(res.ExecuteOverhead)), "(Execute p50 − direct p50)")
	const ratio = "%-34s %14.2f   %s\n"
	fmt.Fprintf(b, ratio, "Execute add / copy", res.ElementwiseRatioVsCopy, "(1: as fast as a copy)")
	fmt.Fprintf(b, ratio, "Execute matmul / gonum Gemm", res.MatMulRatioVsGonum, "(1: no overhead)")
	b.WriteString("\n")
	row("stream", "stream graph", "Go channels", "")
	row(fmt.Sprintf("sensor pipeline, %s rows (rows/s)", size(res.StreamRows)), count(res.StreamRowsPerS), count(res.ChanStreamRowsPerS), "goroutine per stage, buffered channels")
	fmt.Fprintf(b, ratio, "stream graph / channels", res.StreamRatioVsChan, "(above 1: the graph faster)")
	if res.StreamCPURatioVsChan > 0 {
		row("  CPU time per row (ns)", fmt.Sprintf("%.0f", res.StreamCPUNsPerRow), fmt.Sprintf("%.0f", res.ChanStreamCPUNsPerRow), "user + system, whole process")
		fmt.Fprintf(b, ratio, "  CPU graph / channels", res.StreamCPURatioVsChan, "(below 1: the graph cheaper)")
	}
}

// millis formats nanoseconds as milliseconds with three decimals.
func millis(ns int64) string { return fmt.Sprintf("%.3f", float64(ns)/1e6) }

// size formats an element count briefly: 10000000 → "10M", 4096 → "4096".
func size(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1_000 && n%1_000 == 0:
		return fmt.Sprintf("%dK", n/1_000)
	}
	return fmt.Sprint(n)
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
