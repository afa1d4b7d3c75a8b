package actors

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/lifecycle"
	"github.com/ringactor/ringactor/persistence"
)

// counterState is the State of the counter kernels of these tests.
type counterState struct {
	Count int
	Log   []int
}

// counterKernel adds each message's V to its State's Count and replies with
// the new count; a negative V changes the State and then panics, a V of
// 1<<20 appends that many log entries (a State too large for a small store).
func counterKernel(id string, opts ...KernelOption) *KernelDef[num, total] {
	return NewStatefulKernel(id, nil, func(_ context.Context, s *counterState, n num) (total, error) {
		switch {
		case n.V < 0:
			s.Count += 1000
			panic("injected failure")
		case n.V == 1<<20:
			s.Log = append(s.Log, make([]int, 256)...)
		default:
			s.Count += n.V
		}
		return total{Sum: s.Count}, nil
	}, opts...)
}

// storedCount decodes the counter State stored under key (0: no record).
func storedCount(t *testing.T, st persistence.Store, key persistence.Key) int {
	t.Helper()
	rec, err := st.Load(testCtx(t), key)
	if errors.Is(err, persistence.ErrNotFound) {
		return 0
	}
	if err != nil {
		t.Fatalf("Load %s: %v", key, err)
	}
	var s counterState
	if err := msgpack.Unmarshal(rec.Value, &s); err != nil {
		t.Fatalf("decoding %s: %v", key, err)
	}
	return s.Count
}

func kernelKey(id string) persistence.Key { return persistence.Key{Kind: StateKind, Identity: id} }

func wantSum(t *testing.T, k *Kernel[num, total], v, want int) {
	t.Helper()
	r, err := k.Request(testCtx(t), num{V: v})
	if err != nil {
		t.Fatalf("Request %d: %v", v, err)
	}
	if r.Sum != want {
		t.Fatalf("Request %d: sum %d, want %d", v, r.Sum, want)
	}
}

func openBolt(t *testing.T, path string, opts ...persistence.Option) *persistence.Bolt {
	t.Helper()
	b, err := persistence.Open(testCtx(t), path, opts...)
	if err != nil {
		t.Fatalf("Open %s: %v", path, err)
	}
	return b
}

// TestStateRestoreAfterRelaunch: a kernel's State outlives its runtime, on
// both the in-memory store and a bbolt file, under each policy.
func TestStateRestoreAfterRelaunch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy StatePolicy
	}{{"write-through", WriteThrough()}, {"write-behind", WriteBehind(4, time.Hour)}} {
		t.Run(tc.name+"/memory", func(t *testing.T) {
			mem := persistence.NewMemory()
			for round := 0; round < 2; round++ {
				rt := newTestRuntime(t)
				k := mustLaunch(t, rt, counterKernel("ctr", WithStateStore(mem.Reopen(), persistence.Key{}, tc.policy)), true)
				for i := 1; i <= 5; i++ {
					wantSum(t, k, 1, round*5+i)
				}
				if err := k.Terminate(testCtx(t)); err != nil { // a write-behind kernel saves its last changes
					t.Fatal(err)
				}
				if got := storedCount(t, mem, kernelKey("ctr")); got != round*5+5 {
					t.Fatalf("round %d: stored count %d, want %d", round, got, round*5+5)
				}
			}
		})
		t.Run(tc.name+"/bbolt", func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			for round := 0; round < 2; round++ {
				db := openBolt(t, path)
				rt := newTestRuntime(t)
				k := mustLaunch(t, rt, counterKernel("ctr", WithStateStore(db, persistence.Key{Cluster: "c", Identity: "one"}, tc.policy)), true)
				for i := 1; i <= 5; i++ {
					wantSum(t, k, 2, 2*(round*5+i))
				}
				if err := k.Terminate(testCtx(t)); err != nil {
					t.Fatal(err)
				}
				if st := k.StateStats(); st.Restores != 1 || st.Version == 0 {
					t.Fatalf("round %d: stats %+v: want 1 restore and a version", round, st)
				}
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestStateRestoreAfterPanic: a supervisor restart after a handler panic
// restores the last durable State: the panicking message's change (and,
// under write-behind, the unsaved ones before it) are gone.
func TestStateRestoreAfterPanic(t *testing.T) {
	t.Run("write-through", func(t *testing.T) {
		mem := persistence.NewMemory()
		rt := newTestRuntime(t)
		k := mustLaunch(t, rt, counterKernel("ctr", WithStateStore(mem, persistence.Key{}, WriteThrough())), true)
		for i := 1; i <= 5; i++ {
			wantSum(t, k, i, i*(i+1)/2)
		}
		var ee *gpu.ExecutionError
		if _, err := k.Request(testCtx(t), num{V: -1}); !errors.As(err, &ee) || ee.Panic == nil {
			t.Fatalf("panicking request: %v, want an ExecutionError with a panic", err)
		}
		wantSum(t, k, 1, 16) // not 1016: the restart restored 15
		if st := k.StateStats(); st.Restores < 2 {
			t.Fatalf("stats %+v: want a restore after the restart", st)
		}
	})
	t.Run("write-behind", func(t *testing.T) {
		mem := persistence.NewMemory()
		rt := newTestRuntime(t)
		k := mustLaunch(t, rt, counterKernel("ctr", WithStateStore(mem, persistence.Key{}, WriteBehind(3, time.Hour))), true)
		for i := 1; i <= 4; i++ { // saved after the third; the fourth is not yet
			wantSum(t, k, 1, i)
		}
		if _, err := k.Request(testCtx(t), num{V: -1}); err == nil {
			t.Fatal("panicking request answered")
		}
		wantSum(t, k, 1, 4) // the last save held 3: one acknowledged change lost, within the bound
	})
}

// TestStatePanicMidBatchRehandles: under write-through, the messages of a
// batch handled before a panic in it have not been answered; their changes
// are discarded with the panic's, and the restarted kernel handles them
// again, so every one of them is answered and counted once.
func TestStatePanicMidBatchRehandles(t *testing.T) {
	mem := persistence.NewMemory()
	rt := newTestRuntime(t)
	k := mustLaunch(t, rt, counterKernel("ctr", WithStateStore(mem, persistence.Key{}, WriteThrough())), false)
	ctx := testCtx(t)
	type outcome struct {
		v   int
		r   total
		err error
	}
	out := make(chan outcome, 8)
	for _, v := range []int{1, 2, -1, 4} { // queued behind the closed gate: one batch
		if err := k.RequestAsync(ctx, num{V: v}, func(r total, err error) { out <- outcome{v, r, err} }); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.Activate(ctx); err != nil {
		t.Fatal(err)
	}
	got := map[int]outcome{}
	for range 4 {
		o := <-out
		got[o.v] = o
	}
	if got[-1].err == nil {
		t.Fatal("the panicking message was answered without an error")
	}
	for _, v := range []int{1, 2, 4} {
		if got[v].err != nil {
			t.Fatalf("message %d: %v", v, got[v].err)
		}
	}
	wantSum(t, k, 0, 7)
	if c := storedCount(t, mem, kernelKey("ctr")); c != 7 {
		t.Fatalf("stored count %d, want 7", c)
	}
}

// TestStateWriteThroughReplyAfterSave: no reply leaves before the save of
// the State it reflects: the store's commit hook holds a save back and no
// reply arrives meanwhile; under a pipelined load each reply finds its count
// already in the store; and the saves batch (group commit).
func TestStateWriteThroughReplyAfterSave(t *testing.T) {
	mem := persistence.NewMemory()
	key := kernelKey("ctr")
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	mem.SetCommitHook(func(ctx context.Context, ops []persistence.Op) error {
		held := false
		once.Do(func() { held = true })
		if held {
			close(entered)
			<-release
		}
		return nil
	})
	rt := newTestRuntime(t)
	k := mustLaunch(t, rt, counterKernel("ctr", WithStateStore(mem, persistence.Key{}, WriteThrough())), true)
	ctx := testCtx(t)
	first := make(chan error, 1)
	if err := k.RequestAsync(ctx, num{V: 1}, func(_ total, err error) { first <- err }); err != nil {
		t.Fatal(err)
	}
	<-entered // the first batch's save is in the store, held back
	const queued = 20
	var wg sync.WaitGroup
	wg.Add(queued)
	for range queued { // admitted behind the held save: they form the next batch
		if err := k.RequestAsync(ctx, num{V: 1}, func(_ total, err error) {
			if err != nil {
				t.Error(err)
			}
			wg.Done()
		}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case err := <-first:
		t.Fatalf("a reply (%v) left before its save was durable", err)
	default:
	}
	if c := storedCount(t, mem, key); c != 0 {
		t.Fatalf("stored count %d before the commit", c)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	st := k.StateStats()
	if st.Saves != 2 || st.Messages != queued+1 || st.MaxBatch != queued {
		t.Fatalf("stats %+v: want 2 saves of %d messages, the second of %d", st, queued+1, queued)
	}
	if ms := mem.Stats(); ms.Commits != 2 {
		t.Fatalf("store stats %+v: want 2 commits", ms)
	}

	// Pipelined: every reply's count is durable when the reply arrives.
	const senders, each = 4, 50
	errs := make(chan error, senders)
	for range senders {
		go func() {
			for range each {
				r, err := k.Request(ctx, num{V: 1})
				if err == nil {
					if c := storedCount(t, mem, key); c < r.Sum {
						err = errors.New("reply before its save")
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range senders {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if c := storedCount(t, mem, key); c != queued+1+senders*each {
		t.Fatalf("stored count %d, want %d", c, queued+1+senders*each)
	}
}

// TestStateConflict: another writer saving the kernel's record stops the
// kernel with ErrStateConflict; the batch and the messages queued behind it
// get it, and nothing of theirs is applied.
func TestStateConflict(t *testing.T) {
	mem := persistence.NewMemory()
	key := kernelKey("ctr")
	rt := newTestRuntime(t)
	k := mustLaunch(t, rt, counterKernel("ctr", WithStateStore(mem, persistence.Key{}, WriteThrough())), true)
	ctx := testCtx(t)
	wantSum(t, k, 1, 1)
	// Another writer takes the record over.
	if _, err := mem.Save(ctx, key, 1, StateSchema, mustMsgpack(t, counterState{Count: 500})); err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	mem.SetCommitHook(func(context.Context, []persistence.Op) error {
		once.Do(func() {
			close(entered)
			<-release
		})
		return nil
	})
	errs := make(chan error, 4)
	send := func() {
		if err := k.RequestAsync(ctx, num{V: 1}, func(_ total, err error) { errs <- err }); err != nil {
			t.Fatal(err)
		}
	}
	send()
	<-entered // its save is held back: the next three queue behind it
	for range 3 {
		send()
	}
	close(release)
	n := 0
	for err := range errs {
		if !errors.Is(err, ErrStateConflict) || !errors.Is(err, persistence.ErrVersionConflict) {
			t.Fatalf("outcome %d: %v, want ErrStateConflict", n, err)
		}
		if n++; n == 4 {
			break
		}
	}
	waitState(t, k, lifecycle.Terminated)
	if c := storedCount(t, mem, key); c != 500 {
		t.Fatalf("stored count %d: the other writer's 500 was overwritten", c)
	}
	if _, err := k.Request(ctx, num{V: 1}); !errors.Is(err, ErrTerminated) {
		t.Fatalf("request after the stop: %v, want ErrTerminated", err)
	}
}

// waitState polls k's lifecycle state until it is want (the hang guard
// bounds the wait).
func waitState(t *testing.T, k *Kernel[num, total], want lifecycle.State) {
	t.Helper()
	ctx := testCtx(t)
	for k.State() != want {
		select {
		case <-ctx.Done():
			t.Fatalf("kernel state %s, want %s", k.State(), want)
		case <-time.After(time.Millisecond):
		}
	}
}

func mustMsgpack(t *testing.T, v any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestStateUnavailable: an unreachable store fails Launch, and while the
// kernel runs it fails the requests of the batch whose save failed; none of
// their changes is applied once the store is back.
func TestStateUnavailable(t *testing.T) {
	mem := persistence.NewMemory()
	down := errors.New("connection refused")
	mem.Fail(down)
	rt := newTestRuntime(t)
	def := counterKernel("ctr", WithStateStore(mem, persistence.Key{}, WriteThrough()))
	if _, err := Launch(testCtx(t), rt, def); !errors.Is(err, ErrStateUnavailable) || !errors.Is(err, persistence.ErrStoreUnavailable) || !errors.Is(err, down) {
		t.Fatalf("Launch on an unreachable store: %v, want ErrStateUnavailable", err)
	}
	mem.Fail(nil)
	k := mustLaunch(t, rt, def, true)
	wantSum(t, k, 1, 1)
	mem.Fail(down)
	for range 3 { // the failed save, then the restores that fail too
		if _, err := k.Request(testCtx(t), num{V: 10}); !errors.Is(err, ErrStateUnavailable) {
			t.Fatalf("request on an unreachable store: %v, want ErrStateUnavailable", err)
		}
	}
	mem.Fail(nil)
	wantSum(t, k, 1, 2) // restored from the store: the failed requests' changes are not there
	if st := k.StateStats(); st.Failures < 3 {
		t.Fatalf("stats %+v: want the failures counted", st)
	}
}

// TestStateTooLarge: a State over the store's record limit fails its batch
// with ErrStateTooLarge (the change is not kept), and a stored record over
// the limit fails Launch.
func TestStateTooLarge(t *testing.T) {
	mem := persistence.NewMemory(persistence.WithMaxRecordSize(64))
	rt := newTestRuntime(t)
	k := mustLaunch(t, rt, counterKernel("ctr", WithStateStore(mem, persistence.Key{}, WriteThrough())), true)
	wantSum(t, k, 1, 1)
	if _, err := k.Request(testCtx(t), num{V: 1 << 20}); !errors.Is(err, ErrStateTooLarge) || !errors.Is(err, persistence.ErrRecordTooLarge) {
		t.Fatalf("oversized State: %v, want ErrStateTooLarge", err)
	}
	wantSum(t, k, 1, 2)

	path := filepath.Join(t.TempDir(), "state.db")
	db := openBolt(t, path)
	big := mustMsgpack(t, counterState{Count: 1, Log: make([]int, 100)})
	if _, err := db.Save(testCtx(t), kernelKey("big"), 0, StateSchema, big); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	small := openBolt(t, path, persistence.WithMaxRecordSize(32))
	defer small.Close()
	if _, err := Launch(testCtx(t), rt, counterKernel("big", WithStateStore(small, persistence.Key{}, WriteThrough()))); !errors.Is(err, ErrStateTooLarge) {
		t.Fatalf("Launch on an oversized record: %v, want ErrStateTooLarge", err)
	}
}

// TestStateCorrupt: a record that fails its checksum, one that does not
// decode as the State, and one of another schema fail Launch with
// ErrStateCorrupt.
func TestStateCorrupt(t *testing.T) {
	ctx := testCtx(t)
	rt := newTestRuntime(t)
	for _, tc := range []struct {
		name  string
		setup func(*persistence.Memory, persistence.Key)
	}{
		{"checksum", func(m *persistence.Memory, key persistence.Key) {
			if _, err := m.Save(ctx, key, 0, StateSchema, mustMsgpack(t, counterState{Count: 3})); err != nil {
				t.Fatal(err)
			}
			if !m.Corrupt(key) {
				t.Fatal("no record to corrupt")
			}
		}},
		{"garbage", func(m *persistence.Memory, key persistence.Key) {
			if _, err := m.Save(ctx, key, 0, StateSchema, []byte{0xc1, 0xff, 0x00}); err != nil {
				t.Fatal(err)
			}
		}},
		{"schema", func(m *persistence.Memory, key persistence.Key) {
			if _, err := m.Save(ctx, key, 0, StateSchema+1, mustMsgpack(t, counterState{Count: 3})); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := persistence.NewMemory()
			id := "ctr-" + tc.name
			tc.setup(mem, kernelKey(id))
			_, err := Launch(ctx, rt, counterKernel(id, WithStateStore(mem, persistence.Key{}, WriteThrough())))
			if !errors.Is(err, ErrStateCorrupt) || !errors.Is(err, persistence.ErrCorruptRecord) {
				t.Fatalf("Launch: %v, want ErrStateCorrupt", err)
			}
			if tc.name == "schema" && !strings.Contains(err.Error(), "schema") {
				t.Fatalf("Launch: %v does not say schema", err)
			}
		})
	}
}

// TestStateWriteBehind: write-behind saves every N messages and after T at
// a quiet point, and the last changes when it terminates.
func TestStateWriteBehind(t *testing.T) {
	mem := persistence.NewMemory()
	key := kernelKey("ctr")
	rt := newTestRuntime(t)
	k := mustLaunch(t, rt, counterKernel("ctr", WithStateStore(mem, persistence.Key{}, WriteBehind(5, time.Hour))), true)
	for i := 1; i <= 12; i++ {
		wantSum(t, k, 1, i)
	}
	if st := k.StateStats(); st.Saves != 2 || st.MaxBatch != 5 {
		t.Fatalf("stats %+v: want 2 saves of 5 messages", st)
	}
	if c := storedCount(t, mem, key); c != 10 {
		t.Fatalf("stored count %d, want 10", c)
	}
	if err := k.Terminate(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if c := storedCount(t, mem, key); c != 12 {
		t.Fatalf("stored count %d after terminate, want 12", c)
	}

	// After maxDelay, an idle kernel saves what changed.
	k2 := mustLaunch(t, rt, counterKernel("ctr2", WithStateStore(mem, persistence.Key{}, WriteBehind(1000, time.Millisecond))), true)
	wantSum(t, k2, 3, 3)
	ctx := testCtx(t)
	for storedCount(t, mem, kernelKey("ctr2")) != 3 {
		select {
		case <-ctx.Done():
			t.Fatal("write-behind did not save after its delay")
		case <-time.After(time.Millisecond):
		}
	}
}

// TestStateInvalid: a store on a kernel without a State, a nil store, a bad
// policy or key are refused at launch.
func TestStateInvalid(t *testing.T) {
	rt := newTestRuntime(t)
	mem := persistence.NewMemory()
	for name, def := range map[string]*KernelDef[num, total]{
		"no state":   NewKernel("a", func() Handler[num, total] { return panicky(nil) }, WithStateStore(mem, persistence.Key{}, WriteThrough())),
		"nil store":  counterKernel("b", WithStateStore(nil, persistence.Key{}, WriteThrough())),
		"policy":     counterKernel("c", WithStateStore(mem, persistence.Key{}, WriteBehind(0, time.Second))),
		"key":        counterKernel("d", WithStateStore(mem, persistence.Key{Identity: "x\x00"}, WriteThrough())),
		"nil handle": NewStatefulKernel[counterState, num, total]("e", nil, nil),
	} {
		if _, err := Launch(testCtx(t), rt, def); !errors.Is(err, ErrInvalidKernel) {
			t.Errorf("%s: Launch: %v, want ErrInvalidKernel", name, err)
		}
	}
	if mem.Len() != 0 {
		t.Fatal("a refused kernel wrote to the store")
	}
}

// TestStatefulWithoutStore: a stateful kernel without a store starts from a
// fresh State at every restart, as a NewKernel factory's would.
func TestStatefulWithoutStore(t *testing.T) {
	rt := newTestRuntime(t)
	k := mustLaunch(t, rt, NewStatefulKernel("ctr", func() counterState { return counterState{Count: 100} },
		func(_ context.Context, s *counterState, n num) (total, error) {
			if n.V < 0 {
				panic("injected")
			}
			s.Count += n.V
			return total{Sum: s.Count}, nil
		}), true)
	wantSum(t, k, 1, 101)
	if _, err := k.Request(testCtx(t), num{V: -1}); err == nil {
		t.Fatal("panic answered")
	}
	wantSum(t, k, 1, 101)
	if st := k.StateStats(); st != (StateStats{}) {
		t.Fatalf("stats %+v without a store", st)
	}
}
