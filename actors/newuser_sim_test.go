//go:build linux && cgo

package actors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ringactor/ringactor/gpu/cuda/hostsim"
)

// A device ring kernel reports where it will run from Launch on, not the
// CPU until its actor has started; the first build of its program logs a
// line as it starts and one as it ends, with the cache path.
// placementAtLaunchRuns makes each run's source new to the process.
var placementAtLaunchRuns atomic.Int64

func TestDeviceRingKernelPlacementAtLaunchAndCompileLog(t *testing.T) {
	if _, err := hostsim.BuildProgram(context.Background(), "probe", "int x;"); errors.Is(err, hostsim.ErrNoHostCompiler) {
		t.Skip("no host compiler for the simulated device")
	}
	cache := t.TempDir()
	t.Setenv(hostsim.CacheDirEnv, cache)
	var logs syncBuf
	rt := simRuntime(t, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	// A source built nowhere yet, in this process either (go test -count=2
	// runs the test again beside the first run's compiled program).
	code := fmt.Sprintf("%s\n// %s run %d\n", saxpyCUDA, t.Name(), placementAtLaunchRuns.Add(1))
	def, err := NewDeviceRingKernel("saxpy-at-launch", DeviceSource{Code: code, Entry: "saxpy"}, newSaxpyFallback("saxpy-at-launch"))
	if err != nil {
		t.Fatal(err)
	}
	k := mustLaunch(t, rt, def, false)
	if got := k.Placement(); got != "cuda:sim" {
		t.Errorf("Placement right after Launch = %q, want cuda:sim", got)
	}
	if got := k.Telemetry().Backend; got != "cuda:sim" {
		t.Errorf("Telemetry().Backend right after Launch = %q, want cuda:sim", got)
	}
	if err := k.Activate(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if r, err := k.Request(testCtx(t), saxpyReq{A: 2, N: 1, X: [vecLen]float32{3}, Y: [vecLen]float32{1}}); err != nil || r.Z[0] != 7 {
		t.Fatalf("reply %v, %v", r.Z[0], err)
	}
	if got := k.Placement(); got != "cuda:sim" {
		t.Errorf("Placement after Activate = %q", got)
	}
	if err := k.Terminate(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	path, built := hostsim.CachedProgram(def.prog.src.Host)
	if !built || filepath.Dir(path) != cache {
		t.Fatalf("cached program %s (built %v), want it in %s", path, built, cache)
	}
	for _, want := range []string{
		"compiling a device ring program", "compiled a device ring program",
		"kernel=saxpy-at-launch", "cache=" + path, "placement=cuda:sim",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "compil"); n != 2 {
		t.Errorf("%d lines about compiling, want 2:\n%s", n, out)
	}

	// Built once: a second kernel of the same source compiles nothing and
	// says nothing about it.
	logs.mu.Lock()
	logs.b.Reset()
	logs.mu.Unlock()
	def2, err := NewDeviceRingKernel("saxpy-at-launch-2", DeviceSource{Code: code, Entry: "saxpy"}, newSaxpyFallback("saxpy-at-launch-2"))
	if err != nil {
		t.Fatal(err)
	}
	k2 := mustLaunch(t, rt, def2, false)
	if err := k2.Terminate(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if out := logs.String(); strings.Contains(out, "compil") {
		t.Errorf("a cached program logged a compilation:\n%s", out)
	}
}
