package actors

// Consumption: the consumer side of a kernel. The loop (ring.Loop) calls
// poll, which takes a batch from the ring, screens each message, runs the
// handler and hands the outcome to delivery; the device pump screens and
// finishes its messages with the same functions.

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/supervision"
)

// maxBatch bounds how many messages the loop takes in one batch: the slots
// of a batch go back to producers together, at its end.
const maxBatch = 64

// poll handles one batch: the messages admitted so far (at most maxBatch),
// read in place from the ring, their slots released with one store and the
// latency counters written once (the LMAX Disruptor's batch consumption).
// The batch stops early when the gate closes or a terminate arrives (the
// loop looks again) and at a fault, which it returns.
//
// The release comes before the outcome of the batch's last message is
// delivered (that message is copied out of its slot first): so once every
// admitted message has its outcome, the ring's slots are all free again,
// and a producer that saw the last reply finds the full capacity.
func (k *kernel[Req, Resp]) poll(h Handler[Req, Resp], draining bool) (bool, error) {
	n := k.in.Pending()
	if n == 0 {
		if k.ovLen.Load() != 0 {
			k.refill()
			n = k.in.Pending()
		}
		if n == 0 {
			k.endBatch() // what a caller finished outside a batch
			return false, nil
		}
	}
	n = min(n, maxBatch)
	if !draining && !k.runnable() {
		return false, nil
	}
	done := 0
	var fault error
	head, _ := k.in.Indices()
	for {
		s := k.in.Peek(done)
		done++
		resp, err, failed := k.run(h, s, draining)
		k.taken.Store(head + uint64(done)) // answered: no longer queued
		if failed && !draining && k.def.decider(err) != supervision.Resume {
			fault = err
		}
		// The gate is looked at once per message, here: the message
		// after this one runs only if it is still open.
		if done == n || fault != nil || (!draining && !k.runnable()) {
			last := *s
			k.in.Release(done)
			k.finish(&last, resp, err, failed)
			break
		}
		k.finish(s, resp, err, failed)
	}
	k.endBatch()
	if k.ovLen.Load() != 0 || k.blocked.Load() {
		k.refill()
	}
	return true, fault
}

// runnable reports whether the loop may start another message outside a
// drain: the gate is open and no terminate is pending.
func (k *kernel[Req, Resp]) runnable() bool {
	return k.cb.IsOpen() && k.cb.Terminate.Load() == 0
}

// next takes the oldest admitted message, refilling the ring from the
// overflow (and waking blocked senders) as it goes.
func (k *kernel[Req, Resp]) next() (slot[Req, Resp], bool) {
	s, ok := k.in.TryPop()
	if !ok {
		if k.ovLen.Load() == 0 {
			return s, false
		}
		k.refill()
		if s, ok = k.in.TryPop(); !ok {
			return s, false
		}
	} else if k.ovLen.Load() != 0 || k.blocked.Load() {
		k.refill()
	}
	return s, true
}

// handle runs the handler on one message and delivers its outcome. It
// returns a fault when the decider wants the kernel restarted.
func (k *kernel[Req, Resp]) handle(h Handler[Req, Resp], s *slot[Req, Resp], draining bool) error {
	resp, err, failed := k.run(h, s, draining)
	k.finish(s, resp, err, failed)
	if failed && !draining && k.def.decider(err) != supervision.Resume {
		return err
	}
	return nil
}

// run screens one message and runs the handler on it, returning its
// outcome without delivering it; failed says the handler failed (an error
// or a panic, as an *gpu.ExecutionError) rather than the message being
// screened out.
func (k *kernel[Req, Resp]) run(h Handler[Req, Resp], s *slot[Req, Resp], draining bool) (resp Resp, err error, failed bool) {
	if err := k.screen(s, draining); err != nil {
		return resp, err, false
	}
	resp, ee := k.invokeTimed(h, s)
	if ee != nil {
		var zero Resp
		return zero, ee, true
	}
	return resp, nil, false
}

// screen says why a message must not run, or nil: a failure forwarded from
// upstream, a drain that rejects, a requester that gave up, a kernel aborted
// by a Terminate whose context ended. The CPU loop and the device pump both
// screen every message with it.
func (k *kernel[Req, Resp]) screen(s *slot[Req, Resp], draining bool) error {
	switch {
	case s.fwd != nil:
		return s.fwd
	case draining && k.rejectAll.Load():
		return kernelErr(k.def.id, k.drainCause)
	case draining && k.def.drain == DrainReject:
		return kernelErr(k.def.id, ErrTerminated)
	}
	if err := s.ctx.Err(); err != nil { // the requester gave up before its turn
		if s.ctx == k.ctx {
			// Not a requester's context but the kernel's own: a Terminate
			// whose context ended aborted the kernel. The message did not run.
			err = fmt.Errorf("%w: not handled (the terminate's context ended before its turn: %w)", ErrTerminated, err)
		}
		return kernelErr(k.def.id, err)
	}
	return nil
}

// invoke calls the handler with ctx (the message's, or its handle span's),
// turning an error or a panic into an ExecutionError. A handler that
// returns skips recover (returned is set), which the loop would otherwise
// call once per message.
func (k *kernel[Req, Resp]) invoke(ctx context.Context, h Handler[Req, Resp], s *slot[Req, Resp]) (resp Resp, ee *gpu.ExecutionError) {
	returned := false
	defer func() {
		if returned {
			return
		}
		if p := recover(); p != nil {
			ee = &gpu.ExecutionError{Kernel: k.def.id, MessageID: s.id, Err: fmt.Errorf("panic: %v", p), Panic: p, Stack: debug.Stack()}
		}
	}()
	resp, err := h(ctx, s.msg)
	returned = true
	if err != nil {
		return resp, &gpu.ExecutionError{Kernel: k.def.id, MessageID: s.id, Err: err}
	}
	return resp, nil
}

// finish records one handled message and delivers its outcome. Processed and
// Errors count it before its reply leaves. A timed message (kernel_timing.go)
// then ends with one clock read, just after its reply's hand-off: its
// handler duration and latency go to the histograms, its latency joins the
// consumer's batch, written by endBatch. An untimed one reads no clock.
func (k *kernel[Req, Resp]) finish(s *slot[Req, Resp], resp Resp, err error, failed bool) {
	k.cb.Processed.Store(k.cb.Processed.Load() + 1)
	if failed {
		k.cb.Errors.Store(k.cb.Errors.Load() + 1)
	}
	enq := s.enq
	k.deliver(s, resp, err)
	if enq > 0 {
		now := monoNow()
		k.hist.end(now, enq)
		k.batch.Add(enq)
		k.batchEnd = now
	}
}

// endBatch ends the consumer's batch: the latencies of the timed messages
// finished since the last call go to the control block, measured to the end
// of the batch's last timed one (no clock read here).
func (k *kernel[Req, Resp]) endBatch() {
	if k.batch.Len() != 0 {
		k.cb.RecordBatch(&k.batch, k.batchEnd, epochUnix+k.batchEnd)
	}
}
