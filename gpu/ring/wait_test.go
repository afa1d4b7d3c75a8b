package ring

import (
	"testing"
	"time"
)

// TestWaiterPhases walks a waiter through spin, yield and sleep rounds and
// checks the sleeps double up to the cap and stay there without a Signal.
func TestWaiterPhases(t *testing.T) {
	w := NewWaiter(WaitStrategy{Spins: 2, Yields: 3, SleepMin: time.Microsecond, SleepMax: 5 * time.Microsecond})
	for range 5 {
		w.Wait(nil, nil)
		if w.sleep != 0 {
			t.Fatalf("round %d slept before the sleep phase", w.Round())
		}
	}
	for _, want := range []time.Duration{1, 2, 4, 5, 5, 5} {
		w.Wait(nil, nil)
		if w.sleep != want*time.Microsecond {
			t.Fatalf("round %d slept %v, want %v", w.Round(), w.sleep, want*time.Microsecond)
		}
	}
	w.Reset()
	if w.Round() != 0 || w.sleep != 0 {
		t.Fatal("Reset")
	}
}

// TestWaiterParksAfterSleepPhase: with a Signal the sleep phase ends when a
// sleep reaches the cap; the next round parks until Notify.
func TestWaiterParksAfterSleepPhase(t *testing.T) {
	sig := NewSignal()
	w := NewWaiter(WaitStrategy{SleepMin: time.Microsecond, SleepMax: 2 * time.Microsecond})
	never := func() bool { return false }
	w.Wait(never, sig) // 1 µs
	w.Wait(never, sig) // 2 µs: the cap
	done := make(chan struct{})
	go func() {
		w.Wait(never, sig) // parks
		close(done)
	}()
	waitParked(sig)
	select {
	case <-done:
		t.Fatal("returned without a Notify")
	case <-time.After(20 * time.Millisecond):
	}
	sig.Notify()
	<-done
}

// TestWaiterSleepEndsAtNotify: a sleep with a Signal is a timed park, so
// a Notify ends it.
func TestWaiterSleepEndsAtNotify(t *testing.T) {
	sig := NewSignal()
	w := NewWaiter(WaitStrategy{SleepMin: time.Hour, SleepMax: time.Hour})
	done := make(chan struct{})
	go func() {
		w.Wait(func() bool { return false }, sig)
		close(done)
	}()
	waitParked(sig)
	sig.Notify()
	<-done
}

// TestWaiterDoneEndsSleep: Done ends a sleep without a Signal.
func TestWaiterDoneEndsSleep(t *testing.T) {
	ch := make(chan struct{})
	w := &Waiter{Strategy: WaitStrategy{SleepMax: time.Hour}, Done: ch}
	close(ch)
	start := time.Now()
	w.Wait(nil, nil)
	if time.Since(start) > time.Minute {
		t.Fatal("slept past Done")
	}
}

// TestWaiterWithoutSleepOrSignalYields: the zero strategy without a Signal
// keeps yielding rather than blocking forever.
func TestWaiterWithoutSleepOrSignalYields(t *testing.T) {
	var w Waiter
	for range 10 {
		w.Wait(nil, nil)
	}
	if w.Round() != 10 {
		t.Fatal(w.Round())
	}
}

// TestDefaultWaitStrategyUnchanged pins the CPU loop's measured default.
func TestDefaultWaitStrategyUnchanged(t *testing.T) {
	if DefaultWaitStrategy != (WaitStrategy{Yields: 128}) {
		t.Fatalf("%+v", DefaultWaitStrategy)
	}
}
