package cpu

import (
	"runtime"
	"time"

	"github.com/ringactor/ringactor/gpu"
)

// WaitStrategy says how long an idle loop spins and yields before it parks.
type WaitStrategy struct {
	// Spins is how many times the loop re-checks for work in a tight loop.
	Spins int
	// Yields is how many times it then calls runtime.Gosched between checks.
	Yields int
}

// DefaultWaitStrategy yields up to 128 times (some 10–50 µs) before parking,
// without a pure spin phase. Measured on 2 cores (BenchmarkRequest): a
// sequential round trip takes ~0.4 µs with it and ~2.1 µs with 256 spins
// first, because a requester woken by the loop's reply is queued on the
// loop's own processor, and only a yield lets it run there at once; a pure
// spin keeps it waiting for another processor to steal it. Spins pay off
// only when producers run on other cores and never wait for replies.
var DefaultWaitStrategy = WaitStrategy{Spins: 0, Yields: 128}

// Loop is one ring kernel's persistent consumer. Run it on its own
// goroutine; it returns when the control block's terminate flag is set and
// the input is drained, or when Poll reports a fault.
type Loop struct {
	// Control is the kernel's control block (gate, terminate, ack, heartbeat).
	Control *gpu.ControlBlock
	// Wake is notified by producers after they publish and by the host after
	// it opens the gate or sets terminate.
	Wake *Signal
	// Wait is the idle strategy; the zero value parks at once.
	Wait WaitStrategy
	// Poll takes and handles at most one message. It reports whether it
	// found one. A non-nil error is a fault: the loop exits and returns it.
	// draining is true once terminate is set: the loop keeps polling, gate
	// or not, until Poll finds nothing.
	Poll func(draining bool) (bool, error)
	// Ready reports, without consuming, whether Poll would find a message.
	Ready func() bool
}

// Run runs the loop on the calling goroutine. It returns nil after a
// terminate (having set the control block's terminated ack) or the fault
// Poll reported.
func (l *Loop) Run() error {
	cb := l.Control
	cb.Beat(time.Now().UnixNano())
	idle := 0
	for {
		draining := cb.Terminate.Load() != 0
		if draining || cb.IsOpen() {
			found, err := l.Poll(draining)
			if err != nil {
				cb.Beat(time.Now().UnixNano())
				return err
			}
			if found {
				idle = 0
				continue
			}
			if draining {
				cb.Beat(time.Now().UnixNano())
				cb.TerminatedAck.Store(1)
				return nil
			}
		}
		l.idle(idle)
		idle++
	}
}

// wakeable reports whether the loop has something to do.
func (l *Loop) wakeable() bool {
	cb := l.Control
	return cb.Terminate.Load() != 0 || (cb.IsOpen() && l.Ready())
}

// idle waits once, according to how many idle rounds preceded this one.
func (l *Loop) idle(round int) {
	switch {
	case round < l.Wait.Spins:
		// spin: the next check is the wait
	case round < l.Wait.Spins+l.Wait.Yields:
		runtime.Gosched()
	default:
		l.Wake.park(l.wakeable)
	}
}
