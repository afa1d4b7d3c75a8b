package actors

// Cancellation watches: how a requester waits for its reply on its own
// channel alone, however many requesters share its context.
//
// A requester whose context can end must return when it does. Waiting in a
// select on its reply channel and ctx.Done() costs little while the context
// is its own, but when many requesters share one context (a server's, a
// batch job's) every one of them locks and queues on the same Done channel,
// and that lock becomes the request path's main cost. So a kernel watches
// the contexts its requesters share: once a few requests in a row came with
// the same context, one context.AfterFunc is registered for it, and the
// requesters of that context register their waiter with its watch (under
// the admission lock they hold anyway) and wait on their reply channel
// alone. When the context ends, the watch cancels every registered request
// still pending (the waiter's compare-and-swap decides between the reply and
// the cancellation) and signals it, so the requester returns promptly with
// an error wrapping ctx.Err(). Requests whose context the kernel does not
// watch wait in the select as before.

import (
	"context"
	"slices"
)

const (
	// watchAfter is how many requests in a row must come with the same
	// context before the kernel watches it: a context made per request
	// never costs a watch.
	watchAfter = 4
	// maxWatches bounds the contexts one kernel watches at a time; a watch
	// whose requests are all answered makes room for a new one.
	maxWatches = 4
	// minWatchList is the registration list's first capacity.
	minWatchList = 16
)

// ctxWatch is one watched context and the requests registered with it.
type ctxWatch[R any] struct {
	done    <-chan struct{}
	stop    func() bool // unregisters the AfterFunc
	waiting []watchedWaiter[R]
}

// watchedWaiter is one registered request: a waiter and its generation. An
// entry whose request was answered is stale; the list drops stale entries
// when it fills up.
type watchedWaiter[R any] struct {
	w   *waiter[R]
	gen uint64
}

// watchFor registers the request gen of w with the watch of ctx, creating
// that watch when ctx qualifies, and reports whether it did (the requester
// then waits on its reply channel alone). The caller holds mu and has just
// admitted the request.
func (k *kernel[Req, Resp]) watchFor(ctx context.Context, done <-chan struct{}, w *waiter[Resp], gen uint64) bool {
	cw := k.findWatch(ctx, done)
	if cw == nil {
		return false
	}
	if len(cw.waiting) == cap(cw.waiting) {
		cw.compact()
	}
	cw.waiting = append(cw.waiting, watchedWaiter[Resp]{w: w, gen: gen})
	return true
}

// findWatch returns the watch of ctx, creating it when ctx came with
// watchAfter requests in a row and a watch is free; nil if ctx is not
// watched. The caller holds mu.
func (k *kernel[Req, Resp]) findWatch(ctx context.Context, done <-chan struct{}) *ctxWatch[Resp] {
	for _, cw := range k.watches {
		if cw.done == done {
			return cw
		}
	}
	if done != k.candDone {
		k.candDone, k.candRun = done, 0
	}
	k.candRun++
	if k.candRun < watchAfter || ctx.Err() != nil {
		return nil
	}
	if len(k.watches) == maxWatches && !k.evictIdleWatch() {
		return nil
	}
	cw := &ctxWatch[Resp]{done: done, waiting: make([]watchedWaiter[Resp], 0, minWatchList)}
	cw.stop = context.AfterFunc(ctx, func() { k.cancelWatched(cw) })
	k.watches = append(k.watches, cw)
	k.candDone, k.candRun = nil, 0
	return cw
}

// evictIdleWatch drops a watch none of whose requests is pending, and
// reports whether there was one. The caller holds mu.
func (k *kernel[Req, Resp]) evictIdleWatch() bool {
	for i, cw := range k.watches {
		if cw.compact(); len(cw.waiting) == 0 {
			cw.stop()
			k.watches = slices.Delete(k.watches, i, i+1)
			return true
		}
	}
	return false
}

// cancelWatched runs once the watched context has ended: every registered
// request still pending is cancelled and its requester signalled. Requests
// admitted from now on do not find the watch.
func (k *kernel[Req, Resp]) cancelWatched(cw *ctxWatch[Resp]) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, e := range cw.waiting {
		if e.w.cancel(e.gen) {
			e.w.ch <- struct{}{} // room for it: the channel's one outcome
		}
	}
	cw.waiting = nil
	if i := slices.Index(k.watches, cw); i >= 0 {
		k.watches = slices.Delete(k.watches, i, i+1)
	}
}

// unwatchAll stops every watch when the kernel has ended (its requests all
// have their outcomes), so that no long-lived context keeps the kernel.
func (k *kernel[Req, Resp]) unwatchAll() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, cw := range k.watches {
		cw.stop()
		cw.waiting = nil
	}
	k.watches, k.candDone = nil, nil
}

// compact drops the entries of requests no longer pending. A list still
// three-quarters full afterwards doubles, so that appends stay amortised
// O(1) while the list holds at most about three times the pending requests.
func (cw *ctxWatch[R]) compact() {
	cw.waiting = slices.DeleteFunc(cw.waiting, func(e watchedWaiter[R]) bool { return !e.w.pending(e.gen) })
	if n := len(cw.waiting); n > cap(cw.waiting)*3/4 {
		cw.waiting = slices.Grow(cw.waiting, cap(cw.waiting))
	}
}
