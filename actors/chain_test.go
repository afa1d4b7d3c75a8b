package actors

import (
	"context"
	"errors"
	"testing"

	"github.com/ringactor/ringactor/gpu"
)

func TestKernelToKernelChain(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	tail := mustLaunch(t, rt, NewKernel("sum", runningSum), true)
	mustLaunch(t, rt, NewStatelessKernel("double", func(_ context.Context, n num) (num, error) {
		if n.V < 0 {
			return num{}, errors.New("negative")
		}
		return num{V: 2 * n.V}, nil
	}, WithDownstream("sum")), true)

	// A Request through the head is answered by the tail.
	r, err := Request[total](ctx, rt, "double", num{V: 5})
	if err != nil || r.Sum != 10 {
		t.Fatalf("chain Request = %v %v", r, err)
	}
	// The head's own reply type is not what comes back.
	_, err = Request[num](ctx, rt, "double", num{V: 1})
	wantErr(t, err, ErrWrongMessageType)

	// Sends flow through the chain in order and come out of the tail's stream.
	for i := 1; i <= 100; i++ {
		if _, err := Send(ctx, rt, "double", num{V: i}); err != nil {
			t.Fatal(err)
		}
	}
	want := 10
	for i := 1; i <= 100; i++ {
		want += 2 * i
		r, err := tail.Receive(ctx)
		if err != nil || r.Sum != want {
			t.Fatalf("tail Receive %d = %v %v, want %d", i, r, err, want)
		}
	}
	// A failure in the head travels down the chain to where the replies go.
	if _, err := Send(ctx, rt, "double", num{V: -1}); err != nil {
		t.Fatal(err)
	}
	_, err = tail.Receive(ctx)
	if !errors.Is(err, gpu.ErrExecution) {
		t.Fatalf("head failure on tail stream: %v", err)
	}
	_, err = Request[total](ctx, rt, "double", num{V: -1})
	var ee *gpu.ExecutionError
	if !errors.As(err, &ee) || ee.Kernel != "double" {
		t.Fatalf("head failure to requester: %v", err)
	}
}

func TestChainTypeMismatch(t *testing.T) {
	rt := newTestRuntime(t)
	mustLaunch(t, rt, NewKernel("sum", runningSum), false)
	_, err := Launch(testCtx(t), rt, NewStatelessKernel("adder", vectorAdd, WithDownstream("sum")))
	var wt *WrongMessageTypeError
	if !errors.As(err, &wt) || wt.Kernel != "sum" {
		t.Fatalf("mismatched chain: %v", err)
	}
}

func TestChainBackpressure(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	tail := mustLaunch(t, rt, NewStatelessKernel("tail", echoNum, WithCapacity(2), WithOverflow(0)), false)
	mustLaunch(t, rt, NewStatelessKernel("head", func(_ context.Context, n num) (num, error) { return n, nil },
		WithDownstream("tail"), WithCapacity(2), WithOverflow(0)), true)
	// The tail is closed: the head fills it, then blocks, then its own ring
	// fills, and the sender blocks. Nothing is dropped along the way.
	done := make(chan error, 1)
	go func() {
		for i := 1; i <= 20; i++ {
			if _, err := Send(ctx, rt, "head", num{V: i}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	if err := tail.Activate(ctx); err != nil {
		t.Fatal(err)
	}
	for want := 1; want <= 20; want++ {
		r, err := tail.Receive(ctx)
		if err != nil || r.Sum != want {
			t.Fatalf("Receive = %v %v, want %d", r, err, want)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
