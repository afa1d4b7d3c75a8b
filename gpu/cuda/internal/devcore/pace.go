package devcore

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Pace is how device epochs share and space themselves: requests
// waiting for an epoch (a backend's DeviceEpoch), served together by the next epoch
// that parks, and the end and duration of the latest epoch, which decide
// when the next may park. It is safe for concurrent use: requests are made
// off the device's thread.
type Pace struct {
	mu       sync.Mutex
	waiting  []*Request
	lastEnd  time.Time
	lastTook time.Duration
}

// Request is one caller waiting for an epoch. Done is closed once an
// epoch served it (Outcome's took and err) or bounced it (the epoch that
// took it gave up because its own caller's context ended: ask again).
type Request struct {
	done    chan struct{}
	took    time.Duration
	err     error
	bounced bool
}

// Done is closed when the request was served or bounced.
func (r *Request) Done() <-chan struct{} { return r.done }

// Outcome is what the epoch that took the request said: bounced (ask
// again), or its duration and error. Read it after Done is closed.
func (r *Request) Outcome() (took time.Duration, bounced bool, err error) {
	return r.took, r.bounced, r.err
}

// Finished reports whether the request was served or bounced.
func (r *Request) Finished() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// Request registers a caller waiting for an epoch.
func (p *Pace) Request() *Request {
	r := &Request{done: make(chan struct{})}
	p.mu.Lock()
	p.waiting = append(p.waiting, r)
	p.mu.Unlock()
	return r
}

// Withdraw removes r if no epoch has taken it yet, and reports whether it
// did; otherwise r's Done will be closed by the epoch that took it.
func (p *Pace) Withdraw(r *Request) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := slices.Index(p.waiting, r)
	if i < 0 {
		return false
	}
	p.waiting = slices.Delete(p.waiting, i, i+1)
	return true
}

// Take hands the requests waiting now to the epoch about to park.
func (p *Pace) Take() []*Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	rs := p.waiting
	p.waiting = nil
	return rs
}

// Serve gives the taken requests the epoch's outcome.
func (p *Pace) Serve(rs []*Request, took time.Duration, err error) {
	for _, r := range rs {
		r.took, r.err = took, err
		close(r.done)
	}
}

// Bounce hands the taken requests back to their callers unserved.
func (p *Pace) Bounce(rs []*Request) {
	for _, r := range rs {
		r.bounced = true
		close(r.done)
	}
}

// Ended records that an epoch which kept the rings parked for took has
// just relaunched them.
func (p *Pace) Ended(took time.Duration) {
	p.mu.Lock()
	p.lastEnd, p.lastTook = time.Now(), took
	p.mu.Unlock()
}

// Next is when the next epoch may park: max(spacing, the latest epoch's
// duration) after the latest ended, so under epochs back to back the
// rings run at least half the time.
func (p *Pace) Next(spacing time.Duration) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lastEnd.IsZero() {
		return time.Time{}
	}
	return p.lastEnd.Add(max(spacing, p.lastTook))
}

// Wait returns once an epoch may park, or with ctx's error.
func (p *Pace) Wait(ctx context.Context, spacing time.Duration) error {
	d := time.Until(p.Next(spacing))
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Waiting says how many requests wait for an epoch (for tests).
func (p *Pace) Waiting() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.waiting)
}

// LastEnd is when the latest epoch relaunched the rings (zero before the
// first).
func (p *Pace) LastEnd() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastEnd
}
