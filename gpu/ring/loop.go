package ring

import "time"

// Loop is one ring kernel's persistent consumer. Run it on its own
// goroutine; it returns when the control block's terminate flag is set and
// the input is drained, or when Poll reports a fault.
type Loop struct {
	// Control is the kernel's control block (gate, terminate, ack, heartbeat).
	Control *ControlBlock
	// Wake is notified by producers after they publish and by the host after
	// it opens the gate or sets terminate.
	Wake *Signal
	// Wait is the idle strategy; the zero value parks at once.
	// DefaultWaitStrategy yields first.
	Wait WaitStrategy
	// Poll takes and handles what it finds (a batch). It reports whether it
	// found one. A non-nil error is a fault: the loop exits and returns it.
	// draining is true once terminate is set: the loop keeps polling, gate
	// or not, until Poll finds nothing.
	Poll func(draining bool) (bool, error)
	// Ready reports, without consuming, whether Poll would find a message.
	Ready func() bool
	// Busy, when set, reports work in flight outside the ring (messages a
	// device holds). While it is true the loop keeps polling, gate or not
	// (replies still come back), its idle waits never park (nothing would
	// notify it: it polls with the sleep phase's backoff), and a terminate
	// ends the loop only once it is false. Nil: never busy.
	Busy func() bool
	// Stop, when set, runs as the loop ends, on its goroutine: with the
	// fault Poll reported (its result is what Run returns), or with nil
	// after a terminate, before the terminated ack (its result is then
	// ignored: Stop reports a failure to stop itself).
	Stop func(fault error) error
}

// Run runs the loop on the calling goroutine. It returns nil after a
// terminate (having set the control block's terminated ack) or the fault
// Poll reported.
func (l *Loop) Run() error {
	cb := l.Control
	cb.Beat(time.Now().UnixNano())
	w := Waiter{Strategy: l.Wait}
	ready := l.wakeable
	busy := l.Busy
	if busy == nil {
		busy = func() bool { return false }
	}
	for {
		draining := cb.Terminate.Load() != 0
		if draining || cb.IsOpen() || busy() {
			found, err := l.Poll(draining)
			if err != nil {
				cb.Beat(time.Now().UnixNano())
				if l.Stop != nil {
					err = l.Stop(err)
				}
				return err
			}
			if found {
				w.Reset()
				continue
			}
			if draining && !busy() {
				if l.Stop != nil {
					_ = l.Stop(nil)
				}
				cb.Beat(time.Now().UnixNano())
				cb.TerminatedAck.Store(1)
				return nil
			}
		}
		if busy() {
			w.Wait(nil, nil) // poll the outside work with the sleep phase's backoff
		} else {
			w.Wait(ready, l.Wake)
		}
	}
}

// wakeable reports whether the loop has something to do.
func (l *Loop) wakeable() bool {
	cb := l.Control
	return cb.Terminate.Load() != 0 || (cb.IsOpen() && l.Ready())
}
