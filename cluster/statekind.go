package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/internal/wire"
	"github.com/ringactor/ringactor/messages"
	"github.com/ringactor/ringactor/persistence"
)

// grainRequestKey is the context key under which a durable activation's
// handler finds its *grainRequest.
type grainRequestKey struct{}

// startDurable starts the activation's handler: for a stateful kind on a
// member with a state store, from the durable hand-off or the stored
// record, with a handler that records each message's outcome and state.
func (g *grain[Req, Resp]) startDurable(c actor.Context) (started[Req, Resp], error) {
	if !g.kind.stateful || g.member.state == nil {
		return g.start(g.identity, g.state)
	}
	key := persistence.Key{Cluster: g.member.name, Kind: g.kind.name, Identity: g.identity}
	d, state, err := g.member.loadDurable(key, g.state)
	if err != nil {
		g.startKind = stateWireKind(err)
		return started[Req, Resp]{}, fmt.Errorf("%w: loading its state: %w", ErrStateStore, err)
	}
	st, err := g.start(g.identity, state)
	if err != nil {
		return st, err
	}
	if st.snapshot == nil {
		g.member.logger.Debug("ringactor/cluster: a stateful kind's handler is not a Snapshotter: its state is not saved",
			slog.String("kind", g.kind.name))
		return st, nil
	}
	d.snap, d.pid = st.snapshot, c.Self()
	g.durable = d
	inner := st.newHandler
	st.newHandler = func() actors.Handler[Req, Resp] { return g.durableHandler(d, inner()) }
	return st, nil
}

// durableHandler wraps h: a request whose idempotency key the record holds
// is answered from it without being handled; any other is handled, its
// outcome recorded under its key (if it has one), and the record after it
// kept in the request for the committer.
func (g *grain[Req, Resp]) durableHandler(d *durable, h actors.Handler[Req, Resp]) actors.Handler[Req, Resp] {
	return func(ctx context.Context, req Req) (Resp, error) {
		var zero Resp
		r, _ := ctx.Value(grainRequestKey{}).(*grainRequest[Req, Resp])
		if d.stale.Load() {
			if r != nil {
				r.unhandled = true
			}
			return zero, ErrStaleActivation // answered by the committer
		}
		if r != nil && r.key != "" {
			if out, ok := d.table.get(r.key); ok {
				r.replayed, r.out = true, out
				return zero, nil
			}
		}
		resp, err := h(ctx, req)
		if r == nil {
			return resp, err
		}
		if r.key != "" {
			r.out = g.outcomeOf(r, &resp, err)
			r.replayed = true
			d.table.put(r.key, r.out)
		}
		if state, serr := d.snap(); serr != nil {
			r.recErr = serr
		} else {
			r.record = encodeStateRecord(state, d.table)
		}
		return resp, err
	}
}

// outcomeOf is the recorded outcome of a handled request.
func (g *grain[Req, Resp]) outcomeOf(r *grainRequest[Req, Resp], resp *Resp, err error) appliedOutcome {
	if err != nil {
		we := g.errorReply(r, err)
		return appliedOutcome{isErr: true, errKind: we.GetKind(), errMsg: we.GetMessage()}
	}
	if s, ok := any(resp).(PlacementStamper); ok {
		s.StampPlacement(g.member.Address() + "/" + r.k.Placement())
	}
	w, perr := wire.PackFrom(resp, messages.Header{ID: 1, Priority: messages.PriorityNormal}, g.member.maxPayload)
	if perr != nil {
		we := wire.NewError(perr, 0)
		return appliedOutcome{isErr: true, errKind: we.GetKind(), errMsg: we.GetMessage()}
	}
	return appliedOutcome{typeID: w.GetTypeId(), payload: w.GetPayload()}
}

// errorReply is the WireError answering r's handler error err.
func (g *grain[Req, Resp]) errorReply(r *grainRequest[Req, Resp], err error) *wire.WireError {
	if r.remote && errors.Is(err, context.DeadlineExceeded) {
		return wire.NewErrorOf(wire.KindTimeout, err.Error(), r.id)
	}
	return wire.NewError(err, r.id)
}

// replyOf is the wire reply of a recorded outcome, answering request id.
func replyOf(out appliedOutcome, id uint64) any {
	if out.isErr {
		return wire.NewErrorOf(out.errKind, out.errMsg, id)
	}
	return &wire.WireEnvelope{Id: messages.NextID(), CorrelationId: id, Priority: uint32(messages.PriorityNormal),
		TypeId: out.typeID, Payload: out.payload}
}

// doneDurable hands a durable activation's reply to the committer, which
// sends it once the state it reflects is saved.
func (g *grain[Req, Resp]) doneDurable(r *grainRequest[Req, Resp], resp Resp, err error) {
	var reply any
	switch {
	case r.replayed:
		reply = replyOf(r.out, r.id)
	case err == nil:
		r.resp = resp
		if s, ok := any(&r.resp).(PlacementStamper); ok {
			s.StampPlacement(g.member.Address() + "/" + r.k.Placement())
		}
		reply = g.encodeReply(&r.resp, r.id)
	default:
		reply = g.errorReply(r, err)
	}
	g.member.state.commit.submit(pendingReply{d: g.durable, record: r.record, recErr: r.recErr,
		sender: r.sender, reply: reply, id: r.id, answer: g.answer, unhandled: r.unhandled})
}

// passivateDurable ends a durable activation whose kernel has terminated:
// once its last saves are done, it hands off its record (not when it is
// stale: the next activation loads the store's).
func (g *grain[Req, Resp]) passivateDurable() {
	d := g.durable
	g.member.state.commit.flush()
	if g.snapshot != nil {
		if _, err := g.snapshot(); err != nil {
			g.member.logger.Debug("ringactor/cluster: Passivate failed (its state is in the store)", slog.String("kernel", g.kernelID), slog.Any("error", err))
		}
	}
	if d.stale.Load() || d.version == 0 {
		return
	}
	g.out, g.hasOut = encodeHandoff(d.version, d.last), true
}
