package ring

import (
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// harness runs a loop over a ring of ints, recording what it handles.
type harness struct {
	ring *Ring[int]
	cb   *ControlBlock
	sig  *Signal
	got  chan int
	fail int // value that makes Poll report a fault
	done chan error
}

func newHarness(t *testing.T, w WaitStrategy) *harness {
	t.Helper()
	r, err := NewRing[int](8)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{ring: r, cb: NewControlBlock(), sig: NewSignal(), got: make(chan int, 64), fail: -1, done: make(chan error, 1)}
	l := &Loop{Control: h.cb, Wake: h.sig, Wait: w,
		Poll: func(bool) (bool, error) {
			v, ok := h.ring.TryPop()
			if !ok {
				return false, nil
			}
			if v == h.fail {
				return true, errors.New("fault")
			}
			h.got <- v
			return true, nil
		},
		Ready: func() bool { return !h.ring.Empty() },
	}
	go func() { h.done <- l.Run() }()
	return h
}

func (h *harness) push(t *testing.T, v int) {
	t.Helper()
	if !h.ring.TryPush(v) {
		t.Fatalf("ring full at %d", v)
	}
	h.sig.Notify()
}

func (h *harness) terminate() error {
	h.cb.Terminate.Store(1)
	h.sig.Notify()
	return <-h.done
}

// waitParked returns once the loop has parked on its signal.
func waitParked(s *Signal) {
	for s.sleeping.Load() == 0 {
		runtime.Gosched()
	}
}

func TestLoopParksWhenIdleAndWakes(t *testing.T) {
	for _, w := range []WaitStrategy{{}, DefaultWaitStrategy, {Spins: 10, Yields: 10}} {
		h := newHarness(t, w)
		h.cb.Open()
		h.sig.Notify()
		waitParked(h.sig) // idle: parked, using no CPU
		for i := 1; i <= 5; i++ {
			h.push(t, i)
			if v := <-h.got; v != i {
				t.Fatalf("handled %d, want %d", v, i)
			}
			waitParked(h.sig)
		}
		if err := h.terminate(); err != nil {
			t.Fatal(err)
		}
		if h.cb.TerminatedAck.Load() != 1 {
			t.Fatal("no terminated ack")
		}
	}
}

func TestLoopGateAndDrain(t *testing.T) {
	h := newHarness(t, DefaultWaitStrategy)
	h.push(t, 1) // gate closed: queued
	h.push(t, 2)
	waitParked(h.sig)
	if len(h.got) != 0 || h.ring.Len() != 2 {
		t.Fatalf("consumed with the gate closed")
	}
	h.cb.Open()
	h.sig.Notify()
	if <-h.got != 1 || <-h.got != 2 {
		t.Fatal("order")
	}
	h.cb.Close()
	waitParked(h.sig)
	h.push(t, 3)
	h.push(t, 4)
	// Terminate drains even with the gate closed.
	if err := h.terminate(); err != nil {
		t.Fatal(err)
	}
	if len(h.got) != 2 || <-h.got != 3 || <-h.got != 4 {
		t.Fatal("terminate did not drain")
	}
}

func TestLoopFaultReturns(t *testing.T) {
	h := newHarness(t, DefaultWaitStrategy)
	h.fail = 2
	h.cb.Open()
	h.push(t, 1)
	h.push(t, 2)
	h.push(t, 3)
	if err := <-h.done; err == nil || err.Error() != "fault" {
		t.Fatalf("Run = %v", err)
	}
	if <-h.got != 1 || h.ring.Len() != 1 {
		t.Fatal("the loop went past its fault")
	}
	if h.cb.TerminatedAck.Load() != 0 {
		t.Fatal("a fault is not a termination")
	}
}

// TestSignalNoLostWakeup races producers' notifications against the loop's
// parking many times; a lost wake-up would hang the test.
func TestSignalNoLostWakeup(t *testing.T) {
	h := newHarness(t, WaitStrategy{})
	h.cb.Open()
	h.sig.Notify()
	for i := 0; i < 20_000; i++ {
		for !h.ring.TryPush(i) {
			runtime.Gosched()
		}
		h.sig.Notify()
		if v := <-h.got; v != i {
			t.Fatalf("got %d want %d", v, i)
		}
	}
	if err := h.terminate(); err != nil {
		t.Fatal(err)
	}
}

// Busy: work in flight outside the ring (a device holding messages) keeps
// the loop polling with the gate closed and holds back a terminate until it
// is done; Stop runs once at the end, with nil after a terminate and with
// the fault after one.
func TestLoopBusyAndStop(t *testing.T) {
	var inFlight atomic.Int32
	replies := make(chan struct{}, 4)
	cb, sig := NewControlBlock(), NewSignal()
	stops := make(chan error, 2)
	fault := errors.New("device fault")
	failNext := atomic.Bool{}
	l := &Loop{Control: cb, Wake: sig, Wait: WaitStrategy{Yields: 1, SleepMin: time.Microsecond, SleepMax: 10 * time.Microsecond},
		Poll: func(bool) (bool, error) {
			if failNext.Load() {
				return false, fault
			}
			select {
			case <-replies: // a reply the outside work produced
				inFlight.Add(-1)
				return true, nil
			default:
				return false, nil
			}
		},
		Ready: func() bool { return false },
		Busy:  func() bool { return inFlight.Load() > 0 },
		Stop:  func(f error) error { stops <- f; return f },
	}
	inFlight.Store(2) // the gate stays closed: only Busy keeps the loop polling
	done := make(chan error, 1)
	go func() { done <- l.Run() }()
	cb.Terminate.Store(1)
	sig.Notify()
	replies <- struct{}{}
	select {
	case err := <-done:
		t.Fatalf("loop ended with work in flight: %v", err)
	default:
	}
	replies <- struct{}{} // the last reply: now the terminate completes
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	if f := <-stops; f != nil {
		t.Fatalf("Stop after terminate got %v", f)
	}
	if cb.TerminatedAck.Load() == 0 || inFlight.Load() != 0 {
		t.Fatal("terminated before the work in flight was answered")
	}

	// A fault: Stop gets it and its result is what Run returns.
	cb2 := NewControlBlock()
	cb2.Open()
	l.Control = cb2
	failNext.Store(true)
	if err := l.Run(); !errors.Is(err, fault) {
		t.Fatalf("Run after a fault = %v", err)
	}
	if f := <-stops; !errors.Is(f, fault) {
		t.Fatalf("Stop got %v, want the fault", f)
	}
}
