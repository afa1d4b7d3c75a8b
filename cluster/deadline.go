package cluster

import (
	"context"
	"sync"
	"time"
)

// lazyDeadline is the context of one request an activation handles: it has
// a deadline, but starts no timer until someone waits on Done (a handler
// that selects on it, or an admission that waits for room), so a request
// handled at once costs no timer. Err reports the deadline as soon as it
// has passed, and Done is then closed: the context.Context contract holds.
type lazyDeadline struct {
	deadline time.Time
	// val is the request a durable activation's handler finds under
	// grainRequestKey (statekind.go); nil: none.
	val   any
	mu    sync.Mutex
	done  chan struct{}
	timer *time.Timer
	err   error
}

// newLazyDeadline returns a context that expires at deadline, and its
// cancel function (which stops its timer, if it has one).
func newLazyDeadline(deadline time.Time) (*lazyDeadline, context.CancelFunc) {
	c := &lazyDeadline{deadline: deadline}
	return c, c.cancel
}

// Deadline implements context.Context.
func (c *lazyDeadline) Deadline() (time.Time, bool) { return c.deadline, true }

// Value implements context.Context: the context carries only the request
// of a durable activation, for its handler.
func (c *lazyDeadline) Value(key any) any {
	if _, ok := key.(grainRequestKey); ok {
		return c.val
	}
	return nil
}

// Done implements context.Context: the first call starts the timer.
func (c *lazyDeadline) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done != nil {
		return c.done
	}
	c.done = make(chan struct{})
	if c.err != nil { // cancelled, or expired, before anyone waited
		close(c.done)
		return c.done
	}
	c.expireLocked() // closes done if the deadline has passed
	if c.err == nil {
		c.timer = time.AfterFunc(time.Until(c.deadline), func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.endLocked(context.DeadlineExceeded)
		})
	}
	return c.done
}

// Err implements context.Context.
func (c *lazyDeadline) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expireLocked()
	return c.err
}

// expireLocked ends the context if its deadline has passed.
func (c *lazyDeadline) expireLocked() {
	// time.Until reads only the monotonic clock (the deadline has a
	// monotonic reading), half of what time.Now reads.
	if c.err == nil && time.Until(c.deadline) <= 0 {
		c.endLocked(context.DeadlineExceeded)
	}
}

// endLocked ends the context with err, once.
func (c *lazyDeadline) endLocked(err error) {
	if c.err != nil {
		return
	}
	c.err = err
	if c.done != nil {
		close(c.done)
	}
	if c.timer != nil {
		c.timer.Stop()
	}
}

// cancel ends the context with context.Canceled.
func (c *lazyDeadline) cancel() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endLocked(context.Canceled)
}
