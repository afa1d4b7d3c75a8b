package actors

import (
	"context"
	"fmt"
)

// RequestAsyncWithin is RequestAsync for a producer whose wait for room is
// shorter-lived than the message: admission waits under admit, and the
// handler runs under hctx (which also decides, like RequestAsync's ctx,
// whether the message is still wanted when its turn comes). A stream
// source uses it: the caller's context bounds its Send, the graph's context
// the element. When it returns an error the message was not admitted and
// done is not called.
func (h *Kernel[Req, Resp]) RequestAsyncWithin(admit, hctx context.Context, msg Req, done func(Resp, error)) error {
	if err := h.checkChainReply(); err != nil {
		return err
	}
	if done == nil {
		return kernelErr(h.k.def.id, fmt.Errorf("%w: nil done callback", ErrNilMessage))
	}
	if err := h.k.checkMessage(msg); err != nil {
		return err
	}
	if err := admit.Err(); err != nil {
		return kernelErr(h.k.def.id, err)
	}
	if err := hctx.Err(); err != nil {
		return kernelErr(h.k.def.id, err)
	}
	return h.k.admit(admit, slot[Req, Resp]{id: nextID(), enq: stampAtAdmission, ctx: hctx, msg: msg, reply: funcReplier[Resp](done)}, true)
}
