//go:build !race

// Built without -race like cluster_test.go: members start in this process.

package cluster

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/internal/testutil/hangguard"
	"github.com/ringactor/ringactor/messages"
	"github.com/ringactor/ringactor/persistence"
)

// tally and tallied are the messages of the durable test kind: Pad grows
// the state by that many bytes (an oversize record), Fail makes the
// handler fail after adding N.
type tally struct {
	N    int64
	Pad  int
	Fail bool
}

type tallied struct {
	Total int64
	Calls int64
}

var registerTally sync.Once

// durableTally is one activation of the durable test kind.
type durableTally struct {
	total, calls int64
	pad          int
}

func (s *durableTally) Handle(_ context.Context, r tally) (tallied, error) {
	s.total += r.N
	s.calls++
	s.pad = r.Pad
	if r.Fail {
		return tallied{}, errors.New("tally failed on purpose")
	}
	return tallied{Total: s.total, Calls: s.calls}, nil
}

func (s *durableTally) Snapshot() ([]byte, error) {
	b := binary.AppendVarint(nil, s.total)
	b = binary.AppendVarint(b, s.calls)
	return append(b, make([]byte, s.pad)...), nil
}

func (s *durableTally) Passivate() ([]byte, error) { return s.Snapshot() }

// tallyKind is the durable test kind; activations counts its activations.
func tallyKind(activations *atomic.Int64, idle time.Duration) *KindOf[tally, tallied] {
	registerTally.Do(func() {
		messages.MustRegister[tally]("ringactor.cluster.test.state.Tally")
		messages.MustRegister[tallied]("ringactor.cluster.test.state.Tallied")
	})
	return DefineStateful("tally", func(_ string, state []byte) (Stateful[tally, tallied], error) {
		activations.Add(1)
		s := &durableTally{}
		if state != nil {
			t, n := binary.Varint(state)
			c, m := binary.Varint(state[max(n, 0):])
			if n <= 0 || m <= 0 {
				return nil, fmt.Errorf("tally: bad state %x", state)
			}
			s.total, s.calls = t, c
		}
		return s, nil
	}).WithIdleTimeout(idle)
}

// startDurable starts a one-member cluster named "durable" hosting the
// tally kind on store.
func startDurable(t *testing.T, store persistence.Store, activations *atomic.Int64, opts ...StateOption) (*Member, *KindOf[tally, tallied]) {
	t.Helper()
	return startDurableIdle(t, store, activations, 0, opts...)
}

func startDurableIdle(t *testing.T, store persistence.Store, activations *atomic.Int64, idle time.Duration, opts ...StateOption) (*Member, *KindOf[tally, tallied]) {
	t.Helper()
	k := tallyKind(activations, idle)
	m, err := Start(hangguard.Context(t), "durable", Peers(nil), []*Kind{k.Kind()},
		WithLogger(actors.DiscardLogger()), WithStateStore(store, opts...))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.WaitReady(hangguard.Context(t)); err != nil {
		t.Fatal(err)
	}
	return m, k
}

func closeMember(t *testing.T, m *Member) {
	t.Helper()
	if err := m.Close(context.Background()); err != nil {
		t.Errorf("close: %v", err)
	}
}

// storedTally reads the identity's stored record back: its version, total
// and applied keys.
func storedTally(t *testing.T, store persistence.Store, id string) (uint64, int64, []appliedEntry) {
	t.Helper()
	key := persistence.Key{Cluster: "durable", Kind: "tally", Identity: id}
	rec, err := store.Load(context.Background(), key)
	if err != nil {
		t.Fatalf("load %s: %v", key, err)
	}
	state, entries, err := decodeStateRecord(key, rec.Schema, rec.Value)
	if err != nil {
		t.Fatal(err)
	}
	total, _ := binary.Varint(state)
	return rec.Version, total, entries
}

// TestStateStoreWriteThrough: each reply leaves after its state is saved
// (a commit held back holds the reply back), and a new member on the same
// store continues from the saved state.
func TestStateStoreWriteThrough(t *testing.T) {
	ctx := hangguard.Context(t)
	store := persistence.NewMemory()
	var acts atomic.Int64
	m, k := startDurable(t, store, &acts)
	ref := k.Ref(m, "a")
	for i := range 3 {
		got, err := ref.Request(ctx, tally{N: 10})
		if err != nil {
			t.Fatal(err)
		}
		if got.Total != int64(10*(i+1)) {
			t.Fatalf("request %d: total %d", i, got.Total)
		}
	}
	if v, total, _ := storedTally(t, store, "a"); v != 3 || total != 30 {
		t.Fatalf("stored version %d total %d, want 3 and 30", v, total)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	store.SetCommitHook(func(context.Context, []persistence.Op) error {
		once.Do(func() { close(entered); <-release })
		return nil
	})
	replied := make(chan error, 1)
	go func() {
		_, err := ref.Request(ctx, tally{N: 1})
		replied <- err
	}()
	<-entered
	select {
	case err := <-replied:
		t.Fatalf("the reply left before its state was saved (err %v)", err)
	default:
	}
	close(release)
	if err := <-replied; err != nil {
		t.Fatal(err)
	}
	store.SetCommitHook(nil)
	closeMember(t, m)

	m2, k2 := startDurable(t, store.Reopen(), &acts)
	defer closeMember(t, m2)
	got, err := k2.Ref(m2, "a").Request(ctx, tally{N: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got.Total != 32 || got.Calls != 5 {
		t.Fatalf("after the restart: %+v, want total 32 after 5 calls", got)
	}
}

// TestStateStoreGroupCommit: the saves of requests that wait for a commit
// go into one transaction.
func TestStateStoreGroupCommit(t *testing.T) {
	ctx := hangguard.Context(t)
	store := persistence.NewMemory()
	var acts atomic.Int64
	m, k := startDurable(t, store, &acts)
	defer closeMember(t, m)
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	store.SetCommitHook(func(context.Context, []persistence.Op) error {
		once.Do(func() { close(entered); <-release })
		return nil
	})
	const n = 20
	errs := make(chan error, n)
	go func() {
		_, err := k.Ref(m, "g0").Request(ctx, tally{N: 1})
		errs <- err
	}()
	<-entered
	for i := 1; i < n; i++ {
		go func() {
			_, err := k.Ref(m, fmt.Sprintf("g%d", i)).Request(ctx, tally{N: 1})
			errs <- err
		}()
	}
	hangguard.Until(ctx, t, "the held-back requests to wait for the commit", func() bool {
		m.state.commit.mu.Lock()
		defer m.state.commit.mu.Unlock()
		return len(m.state.commit.queue) == n-1
	})
	close(release)
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	st := m.StateStats()
	if st.Commits != 2 || st.MaxBatch != n-1 || st.Saves != n {
		t.Fatalf("stats %+v, want 2 commits of %d saves, the larger of %d", st, n, n-1)
	}
	if ms := store.Stats(); ms.Commits != 2 || ms.MaxBatch != n-1 {
		t.Fatalf("store stats %+v", ms)
	}
}

// TestStateStoreConflict: a save that finds the record moved (another
// activation wrote) passivates the activation without saving; the client
// retries and the next activation continues from the newer record.
func TestStateStoreConflict(t *testing.T) {
	ctx := hangguard.Context(t)
	store := persistence.NewMemory()
	var acts atomic.Int64
	m, k := startDurable(t, store, &acts)
	defer closeMember(t, m)
	ref := k.Ref(m, "c")
	if _, err := ref.Request(ctx, tally{N: 1}); err != nil {
		t.Fatal(err)
	}
	key := persistence.Key{Cluster: "durable", Kind: "tally", Identity: "c"}
	// Another activation (on a member this one does not know of) saves.
	other := encodeStateRecord(binary.AppendVarint(binary.AppendVarint(nil, 100), 7), nil)
	if _, err := store.Save(ctx, key, 1, StateRecordSchema, other); err != nil {
		t.Fatal(err)
	}
	got, err := ref.Request(ctx, tally{N: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got.Total != 101 || got.Calls != 8 {
		t.Fatalf("got %+v, want total 101 after 8 calls (the newer record's, plus this one)", got)
	}
	if acts.Load() != 2 {
		t.Fatalf("%d activations, want 2 (the stale one passivated)", acts.Load())
	}
	if v, total, _ := storedTally(t, store, "c"); v != 3 || total != 101 {
		t.Fatalf("stored version %d total %d, want 3 and 101", v, total)
	}

	// A record that moves at every save: each attempt is refused as
	// stale until the deadline.
	var inHook atomic.Bool
	store.SetCommitHook(func(ctx context.Context, ops []persistence.Op) error {
		if inHook.Swap(true) {
			return nil
		}
		defer inHook.Store(false)
		for _, op := range ops {
			if _, err := store.Save(ctx, op.Key, op.Expected, StateRecordSchema, op.Value); err != nil {
				return err
			}
		}
		return nil
	})
	rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	_, err = ref.Request(rctx, tally{N: 1})
	if !errors.Is(err, ErrStaleActivation) || !errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v, want a timeout matching ErrStaleActivation", err)
	}
	store.SetCommitHook(nil)
}

// TestStateStoreUnavailable: a store that cannot be reached fails the
// request with a typed error, and loses nothing acknowledged: once it is
// back, the identity continues from the last acknowledged state.
func TestStateStoreUnavailable(t *testing.T) {
	ctx := hangguard.Context(t)
	store := persistence.NewMemory()
	var acts atomic.Int64
	m, k := startDurable(t, store, &acts)
	defer closeMember(t, m)
	ref := k.Ref(m, "u")
	if _, err := ref.Request(ctx, tally{N: 5}); err != nil {
		t.Fatal(err)
	}
	store.Fail(errors.New("the disk is gone"))
	_, err := ref.Request(ctx, tally{N: 1})
	var re *RemoteError
	if !errors.Is(err, ErrStateStore) || !errors.Is(err, persistence.ErrStoreUnavailable) || !errors.As(err, &re) {
		t.Fatalf("got %v, want a *RemoteError matching ErrStateStore and persistence.ErrStoreUnavailable", err)
	}
	// A new activation cannot load its state either.
	_, err = k.Ref(m, "u-new").Request(ctx, tally{N: 1})
	if !errors.Is(err, persistence.ErrStoreUnavailable) {
		t.Fatalf("activation with the store down: got %v", err)
	}
	store.Fail(nil)
	got, err := ref.Request(ctx, tally{N: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got.Total != 6 {
		t.Fatalf("total %d, want 6: the unacknowledged request's effect was discarded", got.Total)
	}
	if got, err := k.Ref(m, "u-new").Request(ctx, tally{N: 1}); err != nil || got.Total != 1 {
		t.Fatalf("the identity that could not activate: %+v, %v", got, err)
	}
}

// TestStateStoreCorruptAndOversize: a corrupt stored record and a state
// over the store's limit are typed errors; the oversize request's effect is
// discarded.
func TestStateStoreCorruptAndOversize(t *testing.T) {
	ctx := hangguard.Context(t)
	store := persistence.NewMemory(persistence.WithMaxRecordSize(64))
	var acts atomic.Int64
	m, k := startDurable(t, store, &acts)
	ref := k.Ref(m, "o")
	if _, err := ref.Request(ctx, tally{N: 2}); err != nil {
		t.Fatal(err)
	}
	_, err := ref.Request(ctx, tally{N: 1, Pad: 100})
	if !errors.Is(err, ErrStateStore) || !errors.Is(err, persistence.ErrRecordTooLarge) {
		t.Fatalf("oversize state: got %v, want ErrRecordTooLarge", err)
	}
	got, err := ref.Request(ctx, tally{N: 1})
	if err != nil || got.Total != 3 {
		t.Fatalf("after the oversize request: %+v, %v; want total 3", got, err)
	}
	closeMember(t, m)
	if !store.Corrupt(persistence.Key{Cluster: "durable", Kind: "tally", Identity: "o"}) {
		t.Fatal("no record to corrupt")
	}
	m2, k2 := startDurable(t, store.Reopen(), &acts)
	defer closeMember(t, m2)
	_, err = k2.Ref(m2, "o").Request(ctx, tally{N: 1})
	if !errors.Is(err, ErrStateStore) || !errors.Is(err, persistence.ErrCorruptRecord) {
		t.Fatalf("corrupt record: got %v, want ErrCorruptRecord", err)
	}
}

// TestStateStoreHandoff: a passivated identity hands its record on, so
// its next activation does not load it.
func TestStateStoreHandoff(t *testing.T) {
	ctx := hangguard.Context(t)
	store := persistence.NewMemory()
	var acts atomic.Int64
	m, k := startDurableIdle(t, store, &acts, 20*time.Millisecond)
	defer closeMember(t, m)
	ref := k.Ref(m, "h")
	if _, err := ref.Request(ctx, tally{N: 4}); err != nil {
		t.Fatal(err)
	}
	loads := store.Stats().Loads
	hangguard.Until(ctx, t, "the idle identity to passivate", func() bool { return m.activations.Load() == 0 })
	got, err := ref.Request(ctx, tally{N: 1})
	if err != nil || got.Total != 5 {
		t.Fatalf("after passivation: %+v, %v", got, err)
	}
	if acts.Load() != 2 || store.Stats().Loads != loads {
		t.Fatalf("%d activations, %d loads since; want 2 and none", acts.Load(), store.Stats().Loads-loads)
	}
}

// TestStateStoreIdempotencyKey: a request retried with its idempotency
// key is answered from the record, not applied again, also by a new
// member (a crash) and for a failed request; the record keeps the last
// MaxIdempotencyKeys keys.
func TestStateStoreIdempotencyKey(t *testing.T) {
	ctx := hangguard.Context(t)
	store := persistence.NewMemory()
	var acts atomic.Int64
	m, k := startDurable(t, store, &acts)
	ref := k.Ref(m, "i")
	kctx := WithIdempotencyKey(ctx, "deposit-1")
	for range 2 {
		got, err := ref.Request(kctx, tally{N: 5})
		if err != nil || got.Total != 5 || got.Calls != 1 {
			t.Fatalf("keyed request: %+v, %v; want total 5 after 1 call", got, err)
		}
	}
	_, err := ref.Request(WithIdempotencyKey(ctx, "fail-1"), tally{N: 1, Fail: true})
	if err == nil {
		t.Fatal("the failing request succeeded")
	}
	_, err2 := ref.Request(WithIdempotencyKey(ctx, "fail-1"), tally{N: 1, Fail: true})
	var re1, re2 *RemoteError
	if !errors.As(err, &re1) || !errors.As(err2, &re2) || re1.Kind != re2.Kind || re1.Message != re2.Message {
		t.Fatalf("retried failing request: %v, want the first outcome %v", err2, err)
	}
	closeMember(t, m)

	m2, k2 := startDurable(t, store.Reopen(), &acts)
	defer closeMember(t, m2)
	ref = k2.Ref(m2, "i")
	got, err := ref.Request(kctx, tally{N: 5})
	if err != nil || got.Total != 5 || got.Calls != 1 {
		t.Fatalf("keyed request after the restart: %+v, %v; want the recorded reply", got, err)
	}
	got, err = ref.Request(ctx, tally{N: 1})
	if err != nil || got.Total != 7 || got.Calls != 3 {
		t.Fatalf("unkeyed request: %+v, %v; want total 7 after 3 calls", got, err)
	}
	for i := range MaxIdempotencyKeys {
		if _, err := ref.Request(WithIdempotencyKey(ctx, fmt.Sprintf("k%d", i)), tally{N: 0}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, entries := storedTally(t, store, "i"); len(entries) != MaxIdempotencyKeys || entries[0].key != "k0" {
		t.Fatalf("record keeps %d keys, the oldest %q; want %d from k0", len(entries), entries[0].key, MaxIdempotencyKeys)
	}
	got, err = ref.Request(kctx, tally{N: 5}) // evicted: applied again
	if err != nil || got.Total != 12 {
		t.Fatalf("evicted key: %+v, %v; want it applied again (total 12)", got, err)
	}
	_, err = ref.Request(WithIdempotencyKey(ctx, ""), tally{N: 1})
	if !errors.Is(err, ErrInvalidIdempotencyKey) {
		t.Fatalf("empty key: got %v", err)
	}
}
