//go:build linux && cgo

package compute

import (
	"errors"
	"testing"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/simdevice"
)

// TestExecuteSpreadsOverDevices: with two simulated CUDA devices, Execute
// takes turns between them (it used the first device only); a call whose
// input lives on a device runs there; OnBackend pins a device; a device
// that faulted is skipped.
func TestExecuteSpreadsOverDevices(t *testing.T) {
	sims := simdevice.NewBackends(2, 64<<20)
	t.Cleanup(func() {
		for _, s := range sims {
			_ = s.Close()
		}
	})
	orc := newTestOrchestrator(t, WithBackends(sims[0], sims[1]), WithAccelerator(gpu.PreferCUDA))
	ctx := testCtx(t)
	run := func(in *gpu.UnifiedBuffer, opts ...ExecOption) (string, *gpu.UnifiedBuffer) {
		t.Helper()
		var p ExecProfile
		out, err := orc.Execute(ctx, "relu", bufs(in), nil, append(opts, Profiled(&p))...)
		if err != nil {
			t.Fatal(err)
		}
		if got := read[float32](t, out); got[0] != 0 || got[1] != 2 {
			t.Fatalf("relu on %s: %v", p.Backend, got)
		}
		return p.Backend, out
	}
	count := map[string]int{}
	for range 8 {
		b, out := run(f32(t, -1, 2))
		count[b]++
		_ = out.Free()
	}
	if count["cuda:sim0"] != 4 || count["cuda:sim1"] != 4 {
		t.Fatalf("8 calls ran on %v, want 4 on each simulated device", count)
	}

	// A buffer on a device stays there: its next call runs on it.
	x := f32(t, -1, 2)
	first, _ := run(x, OnBackend("cuda:sim1"))
	if first != "cuda:sim1" {
		t.Fatalf("OnBackend(cuda:sim1) ran on %s", first)
	}
	for range 4 {
		if b, out := run(x); b != "cuda:sim1" {
			t.Fatalf("an input on cuda:sim1 ran on %s", b)
		} else {
			_ = out.Free()
		}
	}

	// A faulted device is skipped.
	sims[0].MarkFailed(errors.New("injected fault"))
	for range 4 {
		if b, out := run(f32(t, -1, 2)); b != "cuda:sim1" {
			t.Fatalf("after cuda:sim0 faulted a call ran on %s", b)
		} else {
			_ = out.Free()
		}
	}
}
