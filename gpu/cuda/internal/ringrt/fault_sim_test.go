//go:build linux && cgo

package ringrt

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/hostsim"
	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/messages"
)

// TestSimStreamQuery: the simulated device answers cuStreamQuery as the
// driver does: CUDA_SUCCESS for an empty stream, CUDA_ERROR_NOT_READY while
// work runs or waits, and the failed work's error afterwards, every time
// (sticky), with the call named cuStreamQuery. The model classes it free.
func TestSimStreamQuery(t *testing.T) {
	fd := newFakeDevice(1 << 20)
	s, err := fd.StreamCreate(driverapi.StreamNonBlocking)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = fd.StreamDestroy(s) }()
	if err := fd.StreamQuery(s); err != nil {
		t.Fatalf("empty stream: %v", err)
	}
	release, running := make(chan struct{}), make(chan struct{})
	if err := fd.Enqueue(s, func() error { close(running); <-release; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := fd.Enqueue(s, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	var de *driverapi.DriverError
	if err := fd.StreamQuery(s); !errors.As(err, &de) || de.Result() != driverapi.ErrNotReady || de.Call != "cuStreamQuery" {
		t.Fatalf("queued work: %v", err)
	}
	<-running
	if err := fd.StreamQuery(s); !errors.As(err, &de) || de.Result() != driverapi.ErrNotReady {
		t.Fatalf("running work: %v", err)
	}
	close(release)
	if err := fd.StreamSynchronize(s); err != nil {
		t.Fatal(err)
	}
	if err := fd.StreamQuery(s); err != nil {
		t.Fatalf("finished work: %v", err)
	}
	if err := fd.Enqueue(s, func() error {
		return fakeErr("cuLaunchKernel", driverapi.ErrIllegalAddress, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal address")
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		err := fd.StreamQuery(s)
		return !errors.As(err, &de) || de.Result() != driverapi.ErrNotReady
	})
	for range 2 {
		err := fd.StreamQuery(s)
		if !errors.As(err, &de) || de.Result() != driverapi.ErrIllegalAddress || de.Call != "cuStreamQuery" {
			t.Fatalf("failed work: %v", err)
		}
		if f := launchFault(err, 0); f == nil || !errors.Is(f, gpu.ErrDevice) {
			t.Fatalf("failed work is no fault: %v", f)
		}
	}
	if launchFault(fakeErr("cuStreamQuery", driverapi.ErrNotReady, "CUDA_ERROR_NOT_READY", ""), 0) != nil || launchFault(nil, 0) != nil {
		t.Fatal("a running or finished stream reported as a fault")
	}
	if c := hostsim.ClassOf("cuStreamQuery"); c != hostsim.CallFree {
		t.Fatalf("cuStreamQuery classed %v", c)
	}
	if err := fd.StreamQuery(driverapi.Stream{}); err != nil {
		t.Fatalf("NULL stream: %v", err)
	}
}

// waitFor polls cond until it holds, failing at the hang guard.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := hangDeadline(t) // a hang guard, not a bound on speed
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached: hung")
		}
		runtime.Gosched()
	}
}

// TestRingKernelFaultFromStreamQuery: Kernel.Fault asks cuStreamQuery
// on the ring's stream. A running ring (strict hazard model) is no fault
// and keeps answering; a handler that traps is reported as a
// gpu.DeviceFailed error wrapping the query's CUDA_ERROR_LAUNCH_FAILED,
// and Abandon then releases the ring's memory.
func TestRingKernelFaultFromStreamQuery(t *testing.T) {
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
	k, err := b.Launch(p, Config{Capacity: 8, Threads: 4})
	if err != nil {
		t.Fatal(err)
	}
	k.Activate()
	for i := range 3 {
		if err := k.Fault(); err != nil {
			t.Fatalf("running ring: %v", err)
		}
		req := saxpyReq{N: 4, A: 2, X: [64]float32{1, 2, 3, 4}}
		if h, got := exchangeProgram(t, k, uint64(i), messages.FixedBytes(&req)); h.Status != ring.StatusOK || len(got) == 0 {
			t.Fatalf("message %d: status %d", i, h.Status)
		}
	}
	if _, err := k.TrySubmit(1, 99, messages.FixedBytes(&saxpyReq{N: 4, A: 13})); err != nil {
		t.Fatal(err)
	}
	var fault error
	waitFor(t, func() bool { fault = k.Fault(); return fault != nil })
	var de *gpu.DeviceError
	var dr *driverapi.DriverError
	if !errors.As(fault, &de) || de.Kind != gpu.DeviceFailed || !errors.As(fault, &dr) ||
		dr.Result() != driverapi.ErrLaunchFailed || dr.Call != "cuStreamQuery" || !strings.Contains(dr.Message, "trapped") {
		t.Fatalf("fault: %v", fault)
	}
	if again := k.Fault(); again == nil {
		t.Fatal("the fault is not sticky")
	}
	k.Abandon()
	if _, _, ok := k.TryPoll(); ok {
		t.Fatal("a reply to the trapping message")
	}
}
