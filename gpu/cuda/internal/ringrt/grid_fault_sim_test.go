//go:build linux && cgo

package ringrt

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
	"github.com/ringactor/ringactor/messages"
)

// fakeClock is a probe clock the test moves by hand.
type fakeClock struct{ t atomic.Int64 }

func (c *fakeClock) now() time.Duration  { return time.Duration(c.t.Load()) }
func (c *fakeClock) add(d time.Duration) { c.t.Add(int64(d)) }

// streamQueries is how many cuStreamQuery calls the simulated device saw
// (each fault query is one hop to the device's thread and one query).
func streamQueries(fd simDevice) int { return fd.Hazards().Calls("cuStreamQuery") }

// pollFaults has n goroutines call k.Fault() polls times each, for each
// of their kernels, all at one reading of the clock, and fails on a fault.
func pollFaults(t *testing.T, ks []*Kernel, polls int) {
	t.Helper()
	var wg sync.WaitGroup
	faults := make(chan error, len(ks))
	start := make(chan struct{})
	for _, k := range ks {
		wg.Go(func() {
			<-start
			for range polls {
				if err := k.Fault(); err != nil {
					faults <- err
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	close(faults)
	for err := range faults {
		t.Fatalf("a running grid: %v", err)
	}
}

// TestGridFaultQueryShared: busy mailboxes of one grid share its fault
// query. 1 or 64 mailboxes, each calling Fault 8 times per interval of
// the probe's clock (moved by the test, not by time), make exactly one
// cuStreamQuery per interval: the count does not grow with the
// mailboxes (before the probe, every call was a hop and a query: 64×8
// per interval). A kernel from LaunchRingProgram, asked from 8
// goroutines, is rate-limited the same way on its own stream.
func TestGridFaultQueryShared(t *testing.T) {
	const intervals, polls = 20, 8
	for _, n := range []int{1, 64} {
		t.Run(fmt.Sprintf("mailboxes=%d", n), func(t *testing.T) {
			b, fd := newSimBackend(t, nil)
			p := loadSaxpy(t, b)
			ks := make([]*Kernel, n)
			for i := range ks {
				k, err := b.Open(p, Config{Threads: 4})
				if err != nil {
					t.Fatal(err)
				}
				k.Activate()
				ks[i] = k
			}
			var clk fakeClock
			g := ks[0].grid
			g.k.probe.now = clk.now
			for i := range intervals {
				before := streamQueries(fd)
				pollFaults(t, ks, polls)
				if q := streamQueries(fd) - before; q != 1 {
					t.Fatalf("interval %d: %d mailboxes asking %d times each made %d stream queries, want 1", i, n, polls, q)
				}
				clk.add(faultProbeInterval / 2)
				before = streamQueries(fd)
				pollFaults(t, ks, polls)
				if q := streamQueries(fd) - before; q != 0 {
					t.Fatalf("interval %d: %d stream queries within the interval, want 0", i, q)
				}
				clk.add(faultProbeInterval - faultProbeInterval/2)
			}
			// The grid still serves its mailboxes.
			req := saxpyReq{N: 4, A: 2, X: [64]float32{1, 2, 3, 4}}
			if h, _ := exchangeProgram(t, ks[n-1], 1, messages.FixedBytes(&req)); h.CorrelationID != 1 {
				t.Fatal("no reply")
			}
			for _, k := range ks {
				if err := k.Close(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	t.Run("launch", func(t *testing.T) {
		b, fd := newSimBackend(t, nil)
		p := loadSaxpy(t, b)
		k, err := b.Launch(p, Config{Capacity: 8, Threads: 4})
		if err != nil {
			t.Fatal(err)
		}
		k.Activate()
		var clk fakeClock
		k.probe.now = clk.now
		callers := make([]*Kernel, 8) // 8 goroutines asking the one kernel
		for i := range callers {
			callers[i] = k
		}
		for i := range intervals {
			before := streamQueries(fd)
			pollFaults(t, callers, polls)
			if q := streamQueries(fd) - before; q != 1 {
				t.Fatalf("interval %d: %d stream queries, want 1", i, q)
			}
			clk.add(faultProbeInterval)
		}
		if err := k.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}

// TestGridFaultSeenByEveryMailbox: a trap in one mailbox's handler kills
// the grid; the next query of the shared probe (one interval later on its
// clock) reports it to every mailbox, the one beside included, as a
// gpu.DeviceFailed error wrapping the query's CUDA_ERROR_LAUNCH_FAILED;
// the fault then stays (sticky) and is answered without further queries,
// and the device's close releases the faulted grid and its mailboxes.
func TestGridFaultSeenByEveryMailbox(t *testing.T) {
	fd := newFakeDevice(256 << 20)
	b := newSimulated(t, fd)
	defer func() {
		_ = b.d.Close() // a faulted context may report its fault again
		if l := fd.Leaks(); l != "" {
			t.Errorf("after Close the backend left %s", l)
		}
	}()
	spec := saxpySpec()
	spec.Code = strings.Replace(saxpyCode, "if (req->N > 64) {", "if (req->A == 13.0f) {\n\t\t__trap();\n\t}\n\tif (req->N > 64) {", 1)
	p := loadProgram(t, b, spec)
	ks := make([]*Kernel, 4)
	for i := range ks {
		k, err := b.Open(p, Config{Threads: 4})
		if err != nil {
			t.Fatal(err)
		}
		k.Activate()
		ks[i] = k
	}
	var clk fakeClock
	ks[0].grid.k.probe.now = clk.now
	pollFaults(t, ks, 4)
	req := saxpyReq{N: 4, A: 2, X: [64]float32{1, 2, 3, 4}}
	if h, _ := exchangeProgram(t, ks[1], 1, messages.FixedBytes(&req)); h.CorrelationID != 1 {
		t.Fatal("no reply")
	}
	if _, err := ks[0].TrySubmit(1, 2, messages.FixedBytes(&saxpyReq{N: 4, A: 13})); err != nil {
		t.Fatal(err)
	}
	// The answer stands for an interval: the test moves the clock on
	// until a query sees the grid gone, asking from the mailbox beside.
	var fault error
	waitFor(t, func() bool {
		clk.add(faultProbeInterval)
		fault = ks[1].Fault()
		return fault != nil
	})
	var de *gpu.DeviceError
	var dr *driverapi.DriverError
	if !errors.As(fault, &de) || de.Kind != gpu.DeviceFailed || !errors.As(fault, &dr) ||
		dr.Result() != driverapi.ErrLaunchFailed || dr.Call != "cuStreamQuery" || !strings.Contains(dr.Message, "trapped") {
		t.Fatalf("fault: %v", fault)
	}
	before := streamQueries(fd)
	for range 3 {
		for i, k := range ks {
			if err := k.Fault(); !errors.Is(err, fault) {
				t.Fatalf("mailbox %d after the fault: %v", i, err)
			}
		}
		clk.add(faultProbeInterval)
	}
	if q := streamQueries(fd) - before; q != 0 {
		t.Fatalf("%d stream queries after the fault was seen, want 0 (sticky)", q)
	}
}
