package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/internal/bench"
	"github.com/ringactor/ringactor/internal/testutil/hangguard"
	"github.com/ringactor/ringactor/internal/testutil/testproc"
	"github.com/ringactor/ringactor/internal/version"
)

// TestMain fails the package when a test leaves goroutines behind.
func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) != "" {
		// A child process of a test: run the command line after "--".
		args := os.Args[1:]
		for i, a := range args {
			if a == "--" {
				args = args[i+1:]
				break
			}
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := run(ctx, args, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	// Proto.Actor's dead-letter log throttle goroutine ends by itself a
	// second after a dead letter; a short run can finish before it.
	// Likewise the gossip throttle of an in-process member (the readiness
	// test's) ends by itself after its interval.
	goleak.VerifyTestMain(m, testproc.ProtoActorThrottles()...)
}

// testCtx is the test's hang guard (hangguard.Context): no wall-clock
// deadline of its own.
func testCtx(t testing.TB) context.Context { return hangguard.Context(t) }

// tinyBench is a benchmark configuration that runs in a moment, also under
// the race detector: small compute sizes instead of 10M and 1024, and a
// stream of 5,000 rows instead of DefaultStreamRows (a million rows, twelve
// times in both pipelines, took minutes under -race on a loaded machine).
// The bench tests check the shape of the output, never the machine's speed.
var tinyBench = bench.Config{RTTSamples: 200, PipelinedMsgs: 2000, InFlight: 8, WarmupRequests: 50,
	ExecSamples: 200, ElementwiseLen: 4096, ElementwiseSamples: 3, MatMulN: 32, MatMulSamples: 3,
	StreamRows: 5000}

// runCLI runs the command line args and returns its status, stdout and
// stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(testCtx(t), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestDemoPrintsResults runs the demo in process and checks its numbers:
// the vector sums, the running sum 55, the chain's 56 and the telemetry rows.
func TestDemoPrintsResults(t *testing.T) {
	var out bytes.Buffer
	if err := runDemo(testCtx(t), &out, 300, actors.WithLogger(actors.DiscardLogger()), actors.WithTelemetry(false)); err != nil {
		t.Fatalf("runDemo: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"Send    [1 2 3] + [4 5 6], Receive -> [5 7 9]",
		"Request [10 20 30 40] + [0.5 1.5 2.5 3.5] -> [10.5 21.5 32.5 43.5]",
		"Request [1 2] + [3] -> error:",
		"add: vectors of lengths 2 and 1",
		"300 messages of 16-element vectors (checksums ok)",
		"Send 1..10, Receive -> 1 3 6 10 15 21 28 36 45 55\n",
		"final running sum: 55 after 10 values",
		"Request [1 2 3] to scale -> square_sum replies 56\n",
		"Send    [1 1] to scale, Receive from square_sum -> 8\n",
		"Send    [0.5 1.5] to scale, Receive from square_sum -> 10\n",
		"Send    [3 4] to scale, Receive from square_sum -> 100\n",
		"terminated vector_add, running_sum, scale, square_sum",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("demo output lacks %q:\n%s", want, got)
		}
	}
	// Telemetry rows: vector_add processed 2 + 1 failed + 2×300, one error;
	// running_sum 10; scale 4 (1 Request + 3 Sends); square_sum 4.
	for _, want := range [][]string{
		{"vector_add", "603", "1", "0", "0"},
		{"running_sum", "10", "0", "0", "0"},
		{"scale", "4", "0", "0", "0"},
		{"square_sum", "4", "0", "0", "0"},
	} {
		if !hasRow(got, want) {
			t.Errorf("telemetry lacks a row starting %q (processed errors dropped restarts):\n%s", want, got)
		}
	}
}

// hasRow reports whether a telemetry row names kernel cells[0] and has the
// counters cells[1:] in its processed, errors, dropped, restarts columns.
func hasRow(out string, cells []string) bool {
	for line := range strings.SplitSeq(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 7 && f[0] == cells[0] && strings.Join(f[3:7], " ") == strings.Join(cells[1:], " ") {
			return true
		}
	}
	return false
}

// TestDemoCommand runs "ringactor demo -n 20" through the dispatcher.
func TestDemoCommand(t *testing.T) {
	code, stdout, stderr := runCLI(t, "demo", "-n", "20")
	if code != exitOK {
		t.Fatalf("demo exit %d, stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "final running sum: 55") || !strings.Contains(stdout, "replies 56") {
		t.Fatalf("demo stdout:\n%s", stdout)
	}
}

// TestDemoInterrupted checks that a cancelled context (an interrupt) makes
// the demo fail with context.Canceled after closing its runtime.
func TestDemoInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	err := runDemo(ctx, &out, 10, actors.WithLogger(actors.DiscardLogger()), actors.WithTelemetry(false))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("runDemo with a cancelled context = %v, want context.Canceled", err)
	}
}

// TestBenchJSON runs the bench code path with a tiny configuration and
// checks that stdout is one JSON object with every required key above zero.
func TestBenchJSON(t *testing.T) {
	var out bytes.Buffer
	if err := runBench(testCtx(t), &out, tinyBench, "tiny", true, nil, nil); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(out.Bytes()))
	var res map[string]any
	if err := dec.Decode(&res); err != nil {
		t.Fatalf("stdout is not a JSON object: %v\n%s", err, out.String())
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON value:\n%s", out.String())
	}
	for _, key := range []string{
		"ring_rtt_p50_ns", "ring_rtt_p99_ns",
		"protoactor_rtt_p50_ns", "protoactor_rtt_p99_ns",
		"chan_rtt_p50_ns",
		"rtt_p99_over_p50_ring", "rtt_p99_over_p50_chan", "rtt_p99_ratio_ring_vs_chan",
		"ring_pipelined_msgs_per_s", "chan_pipelined_msgs_per_s",
		"execute_add_tiny_p50_ns", "direct_add_tiny_p50_ns", "execute_overhead_ns", "executions_per_s",
		"elementwise_len", "execute_add_10m_f32_ns", "copy_10m_f32_ns", "elementwise_10m_f32_ratio_vs_copy",
		"matmul_n", "execute_matmul_1024_f64_ns", "gonum_gemm_1024_f64_ns", "matmul_1024_f64_ratio_vs_gonum",
		"stream_rows", "stream_rows_per_s", "chan_stream_rows_per_s", "stream_ratio_vs_chan",
		"stream_cpu_ns_per_row", "chan_stream_cpu_ns_per_row", "stream_cpu_ratio_vs_chan", // (CPU time: read on Linux)
	} {
		v, ok := res[key]
		if !ok {
			t.Errorf("JSON lacks %q: %s", key, out.String())
			continue
		}
		if f, ok := v.(float64); !ok || f <= 0 {
			t.Errorf("%s = %v, want a number > 0", key, v)
		}
	}
	for _, key := range []string{"go_version", "gomaxprocs", "chan_rtt_p99_ns", "ring_allocs_per_request",
		"rtt_p50_ratio_ring_vs_protoactor", "pipelined_ratio_ring_vs_chan", "execute_allocs_per_call",
		"ring_rtt_telemetry_off_p50_ns", "rtt_p50_ratio_telemetry_on_vs_off", "rtt_p50_ratio_ring_vs_chan"} {
		if _, ok := res[key]; !ok {
			t.Errorf("JSON lacks %q: %s", key, out.String())
		}
	}
}

// TestBenchTable checks the table's rows and ratios.
func TestBenchTable(t *testing.T) {
	var out bytes.Buffer
	if err := runBench(testCtx(t), &out, tinyBench, "tiny", false, nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ringactor bench (tiny:", "round trip p50 (ns)", "round trip p99 (ns)",
		"pipelined, 8 in flight (msg/s)", "heap allocations per Request",
		"ring / Proto.Actor round trip p50", "ring / Go channel round trip p50", "ring / Go channel pipelined",
		"ring round trip p99 / its p50", "ring / Go channel round trip p99",
		"add, 1 float32, p50 (ns)", "executions/s, pooled output", "heap allocations per Execute",
		"add, 4096 float32, median (ms)", "matmul, 32² float64, median (ms)", "Execute overhead (ns)",
		"Execute add / copy", "Execute matmul / gonum Gemm", "stream graph / channels", "CPU graph / channels"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

// TestCount checks the thousands separators.
func TestCount(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 999: "999", 1000: "1,000", 4361234.5: "4,361,234", 123456: "123,456", 12345678: "12,345,678"} {
		if got := count(in); got != want {
			t.Errorf("count(%v) = %q, want %q", in, got, want)
		}
	}
}

// TestSize checks the brief element counts of the bench table.
func TestSize(t *testing.T) {
	for in, want := range map[int]string{10_000_000: "10M", 4096: "4096", 4000: "4K", 1_500_000: "1500K", 7: "7"} {
		if got := size(in); got != want {
			t.Errorf("size(%d) = %q, want %q", in, got, want)
		}
	}
}

// TestBenchTableTrailingSpace checks that no table line ends in a space.
func TestBenchTableTrailingSpace(t *testing.T) {
	for line := range strings.SplitSeq(benchTable(bench.Result{ElementwiseLen: 10_000_000, MatMulN: 1024}, tinyBench, "tiny"), "\n") {
		if strings.HasSuffix(line, " ") {
			t.Errorf("line ends in a space: %q", line)
		}
	}
}

// TestUsageErrors checks that every bad command line exits 2 with one line
// saying what is wrong and a one-line hint on stderr (no usage text), and
// nothing on stdout; with no command at all the usage follows.
func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		cmd  string // "" for the top level
	}{
		{[]string{"frobnicate"}, ""},            // unknown command
		{[]string{"--frobnicate"}, ""},          // unknown flag before any command
		{[]string{"help", "frobnicate"}, ""},    // help on an unknown command
		{[]string{"help", "demo", "bench"}, ""}, // help on two commands
		{[]string{"--version", "x"}, ""},
		{[]string{"demo", "-x"}, "demo"},         // unknown flag
		{[]string{"demo", "-n", "0"}, "demo"},    // out of range
		{[]string{"demo", "-n", "many"}, "demo"}, // not a number
		{[]string{"demo", "extra"}, "demo"},      // positional argument
		{[]string{"bench", "-quick", "now"}, "bench"},
		{[]string{"version", "now"}, "version"},
		{[]string{"serve", "--cluster", "c", "--peers", "", "--bind", "nonsense"}, "serve"},
		{[]string{"serve", "--cluster", "c", "--peers", "", "--bind", "127.0.0.1:99999"}, "serve"},
		{[]string{"serve", "--cluster", "c", "--peers", "nonsense"}, "serve"},
	} {
		code, stdout, stderr := runCLI(t, tc.args...)
		if code != exitUsage {
			t.Errorf("%q: exit %d, want %d", tc.args, code, exitUsage)
		}
		if stdout != "" {
			t.Errorf("%q: wrote to stdout: %q", tc.args, stdout)
		}
		checkUsageLine(t, tc.args, tc.cmd, stderr)
	}
	code, stdout, stderr := runCLI(t)
	if code != exitUsage || stdout != "" || !strings.HasPrefix(stderr, "ringactor: no command\n") || !strings.Contains(stderr, "Usage:") {
		t.Errorf("no command: exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
}

// checkUsageLine checks that stderr is a usage mistake's report: the line
// "ringactor CMD: ..." (cmd "" for the top level) and the hint, nothing else.
func checkUsageLine(t *testing.T, args []string, cmd, stderr string) {
	t.Helper()
	prefix, hint := "ringactor: ", "Run 'ringactor help' for usage.\n"
	if cmd != "" {
		prefix, hint = "ringactor "+cmd+": ", "Run 'ringactor "+cmd+" -h' for usage.\n"
	}
	lines := strings.SplitAfter(stderr, "\n")
	if len(lines) != 3 || lines[2] != "" || !strings.HasPrefix(lines[0], prefix) || lines[1] != hint {
		t.Errorf("%q: stderr is not one line %q... and the hint %q:\n%s", args, prefix, hint, stderr)
	}
}

// TestRuntimeFailureOneLine checks that a failure at run time is one plain
// line on stderr, "ringactor CMD: ...", no slog record and no usage, with
// exit status 1.
func TestRuntimeFailureOneLine(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	for _, tc := range []struct {
		args []string
		cmd  string
	}{
		{[]string{"pipeline", missing}, "pipeline"},
		{[]string{"pagerank", missing}, "pagerank"},
		{[]string{"pagerank", "--max-iter", "2"}, "pagerank"},
		{[]string{"serve", "--cluster", "c", "--peers", "", "--tls-ca", missing, "--tls-cert", missing, "--tls-key", missing}, "serve"},
	} {
		code, stdout, stderr := runCLI(t, tc.args...)
		if code != exitFailure || stdout != "" {
			t.Errorf("%q: exit %d (want %d), stdout %q", tc.args, code, exitFailure, stdout)
		}
		if !strings.HasPrefix(stderr, "ringactor "+tc.cmd+": ") || strings.Count(stderr, "\n") != 1 ||
			strings.Contains(stderr, "level=") || strings.Contains(stderr, "Usage") {
			t.Errorf("%q: stderr is not one plain line:\n%s", tc.args, stderr)
		}
	}
}

// TestEtcdUnreachable checks that serve with an etcd nobody answers at is a
// failure at run time (exit 1, one line), not a usage mistake.
func TestEtcdUnreachable(t *testing.T) {
	cmd := commandProcess(t, "serve", "--cluster", "c", "--etcd", "http://127.0.0.1:1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != exitFailure {
		t.Fatalf("serve --etcd unreachable: %v, want exit %d; stderr:\n%s", err, exitFailure, errb.String())
	}
	if got := errb.String(); !strings.HasPrefix(got, "ringactor serve: ") || strings.Count(got, "\n") != 1 {
		t.Errorf("stderr is not one line:\n%s", got)
	}
}

// TestVersion checks "ringactor version" and "ringactor --version": one line
// on stdout with the release (version.Version), the module version
// ("(devel)" in a test binary) and the Go version.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		code, stdout, stderr := runCLI(t, args...)
		want := "ringactor " + version.Version + " module=(devel) " + runtime.Version() + "\n"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
			want = "ringactor " + version.Version + " module=" + bi.Main.Version + " " + runtime.Version() + "\n"
		}
		if code != exitOK || stdout != want || stderr != "" {
			t.Errorf("%q: exit %d, stdout %q (want %q), stderr %q", args, code, stdout, want, stderr)
		}
	}
	code, _, stderr := runCLI(t, "version", "-h")
	if code != exitOK || !strings.Contains(stderr, "Usage: ringactor version") {
		t.Errorf("version -h: exit %d, stderr %q", code, stderr)
	}
}

// TestQuoteClip checks the truncation of quoted values in messages.
func TestQuoteClip(t *testing.T) {
	if got := quoteClip("ab"); got != `"ab"` {
		t.Errorf("quoteClip(ab) = %s", got)
	}
	if got := quoteClip(strings.Repeat("é", 100)); got != `"`+strings.Repeat("é", 40)+`"…` {
		t.Errorf("quoteClip(200 bytes) = %s", got)
	}
}

// TestHelp checks the documented choice: every form of help prints the usage
// on stderr and exits 0.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{
		{"help"}, {"-h"}, {"-help"}, {"--help"},
		{"help", "demo"}, {"demo", "-h"}, {"demo", "--help"},
		{"help", "bench"}, {"bench", "-h"}, {"bench", "-help"},
	} {
		code, stdout, stderr := runCLI(t, args...)
		if code != exitOK {
			t.Errorf("%q: exit %d, want %d", args, code, exitOK)
		}
		if stdout != "" {
			t.Errorf("%q: wrote to stdout: %q", args, stdout)
		}
		if !strings.Contains(stderr, "Usage") {
			t.Errorf("%q: stderr has no usage:\n%s", args, stderr)
		}
	}
	_, _, top := runCLI(t, "help")
	for name, cmd := range commands {
		if cmd.name != name {
			t.Errorf("commands[%q].name = %q", name, cmd.name)
		}
		if cmd.summary == "" || cmd.run == nil {
			t.Errorf("command %q lacks a summary or run", name)
		}
		if !strings.Contains(top, "  "+name+" ") {
			t.Errorf("usage does not list %q:\n%s", name, top)
		}
	}
	_, _, demo := runCLI(t, "demo", "-h")
	for _, want := range []string{"Usage: ringactor demo", "-n messages", "-v", "running_sum"} {
		if !strings.Contains(demo, want) {
			t.Errorf("demo -h lacks %q:\n%s", want, demo)
		}
	}
	_, _, b := runCLI(t, "bench", "-h")
	for _, want := range []string{"Usage: ringactor bench", "-json", "-quick", "ring_pipelined_msgs_per_s",
		"execute_overhead_ns", "executions_per_s", "elementwise_10m_f32_ratio_vs_copy", "matmul_1024_f64_ratio_vs_gonum"} {
		if !strings.Contains(b, want) {
			t.Errorf("bench -h lacks %q:\n%s", want, b)
		}
	}
}
