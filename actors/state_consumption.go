package actors

// Consumption for a persistent kernel (WithStateStore): the loop handles a
// batch, then saves the State once (write-through: before the batch's
// replies leave; write-behind: when the policy says so, after they left).

import (
	"errors"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/ringactor/ringactor/gpu/ring"

	"github.com/ringactor/ringactor/supervision"
)

// stateOutcome is one message of a persistent kernel's batch, held until
// the batch's save.
type stateOutcome[Req, Resp any] struct {
	s      slot[Req, Resp]
	resp   Resp
	err    error
	failed bool // the handler failed, or the save of its change did
	ran    bool // the handler ran: the State may have changed
}

// pollState is poll for a persistent kernel. The messages a previous
// incarnation held back (k.devHeld: those whose State change a panic
// discarded) come first, then the ring's. Each message passes screen, then
// the State gate (a conflict that stopped the kernel, a State to restore
// first), then the handler; their outcomes wait in k.stateBuf for the
// batch's save.
func (k *kernel[Req, Resp]) pollState(h Handler[Req, Resp], draining bool) (bool, error) {
	p := k.persist
	held := min(len(k.devHeld), maxBatch)
	n := k.in.Pending()
	if n == 0 && held == 0 {
		if k.ovLen.Load() != 0 {
			k.refill()
			n = k.in.Pending()
		}
		if n == 0 {
			k.endBatch()
			if p.policy.behind && p.flushDue() {
				if err := k.flushState(); err != nil && !draining {
					return false, err
				}
			}
			return false, nil
		}
	}
	if !draining && !k.runnable() {
		return false, nil
	}
	n = min(n, maxBatch-held)
	total := held + n
	buf := k.stateBuf[:0]
	var fault, gateErr error
	gated := false
	ran, done := 0, 0
	head, _ := k.in.Indices()
	for i := 0; i < total; i++ {
		var s *slot[Req, Resp]
		if i < held {
			s = k.devHeld[i]
		} else {
			s = k.in.Peek(done)
			done++
		}
		buf = append(buf, stateOutcome[Req, Resp]{s: *s})
		o := &buf[len(buf)-1]
		if err := k.screen(s, draining); err != nil {
			o.err = err
		} else {
			if !gated {
				gated, gateErr = true, k.stateGate()
			}
			if gateErr != nil {
				o.err, o.failed = gateErr, true
			} else {
				resp, ee := k.invokeTimed(h, s)
				o.ran = true
				ran++
				if ee != nil {
					o.err, o.failed = ee, true
				} else {
					o.resp = resp
				}
			}
		}
		if done > 0 {
			k.taken.Store(head + uint64(done)) // handled: no longer queued
		}
		if o.ran && o.failed && !draining && k.def.decider(o.err) != supervision.Resume {
			fault = o.err
			break
		}
		if !draining && !k.runnable() {
			break
		}
		if p.policy.behind && p.dirty+ran >= p.policy.messages {
			break // the loss bound: a save is due before another change
		}
	}
	k.devHeld = k.devHeld[min(len(buf), held):]
	if len(k.devHeld) == 0 {
		k.devHeld = nil
	}
	if done > 0 {
		k.in.Release(done)
	}
	var saveErr error
	switch {
	case fault != nil:
		k.discardBatch(buf)
	case ran > 0 && !p.policy.behind:
		if saveErr = p.save(k.ctx, ran); saveErr != nil {
			var zero Resp
			for i := range buf {
				if o := &buf[i]; o.ran && o.err == nil {
					o.resp, o.err, o.failed = zero, saveErr, true
				}
			}
		}
	case ran > 0:
		p.changed(ran)
	}
	if fault == nil {
		for i := range buf {
			o := &buf[i]
			k.finish(&o.s, o.resp, o.err, o.failed)
		}
	}
	clear(buf)
	k.stateBuf = buf[:0]
	k.endBatch()
	if fault == nil && p.policy.behind && p.flushDue() {
		saveErr = k.flushState()
	}
	if k.ovLen.Load() != 0 || k.blocked.Load() {
		k.refill()
	}
	if fault == nil && !draining && errors.Is(saveErr, ErrStateConflict) {
		fault = saveErr // the kernel stops: another writer owns the State
	}
	return true, fault
}

// stateGate says why no message may run now, or nil: the conflict that
// stopped the kernel, or a State that could not be restored. A stale State
// (a new incarnation, a failed save) is restored here, once per batch.
func (k *kernel[Req, Resp]) stateGate() error {
	p := k.persist
	if p.stopped != nil {
		return p.stopped
	}
	if p.stale {
		if err := p.restore(k.ctx); err != nil {
			k.rt.logger.Warn("ringactor: kernel state not restored", "kernel", k.def.id, "error", err)
			return err
		}
	}
	return nil
}

// discardBatch handles a batch that ended in a fault (a panic, or an error
// the decider does not resume): the State goes back to its last durable
// value in the next incarnation, so under write-through the messages whose
// changes are discarded with it, whose replies have not left, are handled
// again by that incarnation, first, in order; the fault's message and those
// screened out get their outcomes now. Under write-behind every reply
// leaves now (the policy acknowledges before saving; the changes are lost
// as a crash's are).
func (k *kernel[Req, Resp]) discardBatch(buf []stateOutcome[Req, Resp]) {
	last := len(buf) - 1
	var requeue []*slot[Req, Resp]
	for i := range buf {
		o := &buf[i]
		if i < last && o.ran && !k.persist.policy.behind {
			s := o.s
			requeue = append(requeue, &s)
			continue
		}
		k.finish(&o.s, o.resp, o.err, o.failed)
	}
	if len(requeue) > 0 {
		k.devHeld = append(requeue, k.devHeld...)
	}
}

// flushState saves a write-behind State whose save is due; a failure is
// logged and returned (a conflict stops the kernel).
func (k *kernel[Req, Resp]) flushState() error {
	err := k.persist.flush(k.ctx)
	if err != nil {
		k.rt.logger.Warn("ringactor: kernel state not saved", "kernel", k.def.id, "policy", k.persist.policy.String(), "error", err)
	}
	return err
}

// startStateLoop runs a persistent kernel's loop with handler h: an
// incarnation after a restart restores the State before its first message
// (it is stale), the loop polls with pollState, a write-behind loop also
// wakes when a save falls due, and the loop's end stops the flush timer
// and, after a terminate, saves a write-behind State's last changes.
func (k *kernel[Req, Resp]) startStateLoop(c actor.Context, h Handler[Req, Resp], restart bool) {
	p := k.persist
	if restart {
		p.stale = true
	}
	loop := &ring.Loop{
		Control: k.cb, Wake: k.wake, Wait: k.def.wait,
		Poll: func(draining bool) (bool, error) { return k.pollState(h, draining) },
		Ready: func() bool {
			return k.ready() || len(k.devHeld) > 0 || (p.policy.behind && p.flushDue())
		},
		Stop: func(fault error) error {
			p.stopTimer()
			if fault == nil && p.policy.behind {
				_ = k.flushState() // logged; the kernel ends either way
			}
			return fault
		},
	}
	k.spawnLoop(c, loop.Run)
}
