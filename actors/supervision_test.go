package actors

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/lifecycle"
	"github.com/ringactor/ringactor/supervision"
)

// panicky panics on the values in bad and echoes the others.
func panicky(bad map[int]bool) Handler[num, total] {
	return func(_ context.Context, n num) (total, error) {
		if bad[n.V] {
			panic("injected failure")
		}
		return total{Sum: n.V}, nil
	}
}

func randomBad(seed uint64, n, every int) map[int]bool {
	rng := rand.New(rand.NewPCG(seed, seed))
	bad := map[int]bool{}
	for i := 0; i < n; i++ {
		if rng.IntN(every) == 0 {
			bad[i] = true
		}
	}
	return bad
}

// TestRandomPanicsExactlyOneOutcome sends 10,000 messages, about 1% of which
// make the handler panic, from concurrent requesters, and checks that each
// got exactly one outcome: its reply, or an ExecutionError for a panic.
func TestRandomPanicsExactlyOneOutcome(t *testing.T) {
	const n = 10_000
	bad := randomBad(7, n, 100)
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	k := mustLaunch(t, rt, NewStatelessKernel("panicky", panicky(bad), WithCapacity(64)), true)

	const senders = 8
	outcomes := make([]int, n) // 1 = reply, 2 = execution error
	var wg sync.WaitGroup
	errs := make(chan error, senders)
	for g := 0; g < senders; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += senders {
				r, err := k.Request(ctx, num{V: i})
				var ee *gpu.ExecutionError
				switch {
				case err == nil && r.Sum == i && !bad[i]:
					outcomes[i] = 1
				case errors.As(err, &ee) && ee.Panic != nil && bad[i]:
					outcomes[i] = 2
				default:
					errs <- errors.Join(errors.New("wrong outcome"), err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i, o := range outcomes {
		if o == 0 {
			t.Fatalf("message %d has no outcome", i)
		}
	}
	st := k.Telemetry()
	if st.Processed != n || int(st.Errors) != len(bad) {
		t.Fatalf("processed %d errors %d, want %d and %d", st.Processed, st.Errors, n, len(bad))
	}
	if int(st.Restarts) != len(bad) {
		t.Fatalf("restarts %d, want one per panic (%d)", st.Restarts, len(bad))
	}
	if k.State() != lifecycle.Active {
		t.Fatalf("state after restarts: %v", k.State())
	}
}

// TestRandomPanicsSendStream does the same with fire-and-forget Sends: every
// message comes out of the receive stream once, as a reply or an error.
func TestRandomPanicsSendStream(t *testing.T) {
	const n = 10_000
	bad := randomBad(11, n, 100)
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	k := mustLaunch(t, rt, NewStatelessKernel("panicky", panicky(bad), WithCapacity(256)), true)
	ids := make(map[uint64]int, n)
	var mu sync.Mutex
	go func() {
		for i := 0; i < n; i++ {
			id, err := k.Send(ctx, num{V: i})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			ids[id] = i
			mu.Unlock()
		}
	}()
	seen := make(map[int]bool, n)
	for i := 0; i < n; i++ {
		r, err := k.Receive(ctx)
		var ee *gpu.ExecutionError
		switch {
		case err == nil:
			if bad[r.Sum] || seen[r.Sum] {
				t.Fatalf("reply %d: bad=%v seen=%v", r.Sum, bad[r.Sum], seen[r.Sum])
			}
			seen[r.Sum] = true
		case errors.As(err, &ee):
			mu.Lock()
			v, ok := ids[ee.MessageID]
			mu.Unlock()
			if ok && (!bad[v] || seen[v]) {
				t.Fatalf("error for message %d: bad=%v seen=%v", v, bad[v], seen[v])
			}
			if !ok { // the sender has not recorded the id yet; count by the panic set
				v = -1
			}
			seen[v] = true
		default:
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	good := 0
	for v := range seen {
		if v >= 0 && !bad[v] {
			good++
		}
	}
	if good != n-len(bad) {
		t.Fatalf("%d replies, want %d", good, n-len(bad))
	}
}

func TestHandlerErrorResumesWithState(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	k := mustLaunch(t, rt, NewKernel("sum", func() Handler[num, total] {
		sum := 0
		return func(_ context.Context, n num) (total, error) {
			if n.V < 0 {
				return total{}, errors.New("negative input")
			}
			sum += n.V
			return total{Sum: sum}, nil
		}
	}), true)
	if _, err := k.Request(ctx, num{V: 5}); err != nil {
		t.Fatal(err)
	}
	_, err := k.Request(ctx, num{V: -1})
	var ee *gpu.ExecutionError
	if !errors.As(err, &ee) || ee.Panic != nil || ee.Err.Error() != "negative input" || !errors.Is(err, gpu.ErrCompute) {
		t.Fatalf("handler error: %v", err)
	}
	r, err := k.Request(ctx, num{V: 1})
	if err != nil || r.Sum != 6 {
		t.Fatalf("state after a returned error: %v %v (want 6: no restart)", r, err)
	}
	if st := k.Telemetry(); st.Restarts != 0 || st.Errors != 1 {
		t.Fatalf("%+v", st)
	}
}

func TestPanicRestartsWithFreshState(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	k := mustLaunch(t, rt, NewKernel("sum", func() Handler[num, total] {
		sum := 0
		return func(_ context.Context, n num) (total, error) {
			if n.V < 0 {
				panic("boom")
			}
			sum += n.V
			return total{Sum: sum}, nil
		}
	}), true)
	for i := 0; i < 3; i++ {
		if _, err := k.Request(ctx, num{V: 10}); err != nil {
			t.Fatal(err)
		}
	}
	// Queue a panic and messages behind it; all are answered, those behind
	// it by the restarted kernel with its fresh state.
	results := make([]chan error, 4)
	sums := make([]int, 4)
	for i := range results {
		results[i] = make(chan error, 1)
		v := 1
		if i == 0 {
			v = -1
		}
		go func() {
			r, err := k.Request(ctx, num{V: v})
			sums[i] = r.Sum
			results[i] <- err
		}()
		if i == 0 {
			// make sure the panic is admitted first
			for k.Telemetry().Depth == 0 && k.Telemetry().Errors == 0 {
				runtime.Gosched()
			}
		}
	}
	var ee *gpu.ExecutionError
	if err := <-results[0]; !errors.As(err, &ee) || ee.Panic == nil || len(ee.Stack) == 0 {
		t.Fatalf("panicking message: %v", err)
	}
	got := map[int]bool{}
	for i := 1; i < 4; i++ {
		if err := <-results[i]; err != nil {
			t.Fatal(err)
		}
		got[sums[i]] = true
	}
	if !got[1] || !got[2] || !got[3] {
		t.Fatalf("sums after restart %v, want 1,2,3 (fresh state)", sums[1:])
	}
	if st := k.Telemetry(); st.Restarts != 1 {
		t.Fatalf("restarts %d", st.Restarts)
	}
}

func TestSupervisorGivesUp(t *testing.T) {
	rt := newTestRuntime(t, WithSupervisor(supervision.NewStrategy(
		supervision.WithLogger(DiscardLogger()),
		supervision.WithBackoff(supervision.Backoff{Initial: 10 * time.Microsecond, Max: 100 * time.Microsecond}),
		supervision.WithMaxRestarts(2, time.Minute),
	)))
	ctx := testCtx(t)
	k := mustLaunch(t, rt, NewStatelessKernel("doomed", func(context.Context, num) (total, error) { panic("always") },
		WithCapacity(4), WithOverflow(16)), false)
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = k.Request(ctx, num{V: i})
		}()
	}
	for k.Telemetry().Depth < 10 {
		runtime.Gosched()
	}
	if err := k.Activate(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	panics, terminated := 0, 0
	for _, err := range errs {
		switch {
		case errors.Is(err, ErrTerminated): // carries the last fault too
			terminated++
		case errors.Is(err, gpu.ErrExecution):
			panics++
		default:
			t.Fatalf("outcome %v", err)
		}
	}
	if panics != 3 || terminated != 7 {
		t.Fatalf("%d panics, %d terminated; want 3 and 7", panics, terminated)
	}
	if k.State() != lifecycle.Terminated {
		t.Fatalf("state %v", k.State())
	}
	_, err := k.Request(ctx, num{V: 1})
	wantErr(t, err, ErrTerminated)
}

func TestProtoActorInterop(t *testing.T) {
	rt := newTestRuntime(t)
	k := mustLaunch(t, rt, NewKernel("sum", runningSum), true)
	root := rt.ActorSystem().Root
	res, err := root.RequestFuture(k.PID(), num{V: 4}, hangWait(t)).Result()
	if err != nil || res.(total).Sum != 4 {
		t.Fatalf("RequestFuture = %v %v", res, err)
	}
	res, err = root.RequestFuture(k.PID(), label{S: "x"}, hangWait(t)).Result()
	if e, ok := res.(error); err != nil || !ok || !errors.Is(e, ErrWrongMessageType) {
		t.Fatalf("wrong type = %v %v", res, err)
	}
	res, err = root.RequestFuture(k.PID(), &lifecycle.Command{Event: lifecycle.Deactivate}, hangWait(t)).Result()
	if r, ok := res.(*lifecycle.Reply); err != nil || !ok || r.Err != nil || r.To != lifecycle.Deactivated {
		t.Fatalf("lifecycle command = %v %v", res, err)
	}
	// Sent while deactivated: queued, then answered after reactivation.
	f := root.RequestFuture(k.PID(), num{V: 1}, hangWait(t))
	if err := k.Reactivate(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if res, err := f.Result(); err != nil || res.(total).Sum != 5 {
		t.Fatalf("queued RequestFuture = %v %v", res, err)
	}
	// A fire-and-forget actor Send feeds the receive stream.
	root.Send(k.PID(), num{V: 10})
	if r, err := k.Receive(testCtx(t)); err != nil || r.Sum != 15 {
		t.Fatalf("Receive after actor Send = %v %v", r, err)
	}
	_ = actor.Context(nil)
}

func TestAttachToExistingSystem(t *testing.T) {
	system := actor.NewActorSystem()
	defer system.Shutdown()
	rt := newTestRuntime(t, WithActorSystem(system), WithName("embedded"))
	k := mustLaunch(t, rt, NewKernel("sum", runningSum), true)
	if k.PID().Address != system.Address() {
		t.Fatalf("kernel not in the given system")
	}
	if err := rt.Close(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if system.IsStopped() {
		t.Fatal("Close stopped a system the runtime did not create")
	}
}

// TestKernelDeciderRestartsOnReturnedError: a kernel's own decider decides
// its supervision. With RestartOnError a handler that returns an error
// (which the runtime's default decider would resume after) restarts the
// kernel: its state resets, and it serves again.
func TestKernelDeciderRestartsOnReturnedError(t *testing.T) {
	rt := newTestRuntime(t)
	newHandler := func() Handler[num, total] {
		sum := 0
		return func(_ context.Context, n num) (total, error) {
			if n.V < 0 {
				return total{}, errors.New("negative")
			}
			sum += n.V
			return total{Sum: sum}, nil
		}
	}
	k := mustLaunch(t, rt, NewKernel("decider-restart", newHandler, WithDecider(supervision.RestartOnError)), true)
	ctx := testCtx(t)
	if r, err := k.Request(ctx, num{V: 5}); err != nil || r.Sum != 5 {
		t.Fatalf("%v %v", r, err)
	}
	if _, err := k.Request(ctx, num{V: -1}); err == nil {
		t.Fatal("no error")
	}
	r, err := k.Request(ctx, num{V: 2})
	if err != nil || r.Sum != 2 {
		t.Fatalf("after the restart: %v %v, want a fresh sum of 2", r, err)
	}
	if k.Telemetry().Restarts != 1 {
		t.Fatalf("restarts = %d, want 1", k.Telemetry().Restarts)
	}
}
