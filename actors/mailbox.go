package actors

import (
	"github.com/asynkron/protoactor-go/actor"
)

// ringMailbox is a kernel actor's Proto.Actor mailbox. Its user messages of
// the kernel's message type feed the input ring directly: they are admitted
// by the sending goroutine, in order, without a hop through the actor. Every
// other message — lifecycle commands, faults, system messages — goes through
// Proto.Actor's ordinary queue to the actor.
type ringMailbox[Req, Resp any] struct {
	actor.Mailbox
	k *kernel[Req, Resp]
}

// mailbox returns the producer of the kernel actor's mailbox.
func (k *kernel[Req, Resp]) mailbox() actor.MailboxProducer {
	inner := actor.Unbounded()
	return func() actor.Mailbox { return &ringMailbox[Req, Resp]{Mailbox: inner(), k: k} }
}

// PostUserMessage admits a message of the kernel's type into the ring; a
// sender that asked for a reply (RequestFuture, Request) gets the reply or the
// error as a message.
func (m *ringMailbox[Req, Resp]) PostUserMessage(message any) {
	_, msg, sender := actor.UnwrapEnvelope(message)
	req, ok := msg.(Req)
	if !ok {
		m.Mailbox.PostUserMessage(message)
		return
	}
	k := m.k
	var reply replier
	if sender != nil {
		reply = pidReplier{root: k.rt.system.Root, pid: sender}
	}
	err := k.checkMessage(req)
	if err == nil {
		err = k.admit(k.ctx, slot[Req, Resp]{id: nextID(), enq: stampAtAdmission, ctx: k.ctx, msg: req, reply: reply}, false)
	}
	if err != nil {
		if reply != nil {
			reply.fail(err)
			return
		}
		k.rt.logger.Warn("ringactor: message refused", "kernel", k.def.id, "error", err)
	}
}
