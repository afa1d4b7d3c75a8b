package supervision_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/supervision"
)

func TestActionString(t *testing.T) {
	want := map[supervision.Action]string{
		supervision.Fail: "fail", supervision.Retry: "retry",
		supervision.Fallback: "fallback", supervision.Split: "split",
	}
	for a, w := range want {
		if a.String() != w {
			t.Errorf("%d.String() = %q, want %q", a, a.String(), w)
		}
	}
}

func TestDefaultRecovery(t *testing.T) {
	r := supervision.DefaultRecovery()
	if !r.Enabled || r.Retries != 3 || !r.Fallback || !r.SplitOnOOM {
		t.Errorf("DefaultRecovery() = %+v", r)
	}
	for n, want := range []time.Duration{1, 2, 4} {
		if got := r.Backoff.Delay(n + 1); got != want*time.Millisecond {
			t.Errorf("retry %d backoff %v, want %v", n+1, got, want*time.Millisecond)
		}
	}
}

func TestRecoveryClassify(t *testing.T) {
	full := supervision.Recovery{Enabled: true, Retries: 2, Fallback: true, SplitOnOOM: true}
	noSplit := full
	noSplit.SplitOnOOM = false
	noFallback := full
	noFallback.Fallback = false
	neither := noSplit
	neither.Fallback = false

	busy := &gpu.DeviceError{Kind: gpu.DeviceBusyTransient, Backend: "cuda"}
	oom := &gpu.DeviceError{Kind: gpu.DeviceOutOfMemory, Backend: "cuda"}
	failed := &gpu.DeviceError{Kind: gpu.DeviceFailed, Backend: "cuda"}
	unavailable := &gpu.DeviceError{Kind: gpu.DeviceUnavailable, Backend: "cuda"}

	cases := []struct {
		name     string
		r        supervision.Recovery
		err      error
		onDevice bool
		attempt  int
		want     supervision.Action
	}{
		{"disabled transient", supervision.Recovery{Retries: 3, Fallback: true, SplitOnOOM: true}, busy, true, 0, supervision.Fail},
		{"disabled oom", supervision.Recovery{Retries: 3, Fallback: true, SplitOnOOM: true}, oom, true, 0, supervision.Fail},
		{"nil error", full, nil, true, 0, supervision.Fail},
		{"canceled", full, context.Canceled, true, 0, supervision.Fail},
		{"deadline", full, fmt.Errorf("run: %w", context.DeadlineExceeded), true, 0, supervision.Fail},
		{"canceled wrapped in device error", full, &gpu.DeviceError{Kind: gpu.DeviceBusyTransient, Err: context.Canceled}, true, 0, supervision.Fail},
		{"compilation", full, &gpu.CompilationError{Kernel: "k", Err: errors.New("syntax")}, true, 0, supervision.Fail},
		{"argument", full, &gpu.ArgumentError{Kernel: "k", Arg: "scalars", Reason: "too many", Err: gpu.ErrArgument}, true, 0, supervision.Fail},
		{"execution", full, &gpu.ExecutionError{Kernel: "k", Err: errors.New("nan")}, true, 0, supervision.Fail},
		{"execution wrapping transient", full, &gpu.ExecutionError{Kernel: "k", Err: busy}, true, 0, supervision.Fail},
		{"transient first try", full, busy, true, 0, supervision.Retry},
		{"transient last retry", full, busy, true, 1, supervision.Retry},
		{"transient wrapped", full, fmt.Errorf("x: %w", busy), false, 1, supervision.Retry},
		{"transient exhausted on device", full, busy, true, 2, supervision.Fallback},
		{"transient exhausted on cpu", full, busy, false, 2, supervision.Fail},
		{"transient exhausted no fallback", noFallback, busy, true, 2, supervision.Fail},
		{"transient no retries", supervision.Recovery{Enabled: true, Fallback: true}, busy, true, 0, supervision.Fallback},
		{"oom split", full, oom, true, 0, supervision.Split},
		{"oom split on cpu", full, oom, false, 5, supervision.Split},
		{"oom fallback", noSplit, oom, true, 0, supervision.Fallback},
		{"oom on cpu no split", noSplit, oom, false, 0, supervision.Fail},
		{"oom no split no fallback", neither, oom, true, 0, supervision.Fail},
		{"device failed on device", full, failed, true, 0, supervision.Fallback},
		{"device failed wrapped", full, fmt.Errorf("launch: %w", failed), true, 0, supervision.Fallback},
		{"device failed on cpu", full, failed, false, 0, supervision.Fail},
		{"device failed no fallback", noFallback, failed, true, 0, supervision.Fail},
		{"device unavailable on device", full, unavailable, true, 0, supervision.Fallback},
		{"memory error", full, &gpu.MemoryError{Op: "copy", Reason: "freed"}, true, 0, supervision.Fail},
		{"plain error", full, errors.New("??"), true, 0, supervision.Fail},
	}
	for _, c := range cases {
		if got := c.r.Classify(c.err, c.onDevice, c.attempt); got != c.want {
			t.Errorf("%s: Classify(%v, onDevice=%v, attempt=%d) = %v, want %v", c.name, c.err, c.onDevice, c.attempt, got, c.want)
		}
	}
}

func TestRecoveryWaitCancelled(t *testing.T) {
	r := supervision.Recovery{Backoff: supervision.Backoff{Initial: time.Hour, Max: time.Hour, Multiplier: 2}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.Wait(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait(cancelled) = %v, want context.Canceled", err)
	}

	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	if err := r.Wait(ctx, 3); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait(deadline) = %v, want context.DeadlineExceeded", err)
	}
}

func TestRecoveryWaitSleepsBackoff(t *testing.T) {
	r := supervision.Recovery{Backoff: supervision.Backoff{Initial: 5 * time.Millisecond, Max: time.Second, Multiplier: 2}}
	start := time.Now()
	if err := r.Wait(context.Background(), 2); err != nil {
		t.Fatalf("Wait = %v, want nil", err)
	}
	if el := time.Since(start); el < 10*time.Millisecond {
		t.Errorf("Wait(2) returned after %v, want ≥ Delay(2) = 10ms", el)
	}
}

// BUG (recovery.go, Wait): with a zero backoff (the zero Recovery, or
// Backoff{} / Initial 0) and an already cancelled context, both the timer
// and ctx.Done() are ready and select picks at random, so Wait returns nil
// about half the time and the orchestrator retries with a dead context.
// A context that ended before the call ended first; Wait should say so.
func TestRecoveryWaitCancelledZeroBackoff(t *testing.T) {
	r := supervision.Recovery{Enabled: true, Retries: 3}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	nils := 0
	for range 200 {
		if err := r.Wait(ctx, 1); err == nil {
			nils++
		} else if !errors.Is(err, context.Canceled) {
			t.Fatalf("Wait = %v", err)
		}
	}
	if nils > 0 {
		t.Errorf("Wait(cancelled ctx) with zero backoff returned nil %d of 200 times, want context.Canceled every time", nils)
	}
}
