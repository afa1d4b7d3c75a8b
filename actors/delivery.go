package actors

// Delivery: where each message's one outcome goes — the waiting requester,
// the downstream kernel, a Proto.Actor sender or chain requester, or the
// kernel's bounded receive stream.

import (
	"context"
	"fmt"
	"reflect"

	"github.com/ringactor/ringactor/lifecycle"
)

// deliver is the reply pump: the outcome goes to the direct requester, down
// the chain, to a reply target, or to the receive stream.
func (k *kernel[Req, Resp]) deliver(s *slot[Req, Resp], resp Resp, err error) {
	switch {
	case s.w != nil:
		s.w.deliver(s.wgen, resp, err)
	case k.down != nil:
		hctx := s.ctx
		if hctx == k.ctx {
			hctx = nil // a Send: the downstream kernel's own context
		}
		if ferr := k.down.forward(k.ctx, hctx, resp, s.id, s.enq, err, s.reply); ferr != nil {
			k.deliverLocal(s, fmt.Errorf("forwarding to %q: %w", k.def.downstream, ferr))
		}
	case s.reply != nil:
		if err != nil {
			s.reply.fail(err)
			return
		}
		switch r := s.reply.(type) {
		case typedReplier[Resp]:
			r.succeed(resp)
		case anyReplier:
			r.succeedAny(resp)
		default:
			r.fail(&WrongMessageTypeError{Kernel: k.def.id, Role: "reply", Want: k.term, Got: reflect.TypeFor[Resp]()})
		}
	default:
		k.emit(output[Resp]{id: s.id, resp: resp, err: err})
	}
}

// deliverLocal reports an error to the message's own reply target, or to
// this kernel's receive stream when it has none.
func (k *kernel[Req, Resp]) deliverLocal(s *slot[Req, Resp], err error) {
	if s.reply != nil {
		s.reply.fail(err)
		return
	}
	k.emit(output[Resp]{id: s.id, err: err})
}

// emit appends to the receive stream, waiting for a reader while it is full.
// Only an aborted kernel (its runtime closed without readers) gives up, and
// counts the lost output as dropped.
func (k *kernel[Req, Resp]) emit(o output[Resp]) {
	select {
	case k.out <- o:
		return
	default:
	}
	select {
	case k.out <- o:
	case <-k.ctx.Done():
		k.cb.Dropped.Add(1)
	}
}

// receive takes the next item of the receive stream; after the kernel
// ended, once the stream is empty, ErrEndOfStream (which no message's
// outcome is).
func (k *kernel[Req, Resp]) receive(ctx context.Context) (Resp, uint64, error) {
	var zero Resp
	if k.state() == lifecycle.Created { // launch publishes out before the state
		return zero, 0, kernelErr(k.def.id, ErrNotLaunched)
	}
	select {
	case o := <-k.out:
		return o.resp, o.id, o.err
	default:
	}
	select {
	case o := <-k.out:
		return o.resp, o.id, o.err
	case <-ctx.Done():
		return zero, 0, kernelErr(k.def.id, ctx.Err())
	case <-k.ended:
		select { // an output emitted just before the end
		case o := <-k.out:
			return o.resp, o.id, o.err
		default:
			return zero, 0, kernelErr(k.def.id, ErrEndOfStream)
		}
	}
}
