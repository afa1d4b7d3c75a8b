package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/internal/devcheck"
)

// exitNoDevice is selftest's exit status when there is no usable CUDA
// device (and --device=sim was not asked for).
const exitNoDevice = 3

// Help text of the selftest command.
const (
	selftestSynopsis    = "[--device | --device=sim] [--quick] [--only STEP[,STEP]] [--json FILE] [--step-timeout D] [-v]"
	selftestDescription = `Verify the whole GPU path on device 0 (--device, the default) or on the
simulated device (--device=sim): the device and driver report, no driver
call blocking beside a live ring, memory visibility through mapped memory,
one-shot results against the CPU, users' device ring kernels byte-equal to
their fallbacks, State zeroed after a restart, measurements (ring round
trip, Execute beside a ring, device epochs, idle wake-up) and, last, a
device fault moving kernels to their fallbacks.

Each step runs in a child process of its own (this binary, re-executed)
with its own timeout: a step that hangs (a driver call that waits on a
ring kernel forever) is sent SIGQUIT, its goroutines' stacks go into the
report, it is killed, and the next step runs in a fresh process. Checks
only the simulator can make are reported as skipped on a GPU.

Steps, in order: ` + "%s" + `.

Exit status: 0 every step passed or was skipped, 1 a step failed, 2 usage
error, 3 no usable CUDA device (one line on stderr says why).
`
)

// selftestCommand is the "selftest" subcommand.
var selftestCommand = command{
	name:    "selftest",
	summary: "verify the GPU path on device 0 (or --device=sim) step by step, each in a child process",
	run:     runSelftestCommand,
}

// selfPrefix and selfEnv are what a step's child process gets before
// "selftest --child STEP" and in its environment: nothing for the ringactor
// binary; the test binary needs its own flags (selftest_test.go).
var (
	selfPrefix []string
	selfEnv    []string
)

// childFlag, first on a step's command line, makes selftest run that one
// step in its own process.
const childFlag = "--child"

// childResultPrefix marks the child's result line on its stdout.
const childResultPrefix = "ringactor-selftest-result "

// selftestReport is what --json writes.
type selftestReport struct {
	Device  map[string]any   `json:"device"`
	Steps   []map[string]any `json:"steps"`
	Seconds float64          `json:"seconds"`
}

func runSelftestCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("selftest", selftestSynopsis, fmt.Sprintf(selftestDescription, wrapWords(strings.ReplaceAll(devcheck.Names(), ",", ", "), 74, len("Steps, in order: "))), stderr)
	var devFlag deviceFlag // pipeline_device.go's: "", "auto" or "sim"
	fs.Var(&devFlag, "device", "the device: device 0 (--device, the default) or the simulated one (--device=sim)")
	quick := fs.Bool("quick", false, "the short configuration: smaller sizes and fewer samples")
	only := fs.String("only", "", "run only these steps (comma-separated names)")
	jsonPath := fs.String("json", "", "write the report as JSON to `FILE`")
	stepTimeout := fs.Duration("step-timeout", 0, "each step's timeout (0: the step's own; on the simulated device ×4)")
	verbose := fs.Bool("v", false, "copy each step's progress lines to stderr")
	// "--child STEP" first (not in the usage): run one step in this process
	// and print its result; the parent re-executes the binary so.
	child := ""
	if len(args) >= 2 && args[0] == childFlag {
		child, args = args[1], args[2:]
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	dev := struct{ sim bool }{devFlag.mode == "sim"}
	if child != "" {
		return runSelftestChild(ctx, child, dev.sim, *quick, stdout, stderr)
	}
	steps, err := selectSteps(*only)
	if err != nil {
		return usageError(fs, "%v", err)
	}
	if *stepTimeout < 0 {
		return usageError(fs, "--step-timeout %v: want 0 or more", *stepTimeout)
	}

	start := time.Now()
	report := selftestReport{Device: map[string]any{}}
	if dev.sim {
		report.Device["kind"] = "sim"
	} else {
		p := cuda.Probe()
		if len(p.Devices) == 0 {
			reason := "no usable CUDA device"
			if p.Err != nil {
				reason += ": " + oneLine(p.Err.Error())
			}
			fmt.Fprintf(stderr, "ringactor selftest: %s (exit status %d; --device=sim runs the steps on the simulated device)\n", reason, exitNoDevice)
			if *jsonPath != "" {
				report.Device["kind"], report.Device["usable"], report.Device["reason"] = "cuda", false, reason
				report.Steps = []map[string]any{}
				if err := writeJSON(*jsonPath, report); err != nil {
					return failure(stderr, "selftest", err)
				}
			}
			return exitNoDevice
		}
		d := p.Devices[0]
		report.Device["kind"], report.Device["usable"] = "cuda", true
		report.Device["name"], report.Device["compute_capability"] = d.Name, d.ComputeCapability.String()
		report.Device["driver_version"] = p.DriverVersionString()
	}

	failed, passed, skipped := 0, 0, 0
	for _, s := range steps {
		if ctx.Err() != nil {
			break
		}
		timeout := s.Timeout
		if dev.sim {
			timeout *= devcheck.SimTimeoutScale
		}
		if *stepTimeout > 0 {
			timeout = *stepTimeout
		}
		res, extra := runStepChild(ctx, s, dev.sim, *quick, timeout, *verbose, stderr)
		entry := map[string]any{}
		for k, v := range res.Figures {
			entry[k] = v
		}
		for k, v := range extra {
			entry[k] = v
		}
		entry["name"], entry["status"], entry["seconds"] = res.Name, res.Status, res.Seconds
		if res.Reason != "" {
			entry["reason"] = res.Reason
		}
		report.Steps = append(report.Steps, entry)
		if s.Name == "report" && res.Status == devcheck.Pass {
			for k, v := range res.Figures {
				report.Device[k] = v
			}
		}
		switch res.Status {
		case devcheck.Pass:
			passed++
		case devcheck.Skip:
			skipped++
		default:
			failed++
		}
		printStepLine(stdout, res)
		if *jsonPath != "" {
			// After every step: a run cut short (the machine's time ran out)
			// still leaves the steps done so far.
			report.Seconds = time.Since(start).Seconds()
			if err := writeJSON(*jsonPath, report); err != nil {
				return failure(stderr, "selftest", err)
			}
		}
	}
	report.Seconds = time.Since(start).Seconds()
	where := "device 0"
	if dev.sim {
		where = "the simulated device"
	} else if name, ok := report.Device["name"].(string); ok {
		where = "device 0 (" + name + ")"
	}
	fmt.Fprintf(stdout, "selftest on %s: %d passed, %d failed, %d skipped in %.1fs\n", where, passed, failed, skipped, report.Seconds)
	if *jsonPath != "" {
		if err := writeJSON(*jsonPath, report); err != nil {
			return failure(stderr, "selftest", err)
		}
	}
	if ctx.Err() != nil {
		return failure(stderr, "selftest", ctx.Err())
	}
	if failed > 0 {
		return exitFailure
	}
	return exitOK
}

// selectSteps returns the steps to run: all but the hidden ones, or those
// named in only (in the order they run).
func selectSteps(only string) ([]devcheck.Step, error) {
	all := devcheck.Steps()
	if only == "" {
		return slices.DeleteFunc(all, func(s devcheck.Step) bool { return s.Hidden }), nil
	}
	want := map[string]bool{}
	for _, n := range strings.Split(only, ",") {
		n = strings.TrimSpace(n)
		if _, ok := devcheck.Lookup(n); !ok {
			return nil, fmt.Errorf("--only: unknown step %q (steps: %s)", n, devcheck.Names())
		}
		want[n] = true
	}
	return slices.DeleteFunc(all, func(s devcheck.Step) bool { return !want[s.Name] }), nil
}

// printStepLine writes one step's line of the summary.
func printStepLine(w io.Writer, r devcheck.Result) {
	line := fmt.Sprintf("%-4s  %-15s %6.1fs", strings.ToUpper(string(r.Status)), r.Name, r.Seconds)
	if r.Reason != "" {
		line += "  " + quoteClip(oneLine(r.Reason))
	} else if len(r.Figures) > 0 {
		keys := make([]string, 0, len(r.Figures))
		for k := range r.Figures {
			if k != "oneshot_jit_log" && k != "nvrtc_archs" && k != "skipped_checks" {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		var parts []string
		for _, k := range keys {
			v := r.Figures[k]
			if f, ok := v.(float64); ok {
				v = fmt.Sprintf("%.4g", f)
			}
			parts = append(parts, fmt.Sprintf("%s=%v", k, v))
		}
		line += "  " + strings.Join(parts, " ")
	}
	fmt.Fprintln(w, line)
}

// writeJSON writes the report to path.
func writeJSON(path string, r selftestReport) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// wrapWords breaks s into lines of at most width columns, the first
// starting at column first.
func wrapWords(s string, width, first int) string {
	var b strings.Builder
	col := first
	for i, w := range strings.Fields(s) {
		if i > 0 {
			if col+1+len(w) > width {
				b.WriteString("\n")
				col = 0
			} else {
				b.WriteString(" ")
				col++
			}
		}
		b.WriteString(w)
		col += len(w)
	}
	return b.String()
}
