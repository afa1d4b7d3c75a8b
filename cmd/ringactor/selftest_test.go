package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/internal/devcheck"
)

// The selftest's children are this test binary run as the command (see
// TestMain): its own flags first, then "--" and the command line.
func init() {
	selfPrefix = []string{"-test.run=^$", "--"}
	selfEnv = []string{mainEnv + "=1"}
}

// readSelftestJSON reads the report selftest --json wrote.
func readSelftestJSON(t *testing.T, path string) (device map[string]any, steps []map[string]any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Device map[string]any   `json:"device"`
		Steps  []map[string]any `json:"steps"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if r.Device == nil || r.Steps == nil {
		t.Fatalf("report without device or steps:\n%s", b)
	}
	return r.Device, r.Steps
}

// TestSelftestSim runs `ringactor selftest --device=sim --quick` as CI
// does: every step in a child process, each passing (at least six), the
// JSON report of the documented shape, a summary line, exit 0.
func TestSelftestSim(t *testing.T) {
	// Proto.Actor's own races must not turn a child's exit status into a
	// failure under -race (see racecheck).
	t.Setenv("GORACE", "exitcode=0")
	path := filepath.Join(t.TempDir(), "selftest.json")
	args := []string{"selftest", "--device=sim", "--quick", "--json", path}
	want := len(strings.Split(devcheck.Names(), ","))
	if raceEnabled {
		// Every step starts a race-instrumented process: six steps keep the
		// test well under a minute (devcheck's own test runs every step
		// under -race, in process; CI's smoke runs the whole command).
		args = append(args, "--only", "report,hazard-model,visibility,restart,epoch,wake")
		want = 6
	}
	code, stdout, stderr := runCLI(t, args...)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	device, steps := readSelftestJSON(t, path)
	if device["kind"] != "sim" || device["backend"] != "cuda:sim" || device["nvrtc_target"] == nil {
		t.Errorf("device %v", device)
	}
	passed := 0
	for _, s := range steps {
		name, _ := s["name"].(string)
		status, _ := s["status"].(string)
		if _, ok := s["seconds"].(float64); !ok || name == "" {
			t.Errorf("step without name or seconds: %v", s)
		}
		switch status {
		case "pass":
			passed++
		case "skip":
			if s["reason"] == "" {
				t.Errorf("step %s skipped without a reason", name)
			}
		default:
			t.Errorf("step %s: %s: %v", name, status, s["reason"])
		}
	}
	if passed < 6 || len(steps) != want {
		t.Fatalf("%d of %d steps passed, want every one of %d (at least 6)\n%s", passed, len(steps), want, stdout)
	}
	if !strings.Contains(stdout, "selftest on the simulated device: ") || !strings.Contains(stdout, "0 failed") {
		t.Fatalf("no summary line:\n%s", stdout)
	}
}

// TestSelftestNoDevice: on a machine without a usable CUDA device (this
// one: libcuda present, no GPU) `selftest --device` says so in one line
// and exits with its own status, 3.
func TestSelftestNoDevice(t *testing.T) {
	if r := cuda.Probe(); len(r.Devices) > 0 {
		t.Skipf("this machine has a CUDA device: %s", r)
	}
	path := filepath.Join(t.TempDir(), "selftest.json")
	for _, args := range [][]string{{"selftest"}, {"selftest", "--device", "--json", path}} {
		code, stdout, stderr := runCLI(t, args...)
		if code != exitNoDevice || stdout != "" || strings.Count(stderr, "\n") != 1 ||
			!strings.HasPrefix(stderr, "ringactor selftest: no usable CUDA device") {
			t.Fatalf("%q: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	device, steps := readSelftestJSON(t, path)
	if device["usable"] != false || device["reason"] == "" || len(steps) != 0 {
		t.Fatalf("device %v, steps %v", device, steps)
	}
}

// TestSelftestHungStepKilled runs the hidden step that never returns: its
// process is sent SIGQUIT at the step's timeout, the step fails with a
// reason naming the timeout and its last progress line, the report holds
// every goroutine's stack (the hung one's included), and selftest exits 1.
func TestSelftestHungStepKilled(t *testing.T) {
	t.Setenv(devcheck.HangStepEnv, "1")
	path := filepath.Join(t.TempDir(), "selftest.json")
	code, stdout, stderr := runCLI(t, "selftest", "--device=sim", "--only", "hang", "--step-timeout", "5s", "--json", path)
	if code != exitFailure {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFailure, stdout, stderr)
	}
	_, steps := readSelftestJSON(t, path)
	if len(steps) != 1 {
		t.Fatalf("steps %v", steps)
	}
	s := steps[0]
	reason, _ := s["reason"].(string)
	stacks, _ := s["stacks"].(string)
	if s["name"] != "hang" || s["status"] != "fail" || !strings.Contains(reason, "timed out after 5s") ||
		!strings.Contains(reason, "hanging until killed") {
		t.Fatalf("step %v", s)
	}
	if !strings.Contains(stacks, "goroutine ") || !strings.Contains(stacks, "devcheck.hangForever") {
		t.Fatalf("no goroutine stacks of the hung step in the report:\n%s", stacks)
	}
	if !strings.Contains(stdout, "FAIL  hang") || !strings.Contains(stdout, "1 failed") {
		t.Fatalf("summary:\n%s", stdout)
	}
}

// TestSelftestUsage: an unknown step or device is a usage error; the
// hidden hang step is unknown without its environment hook.
func TestSelftestUsage(t *testing.T) {
	for _, args := range [][]string{
		{"selftest", "--only", "nosuch"},
		{"selftest", "--only", "hang"},
		{"selftest", "--device=tpu"},
		{"selftest", "--step-timeout", "-1s"},
		{"selftest", "extra"},
	} {
		code, _, stderr := runCLI(t, args...)
		if code != exitUsage || !strings.HasPrefix(stderr, "ringactor selftest: ") {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
		}
	}
}
