package ringrt

import "github.com/ringactor/ringactor/gpu/ring"

// gridFaulted reports whether a grid's launch ended in a device fault (a
// trap in any mailbox's handler kills the whole grid, as it does the
// context on a GPU), inside Do. A faulted grid is marked stopped for good:
// acknowledged (its loop is gone), not to be relaunched by an epoch, its
// owner's request recorded as TerminateNow; the device's close then
// releases it and its mailboxes. The fault is the grid's probe's (a
// query now, unless a mailbox's Fault saw it already), and stays there.
func gridFaulted(k *Kernel) bool {
	if k.probe.query(k) == nil {
		return false
	}
	k.serves.stopped.Store(true)
	k.park.mu.Lock()
	k.park.want = ring.TerminateNow
	k.park.mu.Unlock()
	k.cb.TerminatedAck.Store(ring.Terminated)
	return true
}
