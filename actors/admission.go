package actors

// Admission: the producer side of a kernel. Every way a message enters
// (Request, Send, Go, a message forwarded from an upstream kernel, a message
// posted to the kernel's PID) goes through admit, under the kernel's
// producer lock: into the ring, behind it into the bounded overflow, or to
// the backpressure policy.

import (
	"context"
	"reflect"
	"runtime"

	"github.com/ringactor/ringactor/lifecycle"
)

// acceptErr says why the kernel takes no message now; the caller holds mu.
func (k *kernel[Req, Resp]) acceptErr() error {
	switch k.st {
	case lifecycle.Created:
		return kernelErr(k.def.id, ErrNotLaunched)
	case lifecycle.Terminated:
		return kernelErr(k.def.id, ErrTerminated)
	}
	return nil
}

// admit puts s into the ring, or behind it into the overflow, applying the
// backpressure policy when both are full. wait says whether the sender may be
// made to wait: a message posted to the kernel's PID may not (it would stall
// the sending actor or a remote endpoint reader), so under Block it is
// rejected with ErrRingFull when ring and overflow are full, never queued
// without bound.
func (k *kernel[Req, Resp]) admit(ctx context.Context, s slot[Req, Resp], wait bool) error {
	_, err := k.enqueue(ctx, nil, s, wait)
	return err
}

// enqueue is admit for every sender; a direct requester passes the Done
// channel of its cancellable context, and learns whether its request was
// noted with that context's watch (cancelwatch.go) as it was admitted.
//
// A slot whose enq is stampAtAdmission is stamped (or left untimed) the
// first time the lock is held, so its latency includes any wait for room.
func (k *kernel[Req, Resp]) enqueue(ctx context.Context, done <-chan struct{}, s slot[Req, Resp], wait bool) (watched bool, err error) {
	for {
		k.lockProducer()
		if err := k.acceptErr(); err != nil {
			k.mu.Unlock()
			return false, err
		}
		if s.enq == stampAtAdmission {
			s.enq = k.clock.stamp()
		}
		if k.overflow.len() == 0 && k.in.TryPush(s) {
			if done != nil {
				watched = k.watchPushed(ctx, done, s.w, s.wgen)
			}
			k.mu.Unlock()
			k.wake.Notify()
			return watched, nil
		}
		if k.overflow.len() < k.def.overflow {
			k.overflow.push(s)
			k.ovLen.Store(int64(k.overflow.len()))
			k.mu.Unlock()
			k.wake.Notify()
			return false, nil
		}
		switch {
		case k.def.policy == Reject, k.def.policy == Block && !wait:
			k.cb.Dropped.Add(1)
			k.mu.Unlock()
			return false, &BackpressureError{Kernel: k.def.id, MessageID: s.id, Policy: k.def.policy, Err: ErrRingFull}
		case k.def.policy == DropOldest:
			old := s // with no overflow to evict from, the new message is the one dropped
			if k.overflow.len() > 0 {
				old = k.overflow.front()
			}
			dropped := &BackpressureError{Kernel: k.def.id, MessageID: old.id, Policy: DropOldest, Err: ErrDropped}
			if !k.takesOutcomeNow(&old, dropped) {
				// The evicted message's outcome would go to a full receive
				// stream and could be lost: refuse the new message instead,
				// so both keep exactly one outcome and nobody waits.
				k.cb.Dropped.Add(1)
				k.mu.Unlock()
				return false, &BackpressureError{Kernel: k.def.id, MessageID: s.id, Policy: DropOldest, Err: ErrRingFull}
			}
			if k.overflow.len() > 0 {
				k.overflow.pop()
				k.overflow.push(s)
			}
			k.cb.Dropped.Add(1)
			k.mu.Unlock()
			if old.w != nil || old.reply != nil || k.down != nil {
				var zero Resp
				k.deliver(&old, zero, dropped)
			}
			return false, nil
		}
		ch := k.space
		if ch == nil {
			ch = make(chan struct{})
			k.space = ch
		}
		// Announce the wait, then look at the ring once more: the loop pops
		// without the lock, and either it sees blocked (and wakes us when it
		// refills) or we see the slot it freed (both sides are sequentially
		// consistent atomics), so no wake-up is lost.
		k.blocked.Store(true)
		if k.in.Free() > 0 {
			k.mu.Unlock()
			continue
		}
		k.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return false, waitErr(k.def.id, k.state(), ctx.Err())
		}
	}
}

// takesOutcomeNow reports whether an evicted message's outcome err can be
// delivered without waiting: a requester, a reply target or a downstream
// kernel take it (in deliver, after the lock), the receive stream takes it
// now if it has room — it is put there by this call. The caller holds mu.
func (k *kernel[Req, Resp]) takesOutcomeNow(s *slot[Req, Resp], err error) bool {
	if s.w != nil || s.reply != nil || k.down != nil {
		return true
	}
	select {
	case k.out <- output[Resp]{id: s.id, err: err}:
		return true
	default:
		return false
	}
}

// wakeSenders releases senders blocked on a full kernel; the caller holds mu.
func (k *kernel[Req, Resp]) wakeSenders() {
	if k.space != nil {
		close(k.space)
		k.space = nil
		k.blocked.Store(false)
	}
}

// refill moves overflow into the ring. Called by the loop, which is the
// ring's consumer; holding mu makes it the producer for the moment.
func (k *kernel[Req, Resp]) refill() {
	k.mu.Lock()
	for k.overflow.len() > 0 && k.in.TryPush(k.overflow.front()) {
		k.overflow.pop()
	}
	k.ovLen.Store(int64(k.overflow.len()))
	if k.overflow.len() < k.def.overflow || k.in.Free() > 0 {
		k.wakeSenders()
	}
	k.mu.Unlock()
}

// ready reports whether the loop has a message to take.
func (k *kernel[Req, Resp]) ready() bool { return !k.in.Empty() || k.ovLen.Load() != 0 }

// forward admits a message from an upstream kernel (or a chain requester),
// waiting under ctx for room: backpressure travels up the chain. hctx is the
// context its handler sees (nil: this kernel's own).
func (k *kernel[Req, Resp]) forward(ctx, hctx context.Context, msg Req, id uint64, enq int64, fwd error, reply replier) error {
	if hctx == nil {
		hctx = k.ctx
	}
	return k.admit(ctx, slot[Req, Resp]{id: id, enq: enq, ctx: hctx, msg: msg, fwd: fwd, reply: reply}, true)
}

// checkMessage rejects nil messages.
func (k *kernel[Req, Resp]) checkMessage(msg Req) error {
	if k.nilable && reflect.ValueOf(&msg).Elem().IsNil() {
		return kernelErr(k.def.id, ErrNilMessage)
	}
	return nil
}

// request sends msg and waits for its reply: the direct, typed path.
//
// Its common case (the request goes straight into the ring, and the loop
// is busy or the context is watched) runs in this frame and pushRequest's
// alone, both small: with many requesters in flight each one's stack has
// gone cold by the time its reply comes, so every line a request touches
// there costs. The other cases are in admitQueued and await.
func (k *kernel[Req, Resp]) request(ctx context.Context, msg Req) (Resp, error) {
	if err := k.checkMessage(msg); err != nil {
		var zero Resp
		return zero, err
	}
	if err := ctx.Err(); err != nil {
		var zero Resp
		return zero, kernelErr(k.def.id, err)
	}
	w := k.waiters.Get().(*waiter[Resp])
	gen := w.arm()
	done := ctx.Done()
	watched, pushed := k.pushRequest(ctx, done, msg, w, gen)
	if !pushed {
		var err error
		if watched, err = k.admitQueued(ctx, done, msg, w, gen); err != nil {
			k.waiters.Put(w)
			var zero Resp
			return zero, err
		}
	}
	if (done == nil || watched) && k.in.Len() > 2 {
		// A context that never ends, or one the kernel watches, and a
		// busy loop: a plain receive (the watch signals a cancellation on
		// the same channel).
		return k.outcome(ctx, w, <-w.ch)
	}
	return k.await(ctx, done, w, gen, watched)
}

// admitQueued admits a request that pushRequest could not put straight into
// the ring, through enqueue: behind it in the overflow, or under the
// backpressure policy.
func (k *kernel[Req, Resp]) admitQueued(ctx context.Context, done <-chan struct{}, msg Req, w *waiter[Resp], gen uint64) (watched bool, err error) {
	return k.enqueue(ctx, done, slot[Req, Resp]{id: nextID(), enq: stampAtAdmission, ctx: ctx, msg: msg, w: w, wgen: gen}, true)
}

// await waits for the outcome of request gen on w: after the kernel's
// requester yields (WithRequesterYields) when the loop is about to answer,
// then on the reply channel, in a select with the context's Done unless the
// request is watched.
func (k *kernel[Req, Resp]) await(ctx context.Context, done <-chan struct{}, w *waiter[Resp], gen uint64, watched bool) (Resp, error) {
	if k.in.Len() <= 2 {
		// The loop is about to answer: a yield usually sees the reply
		// without parking. How DefaultRequesterYields was chosen: on 2
		// cores the loop and a sequential requester mostly share one
		// processor, so a yield lets the loop answer before the requester
		// parks, while a spin only delays it. Measured with a watched
		// context (p50 vs a channel ping-pong, median of 10 interleaved
		// runs; run-to-run noise about ±0.05 on a shared machine): 0 yields
		// 1.44, 1 yield 1.28, 2 yields 1.24 and 1.32, 3 yields 1.27, 4
		// yields 1.29, 8 yields 1.26; a spin of 32 checks before the yield
		// 1.65. Earlier, with the select: 0 yields 1.79, 1 yield 1.23. What
		// the yield costs in the tail: README, Performance.
		for range k.def.yields {
			runtime.Gosched()
			select {
			case o := <-w.ch:
				return k.outcome(ctx, w, o)
			default:
			}
		}
	}
	if done == nil || watched {
		return k.outcome(ctx, w, <-w.ch)
	}
	select {
	case o := <-w.ch:
		return k.outcome(ctx, w, o)
	case <-done:
		if w.end(gen) {
			// The kernel will find the request given up and leave w alone.
			k.waiters.Put(w)
			var zero Resp
			return zero, waitErr(k.def.id, k.state(), ctx.Err())
		}
		return k.outcome(ctx, w, <-w.ch) // the kernel claimed the outcome first: it is on its way
	}
}

// pushRequest is enqueue's common case for a direct request, and reports
// whether it applied: the kernel takes messages, nothing waits in the
// overflow, and the ring has room. The slot is then written in place in the
// ring (Claim, Publish), not copied there through the frames of the calls
// in between; otherwise nothing changed, and the caller goes through
// enqueue, which knows the other cases.
func (k *kernel[Req, Resp]) pushRequest(ctx context.Context, done <-chan struct{}, msg Req, w *waiter[Resp], gen uint64) (watched, pushed bool) {
	id := nextID()
	k.lockProducer()
	if k.acceptErr() != nil || k.overflow.len() != 0 {
		k.mu.Unlock()
		return false, false
	}
	s := k.in.Claim()
	if s == nil {
		k.mu.Unlock()
		return false, false
	}
	// Field by field: a composite literal would be built in this frame
	// first and then copied.
	s.id, s.enq, s.ctx, s.msg, s.fwd, s.w, s.wgen, s.reply = id, k.clock.stamp(), ctx, msg, nil, w, gen, nil
	k.in.Publish()
	if done != nil {
		watched = k.watchPushed(ctx, done, w, gen)
	}
	k.mu.Unlock()
	k.wake.Notify()
	return watched, true
}

// outcome puts w back for reuse and returns o, the outcome received on its
// channel: the kernel's answer, or the cancellation of ctx by its watch.
func (k *kernel[Req, Resp]) outcome(ctx context.Context, w *waiter[Resp], o reply[Resp]) (Resp, error) {
	k.waiters.Put(w)
	if o.err == errWatchCancelled {
		return o.resp, waitErr(k.def.id, k.state(), ctx.Err())
	}
	return o.resp, o.err
}

// goAsync admits msg with reply as its reply target.
func (k *kernel[Req, Resp]) goAsync(ctx context.Context, msg Req, reply replier) error {
	if err := k.checkMessage(msg); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return kernelErr(k.def.id, err)
	}
	return k.admit(ctx, slot[Req, Resp]{id: nextID(), enq: stampAtAdmission, ctx: ctx, msg: msg, reply: reply}, true)
}

// send admits msg without waiting for its reply, which goes downstream or
// to the receive stream. It returns the message id.
func (k *kernel[Req, Resp]) send(ctx context.Context, msg Req) (uint64, error) {
	if err := k.checkMessage(msg); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, kernelErr(k.def.id, err)
	}
	id := nextID()
	return id, k.admit(ctx, slot[Req, Resp]{id: id, enq: stampAtAdmission, ctx: k.ctx, msg: msg}, true)
}

// lockProducer takes the producer lock for a sender. Its holders are brief
// (a push and a few words), so a sender that finds it held retries a few
// times before it waits in Lock: sync.Mutex spins only while the sender's
// processor has no other goroutine to run, so with many senders queued it
// parks at once, and a park and its wake-up cost several times the hold.
// Measured with 256 requesters in flight (profile of the pipelined bench):
// the mutex's slow paths took ~5% of the CPU time without the retries and
// ~2% with them.
func (k *kernel[Req, Resp]) lockProducer() {
	for range producerLockRetries {
		if k.mu.TryLock() {
			return
		}
	}
	k.mu.Lock()
}

// producerLockRetries is how many times lockProducer tries before it waits.
const producerLockRetries = 8
