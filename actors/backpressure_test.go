package actors

import (
	"context"
	"errors"
	"testing"
	"time"
)

// fill sends n numbered messages to a deactivated kernel.
func fill(t *testing.T, k *Kernel[num, total], from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		if _, err := k.Send(testCtx(t), num{V: i}); err != nil {
			t.Fatalf("Send %d: %v", i, err)
		}
	}
}

func echoNum(_ context.Context, n num) (total, error) { return total{Sum: n.V}, nil }

func TestDeactivateQueuesAndLosesNothing(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	k := mustLaunch(t, rt, NewStatelessKernel("echo", echoNum, WithCapacity(8), WithOverflow(8)), true)
	if err := k.Deactivate(ctx); err != nil {
		t.Fatal(err)
	}
	fill(t, k, 1, 16) // ring and overflow exactly full
	// The gate is closed: a request waits, and gives up at its deadline.
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err := k.Request(short, num{V: 99})
	wantErr(t, err, context.DeadlineExceeded)
	if st := k.Telemetry(); st.Processed != 0 || st.Depth != 16 {
		t.Fatalf("while deactivated: %+v", st)
	}
	if err := k.Reactivate(ctx); err != nil {
		t.Fatal(err)
	}
	for want := 1; want <= 16; want++ {
		r, err := k.Receive(ctx)
		if err != nil || r.Sum != want {
			t.Fatalf("Receive = %v %v, want %d", r, err, want)
		}
	}
}

func TestBackpressureBlocksSender(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	k := mustLaunch(t, rt, NewStatelessKernel("echo", echoNum, WithCapacity(2), WithOverflow(2)), false)
	fill(t, k, 1, 4)
	sent := make(chan error, 1)
	go func() { // blocks until the kernel drains
		_, err := k.Send(ctx, num{V: 5})
		sent <- err
	}()
	select {
	case err := <-sent:
		t.Fatalf("Send into a full kernel returned %v without waiting", err)
	default:
	}
	if err := k.Activate(ctx); err != nil {
		t.Fatal(err)
	}
	for want := 1; want <= 5; want++ {
		r, err := k.Receive(ctx)
		if err != nil || r.Sum != want {
			t.Fatalf("Receive = %v %v, want %d", r, err, want)
		}
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	if st := k.Telemetry(); st.Dropped != 0 {
		t.Fatalf("blocking policy dropped %d", st.Dropped)
	}
}

func TestBackpressureReject(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	k := mustLaunch(t, rt, NewStatelessKernel("echo", echoNum, WithCapacity(2), WithOverflow(1), WithBackpressure(Reject)), false)
	fill(t, k, 1, 3)
	_, err := k.Send(ctx, num{V: 4})
	var be *BackpressureError
	if !errors.As(err, &be) || !errors.Is(err, ErrRingFull) || be.Policy != Reject {
		t.Fatalf("Send into a full kernel: %v", err)
	}
	_, err = k.Request(ctx, num{V: 5})
	wantErr(t, err, ErrRingFull)
	if st := k.Telemetry(); st.Dropped != 2 {
		t.Fatalf("dropped = %d, want 2", st.Dropped)
	}
	if err := k.Activate(ctx); err != nil {
		t.Fatal(err)
	}
	for want := 1; want <= 3; want++ {
		if r, err := k.Receive(ctx); err != nil || r.Sum != want {
			t.Fatalf("Receive = %v %v, want %d", r, err, want)
		}
	}
}

func TestBackpressureDropOldest(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	k := mustLaunch(t, rt, NewStatelessKernel("echo", echoNum, WithCapacity(2), WithOverflow(2), WithBackpressure(DropOldest)), false)
	fill(t, k, 1, 4) // ring: 1 2, overflow: 3 4
	// A request admitted into the full kernel evicts 3 and waits in the
	// overflow; two more sends evict 4 and then the request, which still
	// gets its outcome.
	evicted := make(chan error, 1)
	go func() {
		_, err := k.Request(ctx, num{V: 5})
		evicted <- err
	}()
	for k.Telemetry().Dropped < 1 { // the request is admitted once it has evicted 3
		waitTurn()
	}
	fill(t, k, 6, 2) // overflow: 6 7
	wantErr(t, <-evicted, ErrDropped)
	if st := k.Telemetry(); st.Dropped != 3 {
		t.Fatalf("dropped = %d, want 3", st.Dropped)
	}
	if err := k.Activate(ctx); err != nil {
		t.Fatal(err)
	}
	// The stream holds the outcome of every sent message, in order of
	// outcome: the evictions of 3 and 4, then the survivors 1 2 6 7.
	for i := 0; i < 2; i++ {
		_, err := k.Receive(ctx)
		wantErr(t, err, ErrDropped)
	}
	for _, want := range []int{1, 2, 6, 7} {
		if r, err := k.Receive(ctx); err != nil || r.Sum != want {
			t.Fatalf("Receive = %v %v, want %d", r, err, want)
		}
	}
}

// TestBlockedSenderNeverMissesRoom is the regression test of a lost wake-up:
// a sender that found the ring full (no overflow) while the loop emptied it
// used to wait forever. 200,000 sends through a 2-slot ring must all arrive.
func TestBlockedSenderNeverMissesRoom(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	k := mustLaunch(t, rt, NewStatelessKernel("tiny", echoNum, WithCapacity(2), WithOverflow(0)), true)
	const n = 200_000
	done := make(chan error, 1)
	go func() {
		for i := 0; i < n; i++ {
			if _, err := k.Send(ctx, num{V: i}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for i := 0; i < n; i++ {
		r, err := k.Receive(ctx)
		if err != nil || r.Sum != i {
			t.Fatalf("Receive %d = %v %v", i, r, err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Once every admitted message has its outcome, the ring's slots are all
// free: a producer that saw the last reply of a full ring finds the whole
// capacity again (the consumer gives a batch's slots back before the
// batch's last outcome leaves, not after). Under Reject with no overflow
// any slot still held would fail the next round with ErrRingFull.
func TestLastOutcomeFreesTheRing(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	k := mustLaunch(t, rt, NewStatelessKernel("echo", echoNum, WithCapacity(2), WithOverflow(0), WithBackpressure(Reject)), true)
	outs := make(chan error, 2)
	done := func(_ total, err error) { outs <- err }
	for round := range 2000 {
		for v := range 2 {
			if err := k.RequestAsync(ctx, num{V: v}, done); err != nil {
				t.Fatalf("round %d: admitting %d: %v", round, v, err)
			}
		}
		for range 2 {
			if err := <-outs; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}
