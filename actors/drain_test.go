package actors

import (
	"context"
	"testing"
	"time"

	"github.com/ringactor/ringactor/lifecycle"
)

func TestTerminateDrainProcess(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	k := mustLaunch(t, rt, NewStatelessKernel("echo", echoNum, WithCapacity(4), WithOverflow(8)), true)
	if err := k.Deactivate(ctx); err != nil {
		t.Fatal(err)
	}
	fill(t, k, 1, 12)
	if err := k.Terminate(ctx); err != nil {
		t.Fatal(err)
	}
	// Everything queued was handled; the replies stay readable after the end.
	for want := 1; want <= 12; want++ {
		r, err := k.Receive(ctx)
		if err != nil || r.Sum != want {
			t.Fatalf("Receive = %v %v, want %d", r, err, want)
		}
	}
	_, err := k.Receive(ctx)
	wantErr(t, err, ErrTerminated)
	if st := k.Telemetry(); st.Processed != 12 || st.State != lifecycle.Terminated.String() {
		t.Fatalf("%+v", st)
	}
}

func TestTerminateDrainReject(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	k := mustLaunch(t, rt, NewStatelessKernel("echo", echoNum, WithCapacity(4), WithOverflow(8), WithDrain(DrainReject)), false)
	errs := make(chan error, 3)
	for i := 0; i < 3; i++ {
		go func() {
			_, err := k.Request(ctx, num{V: i})
			errs <- err
		}()
	}
	fill(t, k, 10, 5)
	for k.Telemetry().Depth < 8 {
		waitTurn()
	}
	if err := k.Terminate(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		wantErr(t, <-errs, ErrTerminated)
	}
	for i := 0; i < 5; i++ {
		_, err := k.Receive(ctx)
		wantErr(t, err, ErrTerminated)
	}
}

func TestTerminateWakesBlockedSenders(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	k := mustLaunch(t, rt, NewStatelessKernel("echo", echoNum, WithCapacity(2), WithOverflow(0), WithDrain(DrainReject)), false)
	fill(t, k, 1, 2)
	blocked := make(chan error, 1)
	go func() {
		_, err := k.Request(ctx, num{V: 3})
		blocked <- err
	}()
	if err := k.Terminate(ctx); err != nil {
		t.Fatal(err)
	}
	wantErr(t, <-blocked, ErrTerminated)
}

func TestCloseAnswersEverything(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	k := mustLaunch(t, rt, NewStatelessKernel("echo", echoNum, WithCapacity(4), WithOverflow(4)), false)
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		go func() {
			_, err := k.Request(ctx, num{V: i})
			errs <- err
		}()
	}
	for k.Telemetry().Depth < 4 {
		waitTurn()
	}
	// Close terminates with each kernel's drain policy (process): the gate
	// was never opened, yet every queued request is answered.
	if err := rt.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestTerminateWithExpiredContextAborts(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	// Replies nobody receives fill the stream; terminating waits for readers
	// until its context ends, then gives up on them and counts them.
	k := mustLaunch(t, rt, NewStatelessKernel("echo", echoNum, WithOutputCapacity(1)), true)
	fill(t, k, 1, 3)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	wantErr(t, k.Terminate(cancelled), context.Canceled)
	if k.State() != lifecycle.Active {
		t.Fatalf("Terminate with a cancelled context changed the state to %v", k.State())
	}
	short, cancel2 := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel2()
	wantErr(t, k.Terminate(short), context.DeadlineExceeded)
	<-k.k.done()
	st := k.Telemetry()
	// One reply fits the stream; the loop waited on the second until the
	// deadline and then dropped it and the third, counting both.
	if st.Processed != 3 || st.Dropped != 2 {
		t.Fatalf("%+v", st)
	}
	if r, err := k.Receive(ctx); err != nil || r.Sum != 1 {
		t.Fatalf("the reply that fitted: %v %v", r, err)
	}
}
