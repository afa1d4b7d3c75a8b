package devcore

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"sync"
	"time"

	"github.com/ringactor/ringactor/gpu/ring"
)

// ErrEpochTimeout is wrapped by the error of a device epoch when a ring
// kernel did not acknowledge its park in time (a handler that does not
// return, or a device that stopped). The synchronising call is then not
// made and the rings already parked are relaunched. gpu/cuda re-exports it.
var ErrEpochTimeout = errors.New("cuda: a ring kernel did not park for a device epoch")

// DefaultParkTimeout bounds how long an epoch waits for the rings' acks.
const DefaultParkTimeout = 10 * time.Second

// EpochStats says what the device epochs of a backend cost.
type EpochStats struct {
	Count       int           // epochs that parked at least one ring
	RingsParked int           // rings parked, summed over the epochs
	Total       time.Duration // their time: park, the call, relaunch
	Max         time.Duration // the longest
	Last        time.Duration // the latest
	LastReason  string        // what the latest was for, e.g. "cuModuleLoadDataEx"
	Served      int           // calls served by these epochs: more than Count when concurrent requests shared one
}

// Parkable is what a device epoch parks and relaunches: a ring kernel's
// launch (a kernel with a loop of its own, or a grid's). The epoch calls
// its methods on the device's thread.
type Parkable interface {
	// Settled reports whether it has handled what was queued before its
	// last relaunch, or cannot go on now (stopped, gate closed, output
	// full): an epoch parks it only then.
	Settled() bool
	// Terminate marks it parked and asks its loop to stop now, unless it
	// already acknowledged a termination of its own; it reports whether
	// it is being parked (false: the epoch leaves it alone).
	Terminate() bool
	// Acked reports whether its loop acknowledged the termination, or
	// never will (its launch is gone, e.g. a faulted grid).
	Acked() bool
	// Retire waits for the launch whose loop acknowledged to retire.
	Retire() error
	// Resume relaunches it with its owner's request made meanwhile, or
	// leaves it stopped as that asked; it clears the parked mark.
	Resume() error
	// Unpark clears the parked mark without a relaunch (the device closes).
	Unpark()
	// Stuck describes it for an epoch that gave up waiting: settling
	// (for its backlog) or for its ack. It begins with "ring N".
	Stuck(settling bool) string
}

// Epochs is the device's registry of live rings and its device epochs:
// the few driver calls that synchronise the device run with every live
// ring parked (Run). The live set and Run are confined to the device's
// thread; Pace and Stats are safe for concurrent use.
type Epochs struct {
	// ParkTimeout bounds an epoch's wait for the rings (0:
	// DefaultParkTimeout); Spacing is the least time between two epochs.
	// Both are set before the device opens.
	ParkTimeout time.Duration
	Spacing     time.Duration
	// Wait is how an epoch polls the rings' progress and acks.
	Wait ring.WaitStrategy
	// Pace holds the requests waiting for an epoch and when the next may park.
	Pace Pace

	live    map[Parkable]struct{}
	seq     uint64
	inEpoch bool

	statsMu sync.Mutex
	stats   EpochStats
}

// Add registers a launched ring and returns its id, counted from 1.
func (e *Epochs) Add(p Parkable) uint64 {
	if e.live == nil {
		e.live = map[Parkable]struct{}{}
	}
	e.seq++
	e.live[p] = struct{}{}
	return e.seq
}

// Remove forgets a ring that stopped for good.
func (e *Epochs) Remove(p Parkable) { delete(e.live, p) }

// Len is how many rings are live.
func (e *Epochs) Len() int { return len(e.live) }

// Live iterates over the live rings. Do not Add or Remove while iterating
// other than the ring at hand.
func (e *Epochs) Live() iter.Seq[Parkable] { return maps.Keys(e.live) }

// Stats returns what the epochs cost so far (any goroutine).
func (e *Epochs) Stats() EpochStats {
	e.statsMu.Lock()
	defer e.statsMu.Unlock()
	return e.stats
}

// Timeout is the park timeout in force.
func (e *Epochs) Timeout() time.Duration {
	if e.ParkTimeout <= 0 {
		return DefaultParkTimeout
	}
	return e.ParkTimeout
}

// Run runs fn (a synchronising driver call) with every live ring parked,
// and serves the requests in Pace waiting when it parks; fn nil is an
// epoch for those requests alone. Without live rings, or nested in another
// epoch, it just runs fn. It parks no sooner than the spacing after the
// previous epoch, and only once every ring has settled. why names the
// call in the stats.
func (e *Epochs) Run(ctx context.Context, why string, fn func() error) error {
	caller := 1 // the caller of Run is served too, unless fn is nil (requests only)
	if fn == nil {
		fn, caller = func() error { return nil }, 0
	}
	if e.inEpoch {
		return fn()
	}
	if len(e.live) == 0 {
		e.Pace.Serve(e.Pace.Take(), 0, nil)
		return fn()
	}
	e.inEpoch = true
	defer func() { e.inEpoch = false }()
	if err := e.Pace.Wait(ctx, e.Spacing); err != nil {
		return err
	}
	pctx, cancel := context.WithTimeout(ctx, e.Timeout())
	defer cancel()
	if err := e.settle(pctx); err != nil {
		return err
	}
	served := e.Pace.Take()
	start := time.Now()
	parked, err := e.ParkAll(pctx)
	var ferr error
	if err == nil {
		ferr = fn()
	}
	rerr := resumeAll(parked)
	took := time.Since(start)
	e.Pace.Ended(took)
	if err != nil && ctx.Err() != nil {
		// The caller gave up: the requests it took are not failed for
		// that, they ask again.
		e.Pace.Bounce(served)
		return errors.Join(err, rerr)
	}
	e.Pace.Serve(served, took, errors.Join(err, rerr))
	if err != nil {
		return errors.Join(err, rerr)
	}
	e.statsMu.Lock()
	s := &e.stats
	s.Count++
	s.RingsParked += len(parked)
	s.Total += took
	s.Max = max(s.Max, took)
	s.Last, s.LastReason = took, why
	s.Served += len(served) + caller
	e.statsMu.Unlock()
	return errors.Join(ferr, rerr)
}

// settle waits until every live ring has settled: a relaunched ring is
// not parked again before it has made that progress, so epochs back to
// back never starve it. ctx is the park's deadline.
func (e *Epochs) settle(ctx context.Context) error {
	w := ring.Waiter{Strategy: e.Wait, Done: ctx.Done()}
	for p := range e.live {
		for !p.Settled() {
			if ctx.Err() != nil {
				return fmt.Errorf("%w: %s: %w", ErrEpochTimeout, p.Stuck(true), ctx.Err())
			}
			w.Wait(nil, nil)
		}
	}
	return nil
}

// ParkAll asks every live ring to stop now, waits for the acks and for
// the launches to retire. It returns the rings it parked; rings that
// already acknowledged a termination of their own are left alone. ctx
// bounds the wait for the acks.
func (e *Epochs) ParkAll(ctx context.Context) ([]Parkable, error) {
	var parked []Parkable
	for p := range e.live {
		if p.Terminate() {
			parked = append(parked, p)
		}
	}
	w := ring.Waiter{Strategy: e.Wait, Done: ctx.Done()}
	for _, p := range parked {
		for !p.Acked() {
			if ctx.Err() != nil {
				return parked, fmt.Errorf("%w: %s: %w", ErrEpochTimeout, p.Stuck(false), ctx.Err())
			}
			w.Wait(nil, nil)
		}
	}
	var errs []error
	for _, p := range parked {
		// The loop has exited: its launch retires at once.
		errs = append(errs, p.Retire())
	}
	return parked, errors.Join(errs...)
}

// resumeAll relaunches the parked rings.
func resumeAll(parked []Parkable) error {
	var errs []error
	for _, p := range parked {
		errs = append(errs, p.Resume())
	}
	return errors.Join(errs...)
}
