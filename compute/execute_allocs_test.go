package compute

import (
	"fmt"
	"testing"

	"github.com/ringactor/ringactor/gpu"
)

// TestExecuteAllocs pins the allocations of Execute on a built-in kernel:
// none at all into a caller's buffer, with telemetry off and on, and
// with a scalar kernel; and on a pooled output only the result's handle
// (the *gpu.UnifiedBuffer returned: handles are not recycled, so that a
// use after Free stays a detected ErrFreed). (Skipped under the race detector, whose sync.Pool
// drops items at random.)
func TestExecuteAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	for _, telemetry := range []bool{false, true} {
		t.Run(fmt.Sprintf("telemetry=%v", telemetry), func(t *testing.T) {
			rt, ctx := newTestOrchestrator(t, telemetryIf(t, telemetry)), testCtx(t)
			a, b, dst := f32(t, 1.5), f32(t, 2.25), f32(t, 0)
			in := bufs(a, b)
			into := IntoBuffer(dst)
			add := func() {
				if _, err := rt.Execute(ctx, "add", in, nil, into); err != nil {
					t.Fatal(err)
				}
			}
			scalars := WithScalars(2)
			scale := func() {
				if _, err := rt.Execute(ctx, "scale", in[:1], nil, into, scalars); err != nil {
					t.Fatal(err)
				}
			}
			pooled := func() {
				out, err := rt.Execute(ctx, "add", in, nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := out.Free(); err != nil {
					t.Fatal(err)
				}
			}
			for _, c := range []struct {
				name string
				f    func()
				max  float64
			}{{"add into", add, 0}, {"scale into", scale, 0}, {"add pooled", pooled, 1}} {
				c.f() // first use: caches, pools
				if got := testing.AllocsPerRun(200, c.f); got > c.max {
					t.Errorf("%s: %v allocations per Execute, want at most %v", c.name, got, c.max)
				}
			}
			if s, err := gpu.HostSlice[float32](dst); err != nil || s[0] != 3 {
				t.Fatalf("scale 1.5 × 2 = %v (%v)", s, err)
			}
		})
	}
}

// TestExecuteBatchAllocs pins ExecuteBatch's allocations: the returned
// slice and one block of output headers, nothing per item, whatever the
// batch size (it made one handle per item, n+1 in all, before
// gpu.Pool.GetBatch).
func TestExecuteBatchAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	rt, ctx := newTestOrchestrator(t, telemetryIf(t, true)), testCtx(t)
	for _, n := range []int{1, 16, 256} {
		items := make([][]*gpu.UnifiedBuffer, n)
		for i := range items {
			items[i] = bufs(f32(t, float32(i)), f32(t, 1))
		}
		batch := func() {
			outs, err := rt.ExecuteBatch(ctx, "add", items)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range outs {
				if err := o.Free(); err != nil {
					t.Fatal(err)
				}
			}
		}
		batch()
		if got := testing.AllocsPerRun(100, batch); got > 2 {
			t.Errorf("%v allocations per ExecuteBatch of %d items, want at most 2", got, n)
		}
	}
}
