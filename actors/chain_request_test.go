package actors

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/ringactor/ringactor/gpu"
)

// incNum adds one.
func incNum(_ context.Context, n num) (num, error) { return num{V: n.V + 1}, nil }

// doubleNum doubles, and fails on a negative number.
func doubleNum(_ context.Context, n num) (num, error) {
	if n.V < 0 {
		return num{}, errors.New("negative")
	}
	return num{V: 2 * n.V}, nil
}

// TestChainHeadHandleRequest: the typed handle of a chain's head is
// answered by the tail when the tail replies the handle's type, and names
// both types when it does not.
func TestChainHeadHandleRequest(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	mustLaunch(t, rt, NewStatelessKernel("inc", incNum), true)
	mustLaunch(t, rt, NewStatelessKernel("mid", incNum, WithDownstream("inc")), true)
	head := mustLaunch(t, rt, NewStatelessKernel("double", doubleNum, WithDownstream("mid")), true)
	for i := range 50 {
		r, err := head.Request(ctx, num{V: i})
		if err != nil || r.V != 2*i+2 {
			t.Fatalf("head.Request(%d) = %v, %v; want %d from the tail", i, r, err, 2*i+2)
		}
	}
	// A failing head: the error names the stage that failed.
	_, err := head.Request(ctx, num{V: -1})
	var ee *gpu.ExecutionError
	if !errors.As(err, &ee) || ee.Kernel != "double" {
		t.Fatalf("failing head: %v, want an ExecutionError of %q", err, "double")
	}

	// A chain whose tail replies another type: the handle's Request,
	// RequestAsync and RequestAsyncWithin refuse with both types named.
	mustLaunch(t, rt, NewKernel("sum", runningSum), true)
	mustLaunch(t, rt, NewStatelessKernel("dsum", doubleNum, WithDownstream("sum")), true)
	h, err := Lookup[num, num](rt, "dsum")
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, err error) {
		t.Helper()
		var wt *WrongMessageTypeError
		if !errors.As(err, &wt) || !errors.Is(err, ErrWrongMessageType) || wt.Role != RoleChainReply || wt.Kernel != "dsum" ||
			!strings.Contains(err.Error(), "actors.total") || !strings.Contains(err.Error(), "actors.num") {
			t.Fatalf("%s through a chain answering total: %v", what, err)
		}
	}
	_, err = h.Request(ctx, num{V: 1})
	check("Request", err)
	check("RequestAsync", h.RequestAsync(ctx, num{V: 1}, func(num, error) { t.Error("done called for a refused message") }))
	check("RequestAsyncWithin", h.RequestAsyncWithin(ctx, ctx, num{V: 1}, func(num, error) { t.Error("done called for a refused message") }))
	// Nothing reached the chain: the tail's running sum starts at the next
	// accepted message.
	if r, err := Request[total](ctx, rt, "dsum", num{V: 3}); err != nil || r.Sum != 6 {
		t.Fatalf("Request[total] = %v, %v; want 6", r, err)
	}
}

// TestChainRequestAsyncPipelines: many asynchronous requests through a
// chain from one goroutine, by the head's handle and by actors.RequestAsync
// for another tail type: each answered exactly once, in order.
func TestChainRequestAsyncPipelines(t *testing.T) {
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { // after the runtime's Close
		goleak.VerifyNone(t, before, goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"))
	})
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	const n = 2000
	mustLaunch(t, rt, NewStatelessKernel("inc", incNum, WithCapacity(16)), true)
	head := mustLaunch(t, rt, NewStatelessKernel("double", doubleNum, WithDownstream("inc"), WithCapacity(16)), true)

	got := make([]int, 0, n)
	var mu sync.Mutex
	var wg sync.WaitGroup
	wg.Add(n)
	for i := range n {
		v := i
		if i == n/2 {
			v = -1 // one failure in the middle: its own outcome, in its place
		}
		err := head.RequestAsync(ctx, num{V: v}, func(r num, err error) {
			mu.Lock()
			if err != nil {
				got = append(got, -1)
			} else {
				got = append(got, r.V)
			}
			mu.Unlock()
			wg.Done()
		})
		if err != nil {
			t.Fatalf("RequestAsync %d: %v", i, err)
		}
	}
	wg.Wait()
	for i, r := range got {
		want := 2*i + 1
		if i == n/2 {
			want = -1
		}
		if r != want {
			t.Fatalf("outcome %d = %d, want %d (order or count broken)", i, r, want)
		}
	}

	// actors.RequestAsync for a tail of another type than the head's.
	mustLaunch(t, rt, NewKernel("sum", runningSum), true)
	mustLaunch(t, rt, NewStatelessKernel("dsum", doubleNum, WithDownstream("sum")), true)
	sums := make(chan total, n)
	for i := 1; i <= n; i++ {
		if err := RequestAsync[total](ctx, rt, "dsum", num{V: i}, func(r total, err error) {
			if err != nil {
				t.Errorf("RequestAsync[total]: %v", err)
			}
			sums <- r
		}); err != nil {
			t.Fatal(err)
		}
	}
	want := 0
	for i := 1; i <= n; i++ {
		want += 2 * i
		if r := <-sums; r.Sum != want {
			t.Fatalf("running sum %d = %d, want %d", i, r.Sum, want)
		}
	}
}

// TestRequestAsyncRefusals: the package-level RequestAsync refuses an
// unknown kernel, a wrong message or reply type, a nil callback, a nil
// message, a cancelled context and a terminated kernel, each with its
// typed error, and never calls done for a refused message.
func TestRequestAsyncRefusals(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	k := mustLaunch(t, rt, NewStatelessKernel("inc", incNum), true)
	never := func(num, error) { t.Error("done called for a refused message") }
	wantErr(t, RequestAsync[num](ctx, rt, "nope", num{V: 1}, never), ErrUnknownKernel)
	wantErr(t, RequestAsync[num](ctx, rt, "inc", total{Sum: 1}, never), ErrWrongMessageType)
	wantErr(t, RequestAsync[total](ctx, rt, "inc", num{V: 1}, func(total, error) { t.Error("done called") }), ErrWrongMessageType)
	wantErr(t, RequestAsync[num](ctx, rt, "inc", num{V: 1}, nil), ErrNilMessage)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	wantErr(t, RequestAsync[num](cctx, rt, "inc", num{V: 1}, never), context.Canceled)
	if err := k.Terminate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := RequestAsync[num](ctx, rt, "inc", num{V: 1}, never); err == nil {
		t.Fatal("RequestAsync after Terminate: no error")
	}
}
