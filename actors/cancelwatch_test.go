package actors

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
)

// watchState reads a kernel's watches for tests: the Done channels of the
// contexts it watches and the length of its cancellation table.
func (k *kernel[Req, Resp]) watchState() (dones []<-chan struct{}, table int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, cw := range k.watches {
		dones = append(dones, cw.done)
	}
	return dones, len(k.watchTable)
}

// doubler answers V*2; a negative V signals entered (when not nil) and
// blocks until release is closed.
func doubler(entered chan<- struct{}, release <-chan struct{}) func(context.Context, num) (total, error) {
	return func(_ context.Context, n num) (total, error) {
		if n.V < 0 {
			if entered != nil {
				entered <- struct{}{}
			}
			<-release
		}
		return total{Sum: 2 * n.V}, nil
	}
}

// guard fails the test if done is not closed within a generous bound: a
// hang is a failure, not a wait.
func guard(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	ctx, cancel := hangCtx(t)
	defer cancel()
	select {
	case <-done:
	case <-ctx.Done(): // a hang guard only: no bound on the machine's speed
		t.Fatalf("%s did not finish", what)
	}
}

// TestSharedContextIsWatched: after watchAfter requests in a row with one
// cancellable context, the kernel watches it (one watch, however many
// requests follow); contexts made per request are never watched.
func TestSharedContextIsWatched(t *testing.T) {
	rt := newTestRuntime(t)
	k := mustLaunch(t, rt, NewStatelessKernel("watched", doubler(nil, nil)), true)
	for i := range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		r, err := k.Request(ctx, num{V: i})
		cancel()
		if err != nil || r.Sum != 2*i {
			t.Fatalf("request %d = %v, %v", i, r, err)
		}
	}
	if dones, _ := k.k.watchState(); len(dones) != 0 {
		t.Fatalf("per-request contexts: %d watches, want 0", len(dones))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := range 10_000 {
		if r, err := k.Request(ctx, num{V: i}); err != nil || r.Sum != 2*i {
			t.Fatalf("request %d = %v, %v", i, r, err)
		}
	}
	dones, table := k.k.watchState()
	if len(dones) != 1 || dones[0] != ctx.Done() {
		t.Fatalf("shared context: watches %v, want the context's", dones)
	}
	if table != DefaultCapacity {
		t.Fatalf("cancellation table of %d entries, want one per ring position (%d)", table, DefaultCapacity)
	}
}

// TestWatchesAreBounded: a kernel watches at most maxWatches contexts; a
// watch none of whose requests can be pending makes room for a new context.
func TestWatchesAreBounded(t *testing.T) {
	rt := newTestRuntime(t)
	// A ring of watchAfter slots: a context's watch is idle (none of its
	// requests can be pending) once the next context's requests pushed
	// that many messages.
	k := mustLaunch(t, rt, NewStatelessKernel("bounded", doubler(nil, nil), WithCapacity(watchAfter)), true)
	var last context.Context
	for c := range 3 * maxWatches {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		for i := range watchAfter {
			if _, err := k.Request(ctx, num{V: i}); err != nil {
				t.Fatal(err)
			}
		}
		dones, _ := k.k.watchState()
		if want := min(c+1, maxWatches); len(dones) != want {
			t.Fatalf("after %d contexts: %d watches, want %d", c+1, len(dones), want)
		}
		last = ctx
	}
	dones, _ := k.k.watchState()
	found := false
	for _, d := range dones {
		found = found || d == last.Done()
	}
	if !found {
		t.Fatal("the newest shared context is not watched: idle watches were not evicted")
	}
}

// TestWatchedCancelReturnsPromptly: requesters waiting on a watched context
// behind a handler that does not return all get an error wrapping
// context.Canceled when it is cancelled: those whose messages went straight
// into the ring (noted with the watch) and those in the overflow (waiting
// in a select). The kernel answers their messages later, into waiters that
// new requesters already reuse: those get their own replies, never a stale
// one.
func TestWatchedCancelReturnsPromptly(t *testing.T) {
	const waiting = 32 // 7 in the ring behind the blocked one, 25 in the overflow
	rt := newTestRuntime(t)
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	defer unblock()
	k := mustLaunch(t, rt, NewStatelessKernel("stuck", doubler(entered, release), WithCapacity(8), WithOverflow(64)), true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := range watchAfter + 1 {
		if _, err := k.Request(ctx, num{V: i}); err != nil {
			t.Fatal(err)
		}
	}
	if dones, _ := k.k.watchState(); len(dones) != 1 {
		t.Fatalf("%d watches, want 1", len(dones))
	}
	errs := make(chan error, waiting+1)
	var wg sync.WaitGroup
	request := func(v int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := k.Request(ctx, num{V: v})
			errs <- err
		}()
	}
	request(-1) // blocks the handler
	<-entered
	for i := range waiting {
		request(i)
	}
	for k.k.in.Len()+int(k.k.ovLen.Load()) < waiting+1 { // everyone admitted (the blocker's slot stays until its batch ends)
		waitTurn()
	}
	cancel()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	guard(t, done, "requesters of the cancelled context")
	close(errs)
	for err := range errs {
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want one wrapping context.Canceled", err)
		}
	}
	// New requesters reuse the waiters while the kernel answers the
	// abandoned messages into them.
	unblock()
	checkEcho(t, k, context.Background(), 8, 200)
}

// checkEcho runs workers×n requests with ctx concurrently and fails on an
// error or a reply that is not the request's own.
func checkEcho(t *testing.T, k *Kernel[num, total], ctx context.Context, workers, n int) {
	t.Helper()
	var wg sync.WaitGroup
	var bad atomic.Value
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				v := w*n + i
				r, err := k.Request(ctx, num{V: v})
				if err != nil || r.Sum != 2*v {
					bad.CompareAndSwap(nil, fmt.Sprintf("request %d = %v, %v", v, r, err))
					return
				}
			}
		}()
	}
	wg.Wait()
	if b := bad.Load(); b != nil {
		t.Fatal(b)
	}
}

// TestCancelRacesReplies cancels shared (watched) and per-request (selected)
// contexts at random moments while their requests are answered: every
// Request returns exactly its own reply or an error wrapping
// context.Canceled, and nothing hangs.
func TestCancelRacesReplies(t *testing.T) {
	rt := newTestRuntime(t)
	k := mustLaunch(t, rt, NewStatelessKernel("race", doubler(nil, nil), WithCapacity(16)), true)
	const workers = 8
	var wrong atomic.Value
	check := func(v int, r total, err error) bool {
		switch {
		case err == nil && r.Sum == 2*v:
			return true
		case err != nil && errors.Is(err, context.Canceled):
			return false
		}
		wrong.CompareAndSwap(nil, fmt.Sprintf("request %d = %v, %v", v, r, err))
		return false
	}
	for round := range 40 {
		shared, cancel := context.WithCancel(context.Background())
		var answered atomic.Int64
		cutoff := int64(rand.IntN(400))
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					v := round*1_000_000 + w*10_000 + i
					if w%2 == 0 { // the shared context, soon watched
						if r, err := k.Request(shared, num{V: v}); !check(v, r, err) {
							return
						}
						if answered.Add(1) == cutoff {
							cancel()
						}
						continue
					}
					// a context per request, cancelled by another goroutine
					ctx, c := context.WithCancel(context.Background())
					go c()
					r, err := k.Request(ctx, num{V: v})
					c()
					check(v, r, err)
					if shared.Err() != nil || wrong.Load() != nil {
						return
					}
				}
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		if cutoff == 0 {
			cancel()
		}
		guard(t, done, fmt.Sprintf("round %d", round))
		cancel()
		if w := wrong.Load(); w != nil {
			t.Fatal(w)
		}
	}
	checkEcho(t, k, context.Background(), 4, 100)
}

// endlessCtx is a context of a type the context package does not know:
// context.AfterFunc watches it with a goroutine of its own.
type endlessCtx struct {
	context.Context
	done chan struct{}
}

func (c endlessCtx) Done() <-chan struct{} { return c.done }

// TestTerminateStopsWatches: a kernel's watches end with it, so a context
// that outlives the kernel keeps neither it nor a goroutine.
func TestTerminateStopsWatches(t *testing.T) {
	rt := newTestRuntime(t)
	k := mustLaunch(t, rt, NewStatelessKernel("stops", doubler(nil, nil)), true)
	before := goleak.IgnoreCurrent()
	ctx := endlessCtx{Context: context.Background(), done: make(chan struct{})}
	for i := range 2 * watchAfter {
		if _, err := k.Request(ctx, num{V: i}); err != nil {
			t.Fatal(err)
		}
	}
	if dones, _ := k.k.watchState(); len(dones) != 1 {
		t.Fatalf("%d watches, want 1", len(dones))
	}
	if err := k.Terminate(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if dones, _ := k.k.watchState(); len(dones) != 0 {
		t.Fatalf("%d watches after Terminate, want 0", len(dones))
	}
	goleak.VerifyNone(t, before, goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"))
	_, err := k.Request(ctx, num{V: 1})
	wantErr(t, err, ErrTerminated)
}

// TestRequestAllocations: a Request allocates nothing, with a context that
// never ends, a watched one, or one the kernel does not watch. Under the race
// detector sync.Pool drops a quarter of the waiters put back, on purpose, and
// each new one is three allocations (the waiter, its channel, and the
// channel's buffer, apart because the outcome it carries holds pointers):
// about 0.75 per Request.
func TestRequestAllocations(t *testing.T) {
	rt := newTestRuntime(t)
	k := mustLaunch(t, rt, NewStatelessKernel("allocs", doubler(nil, nil)), true)
	watched, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := range 2 * watchAfter {
		if _, err := k.Request(watched, num{V: i}); err != nil {
			t.Fatal(err)
		}
	}
	if dones, _ := k.k.watchState(); len(dones) != 1 {
		t.Fatalf("%d watches, want 1", len(dones))
	}
	// Two contexts in turn: neither comes watchAfter times in a row.
	unwatched, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	other, cancel3 := context.WithCancel(context.Background())
	defer cancel3()
	limit := 0.05 // a GC may empty the pool now and then
	if raceEnabled {
		limit = 1
	}
	const perRun = 100
	for _, tc := range []struct {
		name string
		ctxs []context.Context
	}{
		{"background", []context.Context{context.Background()}},
		{"watched", []context.Context{watched}},
		{"select", []context.Context{unwatched, other}},
	} {
		requests := perRun * len(tc.ctxs)
		allocs := testing.AllocsPerRun(20, func() {
			for i := range perRun {
				for _, ctx := range tc.ctxs {
					if r, err := k.Request(ctx, num{V: i}); err != nil || r.Sum != 2*i {
						t.Fatalf("%s: %v, %v", tc.name, r, err)
					}
				}
			}
		}) / float64(requests)
		if allocs > limit {
			t.Errorf("%s: %.2f allocations per Request, want at most %.2f", tc.name, allocs, limit)
		}
	}
	if dones, _ := k.k.watchState(); len(dones) != 1 {
		t.Fatalf("%d watches after the unwatched requests, want 1", len(dones))
	}
}
