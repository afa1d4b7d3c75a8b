package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/ringactor/ringactor/internal/wire"
	"github.com/ringactor/ringactor/persistence"
)

// Snapshotter is implemented by a Stateful whose state a member with a
// state store (WithStateStore) saves: Snapshot returns the activation's
// state as it is after the message just handled (the bytes the kind's
// activate function takes back). It is called from the activation's
// kernel right after each Handle, so it sees the state that message left
// and needs no locking of its own. A Stateful without it is not saved:
// its state moves with hand-offs only, as without a store.
type Snapshotter interface {
	// Snapshot returns the activation's current state.
	Snapshot() ([]byte, error)
}

// Errors of activations with a state store, matched with errors.Is (a
// remote one is a *RemoteError whose Is reports them).
var (
	// ErrStaleActivation: the activation that handled the request found,
	// saving its state, that another activation of the identity had saved
	// since it loaded (persistence.ErrVersionConflict): it passivated at
	// once, without saving, and the request's effect was discarded. The
	// client looks the identity up again and resends the request until its
	// deadline (the next activation loads the newer state); an error that
	// matches it says the deadline passed doing so.
	ErrStaleActivation = errors.New("ringactor/cluster: stale activation")
	// ErrStateStore: the identity's state store failed the request: it
	// could not be reached (also persistence.ErrStoreUnavailable), holds a
	// corrupt record (persistence.ErrCorruptRecord), or the state is
	// larger than the store takes (persistence.ErrRecordTooLarge). A
	// request that fails with it was not acknowledged; whether its effect
	// was saved is unknown (a failed commit) unless it carried an
	// idempotency key, which makes a retry safe.
	ErrStateStore = errors.New("ringactor/cluster: state store failed")
)

// The WireError kinds of a state store's failures.
const (
	wireKindStale            = "stale_activation"
	wireKindStateUnavailable = "state_unavailable"
	wireKindStateCorrupt     = "state_corrupt"
	wireKindStateTooLarge    = "state_too_large"
)

// stateWireKind is the WireError kind of a store error.
func stateWireKind(err error) string {
	switch {
	case errors.Is(err, persistence.ErrVersionConflict), errors.Is(err, ErrStaleActivation):
		return wireKindStale
	case errors.Is(err, persistence.ErrCorruptRecord):
		return wireKindStateCorrupt
	case errors.Is(err, persistence.ErrRecordTooLarge):
		return wireKindStateTooLarge
	}
	return wireKindStateUnavailable
}

// isStateKind reports a wire kind of a state store failure, and its
// persistence sentinel.
func stateKindSentinel(kind string) (error, bool) {
	switch kind {
	case wireKindStateUnavailable:
		return persistence.ErrStoreUnavailable, true
	case wireKindStateCorrupt:
		return persistence.ErrCorruptRecord, true
	case wireKindStateTooLarge:
		return persistence.ErrRecordTooLarge, true
	}
	return nil, false
}

// Defaults of a state store.
const (
	// DefaultStateBatch is the most identities' saves one group commit
	// holds (WithStateBatch).
	DefaultStateBatch = 512
	// DefaultStateTimeout bounds one load or group commit
	// (WithStateTimeout).
	DefaultStateTimeout = 10 * time.Second
)

// StateOption configures a member's state store (WithStateStore).
type StateOption func(*stateConfig)

type stateConfig struct {
	store    persistence.Store
	maxBatch int
	timeout  time.Duration
}

// WithStateBatch sets the most identities' saves one group commit holds
// (default DefaultStateBatch); n <= 0 keeps it.
func WithStateBatch(n int) StateOption {
	return func(c *stateConfig) {
		if n > 0 {
			c.maxBatch = n
		}
	}
}

// WithStateTimeout bounds one load or group commit of the store (default
// DefaultStateTimeout); a store that takes longer is unavailable.
func WithStateTimeout(d time.Duration) StateOption {
	return func(c *stateConfig) {
		if d > 0 {
			c.timeout = d
		}
	}
}

// WithStateStore makes the member keep the state of its stateful kinds'
// identities (NewStatefulKind, DefineStateful, whose Stateful implements
// Snapshotter) in store, write-through: an activation takes its state from
// the hand-off when there is one, else from the store; after each message
// it takes a Snapshot, and the message's reply leaves only once a save of
// that state (against the version the activation loaded) is durable. The
// saves of all the member's activations wait for one another into one
// store transaction (group commit: Batch), so throughput is not one fsync
// a message. The record is keyed by the cluster's name, the kind and the
// identity, and also keeps the outcomes of the identity's last
// MaxIdempotencyKeys requests that carried an idempotency key
// (WithIdempotencyKey): a request retried with one is answered from the
// record, not applied again. docs/cluster.md ("State") says what each
// failure does. Every member of a cluster that hosts the kind must use the
// same store (PostgreSQL for several members; the embedded file store is
// for a cluster of one). The member does not close store.
func WithStateStore(store persistence.Store, opts ...StateOption) Option {
	return func(c *memberConfig) {
		if store == nil {
			c.state = nil
			return
		}
		sc := &stateConfig{store: store, maxBatch: DefaultStateBatch, timeout: DefaultStateTimeout}
		for _, o := range opts {
			o(sc)
		}
		c.state = sc
	}
}

// durable is the persistence of one activation. key and snap are fixed;
// version and last belong to the committer once the activation serves
// (before, to the activation).
type durable struct {
	key     persistence.Key
	snap    func() ([]byte, error)
	table   *appliedTable // the kernel's
	pid     *actor.PID    // the grain, told to passivate when stale
	version uint64        // the record's version the activation holds
	last    []byte        // the record value at version
	stale   atomic.Bool   // a save failed: discard the activation
	failure atomic.Pointer[wire.WireError]
	told    bool // the grain was told to passivate (committer's)
}

// staleError is what a stale activation answers: why it is stale.
func (d *durable) staleError(id uint64) *wire.WireError {
	we := d.failure.Load()
	if we == nil {
		return wire.NewErrorOf(wireKindStale, d.key.String()+": the activation is stale", id)
	}
	return wire.NewErrorOf(we.GetKind(), we.GetMessage(), id)
}

// pendingReply is a reply waiting for the save of the state it reflects.
type pendingReply struct {
	d       *durable
	record  []byte // the record after the message; nil: no change
	recErr  error  // the snapshot failed
	sender  *actor.PID
	reply   any
	id      uint64
	answer  func(*actor.PID, any)
	barrier chan struct{} // a flush: closed once what came before is done
	// unhandled: the kernel did not handle the request (the activation
	// was stale by then): it is answered "moved", and sent again.
	unhandled bool
}

// committer group-commits the saves of a member's durable activations and
// releases their replies.
type committer struct {
	cfg    *stateConfig
	logger *slog.Logger
	send   func(*actor.PID, any)

	mu      sync.Mutex
	queue   []pendingReply
	wake    chan struct{}
	closed  bool
	started bool // the loop runs (from the first submit)
	done    chan struct{}
	batches atomic.Int64
	saves   atomic.Int64
	maxOps  atomic.Int64
}

func newCommitter(cfg *stateConfig, logger *slog.Logger, send func(*actor.PID, any)) *committer {
	return &committer{cfg: cfg, logger: logger, send: send, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// submit queues p; it never blocks. After close, p is answered at once
// with an unavailable error (a barrier is released).
func (c *committer) submit(p pendingReply) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		if p.barrier != nil {
			close(p.barrier)
		} else {
			p.answer(p.sender, wire.NewErrorOf(wireKindStateUnavailable, "the member is closing its state store", p.id))
		}
		return
	}
	c.queue = append(c.queue, p)
	if !c.started {
		c.started = true
		go c.loop()
	}
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// flush waits until everything submitted before it is done.
func (c *committer) flush() {
	ch := make(chan struct{})
	c.submit(pendingReply{barrier: ch})
	<-ch
}

// close finishes what is queued and stops the loop.
func (c *committer) close() {
	c.mu.Lock()
	started := c.started
	if c.closed {
		c.mu.Unlock()
		if started {
			<-c.done
		}
		return
	}
	c.closed = true
	c.mu.Unlock()
	if !started {
		return
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
	<-c.done
}

func (c *committer) loop() {
	defer close(c.done)
	for {
		<-c.wake
		for {
			c.mu.Lock()
			q := c.queue
			c.queue = nil
			closed := c.closed
			c.mu.Unlock()
			if len(q) == 0 {
				if closed {
					return
				}
				break
			}
			c.commit(q)
		}
	}
}

// commit saves the latest record of each activation in q (in batches of
// at most maxBatch identities) and then answers q in order.
func (c *committer) commit(q []pendingReply) {
	type slot struct {
		op  int // index in ops, -1: nothing to save
		err *wire.WireError
	}
	slots := make(map[*durable]*slot)
	var ops []persistence.Op
	var owners []*durable
	for i := range q {
		p := &q[i]
		if p.d == nil {
			continue
		}
		s := slots[p.d]
		if s == nil {
			s = &slot{op: -1}
			slots[p.d] = s
		}
		if p.d.stale.Load() || s.err != nil {
			continue
		}
		if p.recErr != nil {
			s.err = wire.NewErrorOf(wireKindStateUnavailable, fmt.Sprintf("%s: snapshot: %v", p.d.key, p.recErr), 0)
			continue
		}
		if p.record == nil {
			continue
		}
		if s.op < 0 {
			s.op = len(ops)
			ops = append(ops, persistence.SaveOp(p.d.key, p.d.version, StateRecordSchema, nil))
			owners = append(owners, p.d)
		}
		ops[s.op].Value = p.record
	}
	for start := 0; start < len(ops); start += c.cfg.maxBatch {
		end := min(start+c.cfg.maxBatch, len(ops))
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.timeout)
		res, err := c.cfg.store.Batch(ctx, ops[start:end])
		cancel()
		c.batches.Add(1)
		c.saves.Add(int64(end - start))
		if n := int64(end - start); n > c.maxOps.Load() {
			c.maxOps.Store(n)
		}
		for i := start; i < end; i++ {
			d, s := owners[i], slots[owners[i]]
			opErr := err
			if err == nil {
				opErr = res[i-start].Err
			}
			if opErr == nil {
				d.version, d.last = res[i-start].Version, ops[i].Value
				continue
			}
			s.err = wire.NewErrorOf(stateWireKind(opErr), opErr.Error(), 0)
		}
	}
	for d, s := range slots {
		if s.err != nil && !d.stale.Load() {
			d.failure.Store(s.err)
			d.stale.Store(true)
			c.logger.Warn("ringactor/cluster: saving an activation's state failed; it passivates without saving",
				slog.String("key", d.key.String()), slog.String("kind", s.err.GetKind()), slog.String("error", s.err.GetMessage()))
		}
		if d.stale.Load() && !d.told && d.pid != nil {
			d.told = true
			c.send(d.pid, passivateGrain{})
		}
	}
	for i := range q {
		p := &q[i]
		switch {
		case p.barrier != nil:
			close(p.barrier)
		case p.d.stale.Load() && p.unhandled:
			p.answer(p.sender, wire.NewErrorOf(wireKindMoved, p.d.key.String()+": the activation is stale and passivating", p.id))
		case p.d.stale.Load():
			p.answer(p.sender, p.d.staleError(p.id))
		default:
			p.answer(p.sender, p.reply)
		}
	}
}

// loadDurable returns the state an activation of key starts from, and its
// durable record: from the hand-off when it is a durable one, else from
// the store (a raw hand-off is used when the store has no record).
func (m *Member) loadDurable(key persistence.Key, handoff []byte) (*durable, []byte, error) {
	d := &durable{key: key}
	var value []byte
	var schema uint32 = StateRecordSchema
	if v, val, ok := decodeHandoff(handoff); ok {
		d.version, value = v, val
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), m.state.cfg.timeout)
		rec, err := m.state.cfg.store.Load(ctx, key)
		cancel()
		switch {
		case errors.Is(err, persistence.ErrNotFound):
			d.table = newAppliedTable(nil)
			return d, handoff, nil
		case err != nil:
			return nil, nil, err
		}
		d.version, value, schema = rec.Version, rec.Value, rec.Schema
	}
	state, entries, err := decodeStateRecord(key, schema, value)
	if err != nil {
		return nil, nil, err
	}
	d.last, d.table = value, newAppliedTable(entries)
	return d, state, nil
}

// memberState is a member's state store and its committer.
type memberState struct {
	cfg    *stateConfig
	commit *committer
}

func newMemberState(cfg *stateConfig, m *Member) *memberState {
	return &memberState{cfg: cfg, commit: newCommitter(cfg, m.logger, func(pid *actor.PID, msg any) { m.sys.Root.Send(pid, msg) })}
}

// StateStats counts the group commits of a member's state store.
type StateStats struct {
	// Commits is the number of store transactions (Batch calls).
	Commits int64
	// Saves is the number of identities' records they saved or tried to.
	Saves int64
	// MaxBatch is the most saves one transaction held.
	MaxBatch int64
}

// StateStats returns the counters of the member's state store (zero
// without WithStateStore).
func (m *Member) StateStats() StateStats {
	if m.state == nil {
		return StateStats{}
	}
	c := m.state.commit
	return StateStats{Commits: c.batches.Load(), Saves: c.saves.Load(), MaxBatch: c.maxOps.Load()}
}
