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
// the same context, one context.AfterFunc is registered for it, and each
// request of that context that goes straight into the ring is noted, with
// its watch, in the ring's cancellation table (under the admission lock the
// requester holds anyway) and waits on its reply channel alone. When the
// context ends, the watch cancels every noted request still pending (the
// waiter's compare-and-swap of its generation decides between the reply
// and the cancellation)
// and signals it, so the requester returns promptly with an error wrapping
// ctx.Err(). Other requests wait in the select.
//
// The table has one entry per ring position, written by the producer when
// it pushes there, so noting a request costs three stores and no lookups.
// An entry is overwritten Cap pushes later, and by then its request has been
// answered: the loop answers the ring's messages in order, so a message
// still pending has all later pushes behind it in the ring, which holds at
// most Cap. That is why only CPU kernels' requests admitted straight into
// the ring are noted (a message from the overflow can be evicted out of
// order; a device kernel holds messages outside the ring).

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
	// none of whose requests can be pending makes room for a new one.
	maxWatches = 4
	// maxWatchTable is the largest ring capacity whose kernel watches
	// contexts (its cancellation table has one entry per ring position).
	maxWatchTable = 1 << 16
)

// ctxWatch is one watched context.
type ctxWatch struct {
	done     <-chan struct{}
	stop     func() bool // unregisters the AfterFunc
	lastPush uint64      // the ring's push count after its newest request
}

// watchEntry is one position of the cancellation table: the request pushed
// there last, if it was watched. An entry whose request was answered is
// stale and harmless: its waiter's generation has moved on.
type watchEntry[R any] struct {
	watch *ctxWatch
	w     *waiter[R]
	gen   uint64
}

// watchPushed notes the request gen of w, just pushed into the ring, in the
// cancellation table when the kernel watches its context (done), and
// reports whether it did: the requester then waits on its reply channel
// alone. The caller holds mu.
func (k *kernel[Req, Resp]) watchPushed(ctx context.Context, done <-chan struct{}, w *waiter[Resp], gen uint64) bool {
	cw := k.findWatch(ctx, done)
	if cw == nil {
		return false
	}
	pushed := k.in.Pushed()
	k.watchTable[(pushed-1)&uint64(len(k.watchTable)-1)] = watchEntry[Resp]{watch: cw, w: w, gen: gen} // Cap is a power of two
	cw.lastPush = pushed
	return true
}

// findWatch returns the watch of ctx, creating it when ctx came with
// watchAfter requests in a row and a watch is free; nil if ctx is not
// watched. The caller holds mu.
func (k *kernel[Req, Resp]) findWatch(ctx context.Context, done <-chan struct{}) *ctxWatch {
	for _, cw := range k.watches {
		if cw.done == done {
			return cw
		}
	}
	if done != k.candDone {
		k.candDone, k.candRun = done, 0
	}
	k.candRun++
	if k.candRun < watchAfter || ctx.Err() != nil || k.def.device != 0 || k.in.Cap() > maxWatchTable {
		return nil
	}
	if len(k.watches) == maxWatches && !k.evictIdleWatch() {
		return nil
	}
	if k.watchTable == nil {
		k.watchTable = make([]watchEntry[Resp], k.in.Cap())
	}
	cw := &ctxWatch{done: done}
	cw.stop = context.AfterFunc(ctx, func() { k.cancelWatched(cw) })
	k.watches = append(k.watches, cw)
	k.candDone, k.candRun = nil, 0
	return cw
}

// evictIdleWatch drops a watch none of whose requests can be pending (Cap
// pushes went into the ring after its newest one), and reports whether
// there was one. The caller holds mu.
func (k *kernel[Req, Resp]) evictIdleWatch() bool {
	pushed, capacity := k.in.Pushed(), uint64(k.in.Cap())
	for i, cw := range k.watches {
		if pushed-cw.lastPush >= capacity {
			cw.stop()
			k.forgetWatch(cw)
			k.watches = slices.Delete(k.watches, i, i+1)
			return true
		}
	}
	return false
}

// cancelWatched runs once the watched context has ended: every noted
// request still pending is cancelled and its requester signalled. Requests
// admitted from now on do not find the watch.
func (k *kernel[Req, Resp]) cancelWatched(cw *ctxWatch) {
	k.mu.Lock()
	defer k.mu.Unlock()
	i := slices.Index(k.watches, cw)
	if i < 0 {
		return // evicted, or the kernel has ended: nothing of it is pending
	}
	k.watches = slices.Delete(k.watches, i, i+1)
	for j := range k.watchTable {
		if e := &k.watchTable[j]; e.watch == cw {
			e.w.watchCancel(e.gen)
			*e = watchEntry[Resp]{}
		}
	}
}

// forgetWatch clears cw's entries from the table, so it keeps no waiter of
// cw alive. The caller holds mu.
func (k *kernel[Req, Resp]) forgetWatch(cw *ctxWatch) {
	for j := range k.watchTable {
		if k.watchTable[j].watch == cw {
			k.watchTable[j] = watchEntry[Resp]{}
		}
	}
}

// unwatchAll stops every watch when the kernel has ended (its requests all
// have their outcomes), so that no long-lived context keeps the kernel.
func (k *kernel[Req, Resp]) unwatchAll() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, cw := range k.watches {
		cw.stop()
	}
	k.watches, k.watchTable, k.candDone = nil, nil, nil
}
