package ring

import (
	"sync/atomic"
	"time"
)

// Signal wakes a parked consumer. The consumer announces that it is about
// to park, re-checks for work, and only then blocks; a producer that
// published work notifies after its publication. Because both sides use
// sequentially consistent atomics, either the consumer sees the work or the
// producer sees it parking, so no wake-up is lost. A notification when
// nobody sleeps costs one atomic load.
type Signal struct {
	sleeping atomic.Int32
	ch       chan struct{}
}

// NewSignal returns a ready signal.
func NewSignal() *Signal { return &Signal{ch: make(chan struct{}, 1)} }

// Notify wakes the consumer if it is parked or parking.
func (s *Signal) Notify() {
	if s.sleeping.Load() != 0 {
		select {
		case s.ch <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
}

// park blocks until Notify unless ready reports work after the announcement.
func (s *Signal) park(ready func() bool) {
	s.sleeping.Store(1)
	if !ready() {
		<-s.ch
	}
	s.sleeping.Store(0)
}

// parkFor parks as park does, for at most d or until done is closed. A
// Notify that arrives after the timeout leaves a pending wake-up: the next
// park returns at once and its caller re-checks, which is harmless.
func (s *Signal) parkFor(ready func() bool, d time.Duration, done <-chan struct{}) {
	s.sleeping.Store(1)
	if !ready() {
		t := time.NewTimer(d)
		select {
		case <-s.ch:
		case <-t.C:
		case <-done:
		}
		t.Stop()
	}
	s.sleeping.Store(0)
}

// Park blocks until Notify, unless ready reports work after the consumer
// has announced that it sleeps (so a producer's Notify is never lost). For
// consumers other than [Loop] that share the same signal; a [Waiter] parks
// through it.
func (s *Signal) Park(ready func() bool) { s.park(ready) }
