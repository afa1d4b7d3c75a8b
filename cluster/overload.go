package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/internal/wire"
)

// wireKindOverloaded is the WireError kind of a request an activation
// refused without handling it: its inbox's queue was full, or its kernel's
// ring and overflow were (a kernel with the Reject policy). The client
// sees a *RemoteError matching ErrOverloaded; the request was not handled,
// so it may be sent again, after a pause.
const wireKindOverloaded = "overloaded"

// refuseOverloaded answers the request w, which found queued requests
// ahead of it in its activation's inbox (the bound), with an overloaded
// WireError; a one-way message has nobody to answer and is logged at
// debug level.
func (m *Member) refuseOverloaded(w *wire.WireEnvelope, sender *actor.PID, queued int) {
	reply := wire.NewErrorOf(wireKindOverloaded,
		fmt.Sprintf("the activation has %d requests queued (its bound): request refused, not handled", queued), w.GetId())
	if to := m.replyTarget(w, sender); to != nil {
		m.sys.Root.Send(to, reply)
		return
	}
	m.logger.Debug("ringactor/cluster: one-way message refused: the activation is overloaded", slog.Int("queued", queued))
}

// admissionError is the WireError that reports err, why the kernel did not
// admit request id: overloaded for a full ring (the Reject policy, or a
// message that may not wait), timeout for the requester's own deadline
// (remote) passing while the request waited for room.
func admissionError(err error, id uint64, remote bool) *wire.WireError {
	switch {
	case errors.Is(err, actors.ErrRingFull):
		return wire.NewErrorOf(wireKindOverloaded, err.Error(), id)
	case remote && errors.Is(err, context.DeadlineExceeded):
		return wire.NewErrorOf(wire.KindTimeout, err.Error(), id)
	}
	return wire.NewError(err, id)
}
