package actors

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ringactor/ringactor/persistence"
)

// stateBody is a stateful kernel's State and the handler that uses it: one
// per kernel, reset at each incarnation.
type stateBody[Req, Resp any] interface {
	// fresh resets the State to a new one (newState) and returns the
	// handler that uses it.
	fresh() Handler[Req, Resp]
	// reset makes the State a new one (newState).
	reset()
	// encode returns the State's bytes.
	encode() ([]byte, error)
	// decode replaces the State with b decoded into a zero State.
	decode(b []byte) error
}

// typedState is the stateBody of a State of type S.
type typedState[S, Req, Resp any] struct {
	s        S
	newState func() S
	h        Handler[Req, Resp]
}

func newTypedState[S, Req, Resp any](newState func() S, handle StateHandler[S, Req, Resp]) *typedState[S, Req, Resp] {
	t := &typedState[S, Req, Resp]{newState: newState}
	t.h = func(ctx context.Context, req Req) (Resp, error) { return handle(ctx, &t.s, req) }
	return t
}

func (t *typedState[S, Req, Resp]) fresh() Handler[Req, Resp] {
	t.reset()
	return t.h
}

func (t *typedState[S, Req, Resp]) reset() {
	var zero S
	t.s = zero
	if t.newState != nil {
		t.s = t.newState()
	}
}

func (t *typedState[S, Req, Resp]) encode() (b []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("encoding panicked: %v", p)
		}
	}()
	return msgpack.Marshal(&t.s)
}

func (t *typedState[S, Req, Resp]) decode(b []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("decoding panicked: %v", p)
		}
	}()
	var s S
	if err := msgpack.Unmarshal(b, &s); err != nil {
		return err
	}
	t.s = s
	return nil
}

// persister keeps a kernel's State on its store: the version it holds, what
// changed since the last save, and the policy. The loop owns it (launch
// before the loop starts, the actor between incarnations); its counters
// are atomic, for StateStats.
type persister struct {
	id     string
	store  persistence.Store
	key    persistence.Key
	policy StatePolicy
	body   interface {
		reset()
		encode() ([]byte, error)
		decode([]byte) error
	}
	// version is the version of the record the State was loaded from or
	// last saved as (0: no record).
	version uint64
	// stale: the State in memory is not the durable one (a new
	// incarnation, or a save that failed): restore before the next message.
	stale bool
	// stopped is the conflict that stopped the kernel: every later
	// message gets it.
	stopped error
	// dirty is how many messages changed the State since the last save
	// (write-behind), and due when the oldest of them must be saved
	// (monoNow).
	dirty int
	due   int64
	timer *time.Timer
	wake  func()

	ver                                           atomic.Uint64
	saves, messages, maxBatch, restores, failures atomic.Uint64
}

// newPersister checks a WithStateStore configuration for kernel id.
func newPersister(id string, cfg *stateStore) (*persister, error) {
	switch {
	case cfg.store == nil:
		return nil, fmt.Errorf("%w: kernel %q: WithStateStore: nil store", ErrInvalidKernel, id)
	case cfg.policy.behind && (cfg.policy.messages < 1 || cfg.policy.delay <= 0):
		return nil, fmt.Errorf("%w: kernel %q: %s: want at least 1 message and a positive delay", ErrInvalidKernel, id, cfg.policy)
	}
	key := cfg.key
	if key.Kind == "" {
		key.Kind = StateKind
	}
	if key.Identity == "" {
		key.Identity = id
	}
	if err := key.Validate(); err != nil {
		return nil, fmt.Errorf("%w: kernel %q: WithStateStore: %w", ErrInvalidKernel, id, err)
	}
	return &persister{id: id, store: cfg.store, key: key, policy: cfg.policy}, nil
}

// stateErr maps a store error to the kernel's typed error.
func (p *persister) stateErr(op string, err error) error {
	var sentinel error
	switch {
	case errors.Is(err, persistence.ErrVersionConflict):
		sentinel = ErrStateConflict
	case errors.Is(err, persistence.ErrCorruptRecord):
		sentinel = ErrStateCorrupt
	case errors.Is(err, persistence.ErrRecordTooLarge):
		sentinel = ErrStateTooLarge
	default: // unavailable, closed, a context that ended
		sentinel = ErrStateUnavailable
	}
	return fmt.Errorf("%w: kernel %q: %s %s: %w", sentinel, p.id, op, p.key, err)
}

// restore loads the last durable State (a new one when the store has no
// record), or says why it cannot; on failure the State stays stale.
func (p *persister) restore(ctx context.Context) error {
	p.restores.Add(1)
	p.stale = true
	p.body.reset()
	rec, err := p.store.Load(ctx, p.key)
	switch {
	case errors.Is(err, persistence.ErrNotFound):
		p.setVersion(0)
	case err != nil:
		p.failures.Add(1)
		return p.stateErr("loading", err)
	case rec.Schema != StateSchema:
		p.failures.Add(1)
		return fmt.Errorf("%w: kernel %q: record %s has schema %d, this kernel reads %d", ErrStateCorrupt, p.id, p.key, rec.Schema, StateSchema)
	default:
		if err := p.body.decode(rec.Value); err != nil {
			p.body.reset()
			p.failures.Add(1)
			return fmt.Errorf("%w: kernel %q: record %s version %d: %w", ErrStateCorrupt, p.id, p.key, rec.Version, err)
		}
		p.setVersion(rec.Version)
	}
	p.stale, p.dirty = false, 0
	return nil
}

// save writes the State against the version held, as the durable form of
// the changes of n messages. A conflict stops the kernel (p.stopped); any
// other failure makes the State stale (it is restored before the next
// message).
func (p *persister) save(ctx context.Context, n int) error {
	b, err := p.body.encode()
	if err != nil {
		p.failures.Add(1)
		p.stale = true
		return fmt.Errorf("%w: kernel %q: encoding its State: %w", ErrStateCorrupt, p.id, err)
	}
	v, err := p.store.Save(ctx, p.key, p.version, StateSchema, b)
	if err != nil {
		p.failures.Add(1)
		err = p.stateErr("saving", err)
		if errors.Is(err, ErrStateConflict) {
			p.stopped = err
		}
		p.stale = true
		return err
	}
	p.setVersion(v)
	p.dirty = 0
	p.saves.Add(1)
	p.messages.Add(uint64(n))
	if uint64(n) > p.maxBatch.Load() {
		p.maxBatch.Store(uint64(n))
	}
	return nil
}

func (p *persister) setVersion(v uint64) {
	p.version = v
	p.ver.Store(v)
}

// changed records n more messages that changed the State under
// write-behind, arming the flush timer at the first.
func (p *persister) changed(n int) {
	if n == 0 {
		return
	}
	if p.dirty == 0 {
		p.arm(p.policy.delay)
	}
	p.dirty += n
}

// arm sets the next flush deadline d from now and wakes the loop then.
func (p *persister) arm(d time.Duration) {
	p.due = monoNow() + int64(d)
	if p.timer == nil {
		p.timer = time.AfterFunc(d, p.wake)
	} else {
		p.timer.Reset(d)
	}
}

// flushDue reports whether write-behind must save now: enough messages, or
// the oldest change's deadline passed.
func (p *persister) flushDue() bool {
	return p.dirty > 0 && p.stopped == nil && (p.dirty >= p.policy.messages || monoNow() >= p.due)
}

// flush saves a write-behind State that changed; a failure other than a
// conflict is logged by the caller and retried after the policy's delay
// (the changes stay in memory: they are not reverted, their replies have
// left).
func (p *persister) flush(ctx context.Context) error {
	if p.dirty == 0 || p.stopped != nil {
		return nil
	}
	if err := p.save(ctx, p.dirty); err != nil {
		if p.stopped == nil {
			p.stale = false // keep the changes; try again later
			p.arm(p.policy.delay)
		}
		return err
	}
	return nil
}

// stop releases the flush timer at the end of an incarnation.
func (p *persister) stopTimer() {
	if p.timer != nil {
		p.timer.Stop()
	}
}

func (p *persister) snapshot() StateStats {
	return StateStats{
		Policy: p.policy.String(), Version: p.ver.Load(), Saves: p.saves.Load(), Messages: p.messages.Load(),
		MaxBatch: p.maxBatch.Load(), Restores: p.restores.Load(), Failures: p.failures.Load(),
	}
}
