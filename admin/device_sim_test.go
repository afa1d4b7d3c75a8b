//go:build linux && cgo

package admin_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/admin"
	"github.com/ringactor/ringactor/gpu/cuda/simdevice"
	"github.com/ringactor/ringactor/gpu/ringmsg"
)

// TestDeviceKernelPercentiles: a device ring kernel on the simulated
// device reports its latency percentiles on /kernels and its histogram on
// /api/histogram, as a CPU kernel does (the dashboard showed "–" for
// them).
func TestDeviceKernelPercentiles(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
	defer cancel()
	sim := simdevice.NewBackend(64 << 20)
	t.Cleanup(func() { _ = sim.Close() })
	rt, err := actors.NewRuntime(actors.WithBackends(sim), actors.WithLogger(actors.DiscardLogger()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	def, err := actors.NewDeviceKernel[ringmsg.ReduceMsg, ringmsg.ScalarReply]("sum", ringmsg.Sum)
	if err != nil {
		t.Fatal(err)
	}
	k, err := actors.Launch(ctx, rt, def)
	if err == nil {
		err = k.Activate(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	if k.Placement() != "cuda:sim" {
		t.Fatalf("placement %q, want the simulated device", k.Placement())
	}
	const n = 50
	for i := range n {
		m := ringmsg.ReduceMsg{N: 1}
		m.X[0] = float32(i)
		if r, err := k.Request(ctx, m); err != nil || r.Value != float64(i) {
			t.Fatalf("request %d: %v, %v", i, r, err)
		}
	}
	if err := k.Terminate(ctx); err != nil { // every outcome recorded
		t.Fatal(err)
	}
	srv := httptest.NewServer(admin.New(admin.WithRuntime(rt)))
	defer srv.Close()
	var snap admin.Snapshot
	getJSON(t, srv.URL+"/kernels", &snap)
	if len(snap.Kernels) != 1 || snap.Kernels[0].Placement != "cuda:sim" {
		t.Fatalf("/kernels %+v", snap.Kernels)
	}
	for name, p := range map[string]admin.Percentiles{"latency": snap.Kernels[0].Latency, "queue_delay": snap.Kernels[0].Queue, "handler": snap.Kernels[0].Handler} {
		if p.Count == 0 || p.Count > n || p.P50 < 0 || p.P90 < p.P50 || p.P99 < p.P90 {
			t.Errorf("%s percentiles %+v, want up to %d messages with ordered percentiles", name, p, n)
		}
	}
	// A round trip through the device takes time: its latency and device
	// time are not zero (the page shows "–" for 0).
	if lat, dev := snap.Kernels[0].Latency, snap.Kernels[0].Handler; lat.P50 <= 0 || lat.Mean <= 0 || dev.P50 <= 0 {
		t.Errorf("latency %+v, device time %+v: want positive", lat, dev)
	}
	var h admin.Histogram
	getJSON(t, srv.URL+"/api/histogram?kernel=sum&of=latency", &h)
	if h.Count != snap.Kernels[0].Latency.Count || len(h.Buckets) == 0 || h.Summary.P50 != snap.Kernels[0].Latency.P50 {
		t.Errorf("/api/histogram %+v, /kernels' latency %+v", h, snap.Kernels[0].Latency)
	}
}
