package actors

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/lifecycle"
	"github.com/ringactor/ringactor/messages"
)

type unregistered struct{ X int }

func TestUnknownKernel(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	_, err := Send(ctx, rt, "nope", num{V: 1})
	wantErr(t, err, ErrUnknownKernel)
	_, err = Request[total](ctx, rt, "nope", num{V: 1})
	wantErr(t, err, ErrUnknownKernel)
	_, err = Receive[total](ctx, rt, "nope")
	wantErr(t, err, ErrUnknownKernel)
	wantErr(t, rt.Activate(ctx, "nope"), ErrUnknownKernel)
	wantErr(t, rt.Launch(ctx, "nope"), ErrUnknownKernel)
	wantErr(t, rt.Terminate(ctx, "nope"), ErrUnknownKernel)
	_, err = rt.Status("nope")
	wantErr(t, err, ErrUnknownKernel)
	_, err = Lookup[num, total](rt, "nope")
	wantErr(t, err, ErrUnknownKernel)
	var ke *KernelError
	if !errors.As(err, &ke) || ke.Kernel != "nope" {
		t.Fatalf("error %v does not name the kernel", err)
	}
}

func TestSendBeforeLaunchAndAfterTerminate(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	if err := rt.Register(NewKernel("sum", runningSum)); err != nil {
		t.Fatal(err)
	}
	_, err := Request[total](ctx, rt, "sum", num{V: 1})
	wantErr(t, err, ErrNotLaunched)
	wantErr(t, rt.Activate(ctx, "sum"), ErrNotLaunched)
	if err := rt.Launch(ctx, "sum"); err != nil {
		t.Fatal(err)
	}
	if err := rt.Activate(ctx, "sum"); err != nil {
		t.Fatal(err)
	}
	if err := rt.Terminate(ctx, "sum"); err != nil {
		t.Fatal(err)
	}
	_, err = Request[total](ctx, rt, "sum", num{V: 1})
	wantErr(t, err, ErrTerminated)
	_, err = Send(ctx, rt, "sum", num{V: 1})
	wantErr(t, err, ErrTerminated)
	_, err = Receive[total](ctx, rt, "sum")
	wantErr(t, err, ErrTerminated)
	// A terminated id can be registered and launched again.
	k := mustLaunch(t, rt, NewKernel("sum", runningSum), true)
	if r, err := k.Request(ctx, num{V: 7}); err != nil || r.Sum != 7 {
		t.Fatalf("relaunched kernel: %v %v", r, err)
	}
}

func TestInvalidTransition(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	k := mustLaunch(t, rt, NewKernel("sum", runningSum), false)
	cases := []struct {
		call func(context.Context) error
		from lifecycle.State
		ev   lifecycle.Event
	}{
		{k.Reactivate, lifecycle.Launched, lifecycle.Reactivate},
		{k.Deactivate, lifecycle.Launched, lifecycle.Deactivate},
		{func(ctx context.Context) error { return rt.Launch(ctx, "sum") }, lifecycle.Launched, lifecycle.Launch},
	}
	for _, c := range cases {
		err := c.call(ctx)
		var it lifecycle.ErrInvalidTransition
		if !errors.As(err, &it) || it.From != c.from || it.Event != c.ev {
			t.Fatalf("%v from %v: error %v", c.ev, c.from, err)
		}
	}
	if err := k.Activate(ctx); err != nil {
		t.Fatal(err)
	}
	err := k.Activate(ctx)
	var it lifecycle.ErrInvalidTransition
	if !errors.As(err, &it) || it.From != lifecycle.Active || it.Event != lifecycle.Activate {
		t.Fatalf("Activate twice: %v", err)
	}
	if k.State() != lifecycle.Active {
		t.Fatalf("state after a refused transition: %v", k.State())
	}
}

func TestWrongMessageType(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	mustLaunch(t, rt, NewKernel("sum", runningSum), true)
	_, err := Send(ctx, rt, "sum", label{S: "x"})
	var wt *WrongMessageTypeError
	if !errors.As(err, &wt) || wt.Role != "message" || !errors.Is(err, ErrWrongMessageType) {
		t.Fatalf("Send wrong type: %v", err)
	}
	_, err = Request[label](ctx, rt, "sum", num{V: 1})
	if !errors.As(err, &wt) || wt.Role != "reply" {
		t.Fatalf("Request wrong reply type: %v", err)
	}
	_, err = Receive[label](ctx, rt, "sum")
	wantErr(t, err, ErrWrongMessageType)
	_, err = Lookup[label, total](rt, "sum")
	wantErr(t, err, ErrWrongMessageType)
	// Nothing was admitted by the refused calls.
	if r, err := Request[total](ctx, rt, "sum", num{V: 2}); err != nil || r.Sum != 2 {
		t.Fatalf("after refusals: %v %v", r, err)
	}
}

func TestNilMessage(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	k := mustLaunch(t, rt, NewStatelessKernel("ptr", func(_ context.Context, n *num) (total, error) {
		return total{Sum: n.V}, nil
	}), true)
	_, err := k.Request(ctx, nil)
	wantErr(t, err, ErrNilMessage)
	_, err = k.Send(ctx, nil)
	wantErr(t, err, ErrNilMessage)
	_, err = Send[*num](ctx, rt, "ptr", nil)
	wantErr(t, err, ErrNilMessage)
	if st := k.Telemetry(); st.Processed != 0 {
		t.Fatalf("nil message reached the kernel: %+v", st)
	}
	if r, err := k.Request(ctx, &num{V: 3}); err != nil || r.Sum != 3 {
		t.Fatalf("%v %v", r, err)
	}
}

func TestCancelledContext(t *testing.T) {
	rt := newTestRuntime(t)
	k := mustLaunch(t, rt, NewKernel("sum", runningSum, WithCapacity(2), WithOverflow(0)), false)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := k.Request(cancelled, num{V: 1})
	wantErr(t, err, context.Canceled)
	_, err = k.Send(cancelled, num{V: 1})
	wantErr(t, err, context.Canceled)
	wantErr(t, k.Activate(cancelled), context.Canceled)

	// A Send blocked by backpressure (gate closed, ring full) gives up when
	// its context ends, and its message is not admitted.
	ctx := testCtx(t)
	for i := 0; i < 2; i++ {
		if _, err := k.Send(ctx, num{V: 1}); err != nil {
			t.Fatal(err)
		}
	}
	short, cancel2 := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel2()
	_, err = k.Send(short, num{V: 100})
	wantErr(t, err, context.DeadlineExceeded)
	// A Request waiting behind the closed gate gives up too.
	short3, cancel3 := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel3()
	_, err = k.Receive(short3)
	wantErr(t, err, context.DeadlineExceeded)
	if err := k.Activate(ctx); err != nil {
		t.Fatal(err)
	}
	for want := 1; want <= 2; want++ {
		r, err := k.Receive(ctx)
		if err != nil || r.Sum != want {
			t.Fatalf("Receive = %v %v, want %d", r, err, want)
		}
	}
}

func TestDuplicateKernel(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	mustLaunch(t, rt, NewKernel("sum", runningSum), false)
	_, err := Launch(ctx, rt, NewKernel("sum", runningSum))
	wantErr(t, err, ErrDuplicateKernel)
	wantErr(t, rt.Register(NewStatelessKernel("sum", vectorAdd)), ErrDuplicateKernel)
}

func TestInvalidDefinitions(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	for _, c := range []int{0, 3, 1000, -8} {
		_, err := Launch(ctx, rt, NewKernel("cap", runningSum, WithCapacity(c)))
		var ce *ring.CapacityError
		if !errors.As(err, &ce) || ce.Capacity != c {
			t.Fatalf("capacity %d: %v", c, err)
		}
	}
	_, err := Launch(ctx, rt, NewKernel[num, total]("", runningSum))
	wantErr(t, err, ErrInvalidKernel)
	_, err = Launch(ctx, rt, NewKernel[num, total]("nohandler", nil))
	wantErr(t, err, ErrInvalidKernel)
	_, err = Launch(ctx, rt, NewStatelessKernel("unreg", func(context.Context, unregistered) (total, error) { return total{}, nil }))
	wantErr(t, err, messages.ErrUnregistered)
	// A failed launch leaves nothing registered.
	if ids := rt.Kernels(); len(ids) != 0 {
		t.Fatalf("kernels after failed launches: %v", ids)
	}
	_, err = Launch(ctx, rt, NewKernel("down", runningSum, WithDownstream("missing")))
	wantErr(t, err, ErrUnknownKernel)
}

func TestClosedRuntime(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	k := mustLaunch(t, rt, NewKernel("sum", runningSum), true)
	if err := rt.Close(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := Send(ctx, rt, "sum", num{V: 1})
	wantErr(t, err, ErrRuntimeClosed)
	_, err = k.Request(ctx, num{V: 1})
	wantErr(t, err, ErrTerminated)
	_, err = Launch(ctx, rt, NewKernel("other", runningSum))
	wantErr(t, err, ErrRuntimeClosed)
}
