package ring

import (
	"runtime"
	"time"
)

// WaitStrategy says how an idle consumer waits for work, in phases: Spins
// rounds that re-check at once, then Yields rounds that call
// runtime.Gosched between checks, then a sleep phase whose sleeps start at
// SleepMin and double up to SleepMax, then it parks on its [Signal].
//
// A waiter without a Signal (one polling memory that nobody notifies about,
// such as a device ring kernel's output ring or its terminated ack) stays
// in the sleep phase, sleeping SleepMax each round; without a sleep phase
// (SleepMax 0) it keeps yielding. With a Signal, a sleep is a park with a
// timeout: a Notify ends it early, so the sleep phase adds no wake-up
// latency. The sleep phase lasts until a sleep reaches SleepMax; with
// SleepMax 0 there is none and the waiter parks right after its yields.
//
// The zero value parks at once (or, without a Signal, yields).
type WaitStrategy struct {
	// Spins is how many times the waiter re-checks for work in a tight loop.
	Spins int
	// Yields is how many times it then calls runtime.Gosched between checks.
	Yields int
	// SleepMin is the first sleep of the sleep phase (SleepMax when 0).
	SleepMin time.Duration
	// SleepMax caps the sleeps; 0 means no sleep phase.
	SleepMax time.Duration
}

// DefaultWaitStrategy yields up to 128 times (some 10–50 µs) before parking,
// without a pure spin phase and without a sleep phase. Measured on 2 cores
// (actors' BenchmarkRequest): a sequential round trip takes ~0.4 µs with it
// and ~2.1 µs with 256 spins first, because a requester woken by the loop's
// reply is queued on the loop's own processor, and only a yield lets it run
// there at once; a pure spin keeps it waiting for another processor to
// steal it. Spins pay off only when producers run on other cores and never
// wait for replies.
var DefaultWaitStrategy = WaitStrategy{Spins: 0, Yields: 128}

// Waiter is the state of one consumer's idle waits under a [WaitStrategy]:
// how many rounds it has waited since it last found work, and the current
// sleep. It belongs to one goroutine.
type Waiter struct {
	// Strategy is the phases the waiter goes through.
	Strategy WaitStrategy
	// Done, when not nil, ends a sleep early once closed (a caller's
	// context), so a waiter that checks its deadline each round notices it
	// without waiting out a sleep. A park is not interrupted by Done.
	Done <-chan struct{}

	round int
	sleep time.Duration
}

// NewWaiter returns a waiter in its first round.
func NewWaiter(s WaitStrategy) *Waiter { return &Waiter{Strategy: s} }

// Reset starts the phases again: call it after finding work.
func (w *Waiter) Reset() { w.round, w.sleep = 0, 0 }

// Round returns the number of waits since the last Reset.
func (w *Waiter) Round() int { return w.round }

// Wait waits once, according to the phase of this round, and moves to the
// next round. ready reports, without consuming, whether there is work; a
// park re-checks it after announcing itself on sig, so a producer's Notify
// after publishing is never lost. sig may be nil (see [WaitStrategy]).
// Each call waits once (a spin round not at all); the caller re-checks
// for work after it.
func (w *Waiter) Wait(ready func() bool, sig *Signal) {
	s := &w.Strategy
	r := w.round
	w.round++
	switch {
	case r < s.Spins:
		// spin: the next check is the wait
	case r < s.Spins+s.Yields:
		runtime.Gosched()
	case s.SleepMax > 0 && (sig == nil || w.sleep < s.SleepMax):
		w.sleep = w.nextSleep()
		if sig != nil {
			sig.parkFor(ready, w.sleep, w.Done)
		} else {
			w.sleepFor(w.sleep)
		}
	case sig != nil:
		sig.park(ready)
	default:
		runtime.Gosched()
	}
}

// nextSleep returns the sleep of this round: SleepMin first, then double
// the last one, capped at SleepMax.
func (w *Waiter) nextSleep() time.Duration {
	s := &w.Strategy
	if w.sleep == 0 {
		if s.SleepMin > 0 {
			return min(s.SleepMin, s.SleepMax)
		}
		return s.SleepMax
	}
	return min(2*w.sleep, s.SleepMax)
}

// sleepFor sleeps d, or until Done is closed.
func (w *Waiter) sleepFor(d time.Duration) {
	if w.Done == nil {
		time.Sleep(d)
		return
	}
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-w.Done:
		t.Stop()
	}
}
