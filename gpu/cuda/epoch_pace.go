package cuda

import (
	"context"
	"slices"
	"sync"
	"time"
)

// DefaultEpochSpacing is the least time the rings run between two device
// epochs unless WithEpochSpacing says otherwise.
const DefaultEpochSpacing = time.Millisecond

// epochPace is how device epochs share and space themselves: requests
// waiting for an epoch (DeviceEpoch), served together by the next epoch
// that parks, and the end and duration of the latest epoch, which decide
// when the next may park. It is safe for concurrent use: requests are made
// off the device's thread.
type epochPace struct {
	mu       sync.Mutex
	waiting  []*epochRequest
	lastEnd  time.Time
	lastTook time.Duration
}

// epochRequest is one caller waiting for an epoch. done is closed once an
// epoch served it (took, err) or bounced it (the epoch that took it gave
// up because its own caller's context ended: ask again).
type epochRequest struct {
	done    chan struct{}
	took    time.Duration
	err     error
	bounced bool
}

// finished reports whether the request was served or bounced.
func (r *epochRequest) finished() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// request registers a caller waiting for an epoch.
func (p *epochPace) request() *epochRequest {
	r := &epochRequest{done: make(chan struct{})}
	p.mu.Lock()
	p.waiting = append(p.waiting, r)
	p.mu.Unlock()
	return r
}

// withdraw removes r if no epoch has taken it yet, and reports whether it
// did; otherwise r.done will be closed by the epoch that took it.
func (p *epochPace) withdraw(r *epochRequest) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := slices.Index(p.waiting, r)
	if i < 0 {
		return false
	}
	p.waiting = slices.Delete(p.waiting, i, i+1)
	return true
}

// take hands the requests waiting now to the epoch about to park.
func (p *epochPace) take() []*epochRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	rs := p.waiting
	p.waiting = nil
	return rs
}

// serve gives the taken requests the epoch's outcome.
func (p *epochPace) serve(rs []*epochRequest, took time.Duration, err error) {
	for _, r := range rs {
		r.took, r.err = took, err
		close(r.done)
	}
}

// bounce hands the taken requests back to their callers unserved.
func (p *epochPace) bounce(rs []*epochRequest) {
	for _, r := range rs {
		r.bounced = true
		close(r.done)
	}
}

// ended records that an epoch which kept the rings parked for took has
// just relaunched them.
func (p *epochPace) ended(took time.Duration) {
	p.mu.Lock()
	p.lastEnd, p.lastTook = time.Now(), took
	p.mu.Unlock()
}

// next is when the next epoch may park: max(spacing, the latest epoch's
// duration) after the latest ended, so under epochs back to back the
// rings run at least half the time.
func (p *epochPace) next(spacing time.Duration) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lastEnd.IsZero() {
		return time.Time{}
	}
	return p.lastEnd.Add(max(spacing, p.lastTook))
}

// wait returns once an epoch may park, or with ctx's error.
func (p *epochPace) wait(ctx context.Context, spacing time.Duration) error {
	d := time.Until(p.next(spacing))
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
