package actors

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ringactor/ringactor/lifecycle"
)

// A Request to a kernel whose gate is closed waits in its queue until its
// context ends: the error says why (never activated, or deactivated) and
// still matches the context's error.
func TestRequestToInactiveKernelSaysWhy(t *testing.T) {
	rt := newTestRuntime(t)
	k := mustLaunch(t, rt, NewStatelessKernel("q", vectorAdd), false)
	request := func() error {
		// The deadline only bounds a wait that cannot end otherwise: the
		// gate is closed, so the message is never handled.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		_, err := k.Request(ctx, addReq{A: []float32{1}, B: []float32{2}})
		return err
	}
	for _, tc := range []struct {
		name, why string
		before    func() error
	}{
		{"never activated", "launched and never activated", func() error { return nil }},
		{"deactivated", "deactivated", func() error {
			if err := k.Activate(testCtx(t)); err != nil {
				return err
			}
			return k.Deactivate(testCtx(t))
		}},
	} {
		if err := tc.before(); err != nil {
			t.Fatal(err)
		}
		err := request()
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrNotActive) {
			t.Fatalf("%s: Request = %v, want context.DeadlineExceeded and ErrNotActive", tc.name, err)
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, `kernel "q": context deadline exceeded (kernel is not active: the message waited in its queue; `) ||
			!strings.Contains(msg, tc.why) {
			t.Fatalf("%s: Request = %q", tc.name, msg)
		}
	}
	// Active again: the same request is answered, and a deadline that
	// ends says nothing about the gate.
	if err := k.Reactivate(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if r, err := k.Request(testCtx(t), addReq{A: []float32{1}, B: []float32{2}}); err != nil || r.Sum[0] != 3 {
		t.Fatalf("active: %v, %v", r, err)
	}
	if err := waitErr("q", lifecycle.Active, context.DeadlineExceeded); errors.Is(err, ErrNotActive) || strings.Contains(err.Error(), "not active") {
		t.Fatalf("an active kernel's wait error = %v", err)
	}
}

// Launch with Activated opens the gate before it returns.
func TestLaunchActivated(t *testing.T) {
	rt := newTestRuntime(t)
	k, err := Launch(testCtx(t), rt, NewStatelessKernel("activated", vectorAdd), Activated())
	if err != nil {
		t.Fatal(err)
	}
	if st := k.State(); st != lifecycle.Active {
		t.Fatalf("state after Launch(Activated()) = %v, want active", st)
	}
	if r, err := k.Request(testCtx(t), addReq{A: []float32{1}, B: []float32{2}}); err != nil || r.Sum[0] != 3 {
		t.Fatalf("Request = %v, %v", r, err)
	}
	// Without the option the gate stays closed; a nil option is ignored.
	k2, err := Launch(testCtx(t), rt, NewStatelessKernel("closed", vectorAdd), nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := k2.State(); st != lifecycle.Launched {
		t.Fatalf("state after Launch = %v, want launched", st)
	}
	// A launch that fails (its context has ended) leaves nothing behind:
	// the id can be launched again.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	def := NewStatelessKernel("again", vectorAdd)
	if _, err := Launch(ctx, rt, def, Activated()); err == nil {
		t.Fatal("Launch with an ended context succeeded")
	}
	if _, err := Launch(testCtx(t), rt, NewStatelessKernel("again", vectorAdd), Activated()); err != nil {
		t.Fatalf("Launch after a failed one: %v", err)
	}
}

// A declaration error that names the kernel already names it once.
func TestDeviceRingKernelErrorNamesKernelOnce(t *testing.T) {
	type sliceReq struct{ X []float32 }
	_, err := NewDeviceRingKernel[sliceReq, saxpyResp]("d", DeviceSource{Code: saxpyCUDA, Entry: "saxpy"},
		func() Handler[sliceReq, saxpyResp] { return nil })
	if !errors.Is(err, ErrInvalidKernel) {
		t.Fatalf("error = %v, want ErrInvalidKernel", err)
	}
	if n := strings.Count(err.Error(), `kernel "d"`); n != 1 {
		t.Fatalf("error names the kernel %d times: %v", n, err)
	}
}
