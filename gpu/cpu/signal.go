package cpu

import "sync/atomic"

// Signal wakes a parked loop. The loop announces that it is about to park,
// re-checks for work, and only then blocks; a producer that published work
// notifies after its publication. Because both sides use sequentially
// consistent atomics, either the loop sees the work or the producer sees the
// loop parking, so no wake-up is lost. A notification when nobody sleeps costs
// one atomic load.
type Signal struct {
	sleeping atomic.Int32
	ch       chan struct{}
}

// NewSignal returns a ready signal.
func NewSignal() *Signal { return &Signal{ch: make(chan struct{}, 1)} }

// Notify wakes the loop if it is parked or parking.
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

// Park blocks until Notify, unless ready reports work after the loop has
// announced that it sleeps (so a producer's Notify is never lost). For
// loops other than Loop that share the same signal.
func (s *Signal) Park(ready func() bool) { s.park(ready) }
