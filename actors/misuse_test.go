package actors

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/lifecycle"
)

// gatedHandler blocks each message until release is closed (or the
// handler's context ends), then echoes it.
func gatedHandler(started chan<- int, release <-chan struct{}) Handler[num, num] {
	return func(ctx context.Context, r num) (num, error) {
		if started != nil {
			started <- r.V
		}
		select {
		case <-release:
			return r, nil
		case <-ctx.Done():
			return num{}, ctx.Err()
		}
	}
}

// A second Launch — sequential, concurrent, while the kernel is busy — fails
// with the invalid-transition error and changes nothing: the messages queued
// in the first incarnation are all handled.
func TestLaunchTwiceChangesNothing(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	started, release := make(chan int, 8), make(chan struct{})
	k, err := Launch(ctx, rt, NewStatelessKernel("twice", gatedHandler(started, release)))
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Activate(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 5
	for i := range n {
		if _, err := k.Send(ctx, num{V: i}); err != nil {
			t.Fatal(err)
		}
	}
	<-started // busy: the first message is in the handler, the rest queued

	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() { errs <- rt.Launch(ctx, "twice") })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		var ite lifecycle.ErrInvalidTransition
		if !errors.Is(err, lifecycle.ErrTransition) || !errors.As(err, &ite) || ite.Event != lifecycle.Launch {
			t.Fatalf("second Launch = %v, want ErrInvalidTransition for launch", err)
		}
	}
	if st, _ := rt.Status("twice"); st.State != lifecycle.Active {
		t.Fatalf("state after refused launches = %v, want active", st.State)
	}
	close(release)
	seen := map[int]bool{}
	for range n {
		v, err := k.Receive(ctx)
		if err != nil {
			t.Fatalf("Receive: %v", err)
		}
		seen[v.V] = true
	}
	if len(seen) != n {
		t.Fatalf("got %v, want all %d messages", seen, n)
	}
}

// Every lifecycle command sent to the kernel's PID as a Proto.Actor request
// is answered, Terminate included (it is answered when the drain ends).
func TestLifecycleCommandsByRequestFuture(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	k, err := Launch(ctx, rt, NewStatelessKernel("cmd", echoN))
	if err != nil {
		t.Fatal(err)
	}
	root := rt.ActorSystem().Root
	ask := func(cmd any) *lifecycle.Reply {
		t.Helper()
		res, err := root.RequestFuture(k.PID(), cmd, hangWait(t)).Result()
		if err != nil {
			t.Fatalf("RequestFuture(%v): %v", cmd, err)
		}
		r, ok := res.(*lifecycle.Reply)
		if !ok {
			t.Fatalf("reply %T %v, want *lifecycle.Reply", res, res)
		}
		return r
	}
	if r := ask(lifecycle.Command{Event: lifecycle.Activate}); r.Err != nil || r.To != lifecycle.Active {
		t.Fatalf("activate: %+v", r)
	}
	if r := ask(&lifecycle.Command{Event: lifecycle.Deactivate}); r.Err != nil || r.To != lifecycle.Deactivated {
		t.Fatalf("deactivate: %+v", r)
	}
	if r := ask(lifecycle.Command{Event: lifecycle.Launch}); !errors.Is(r.Err, lifecycle.ErrTransition) {
		t.Fatalf("launch again: %+v", r)
	}
	if r := ask(lifecycle.Command{Event: lifecycle.Terminate}); r.Err != nil || r.To != lifecycle.Terminated {
		t.Fatalf("terminate: %+v", r)
	}
	<-k.k.done()
}

func echoN(_ context.Context, r num) (num, error) { return r, nil }

// Fault and Restart are the kernel's own events: sent from outside they are
// refused with ErrInternalEvent and the kernel keeps its state and serves.
func TestFaultCommandFromOutsideRefused(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	k, err := Launch(ctx, rt, NewStatelessKernel("nofault", echoN))
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Activate(ctx); err != nil {
		t.Fatal(err)
	}
	root := rt.ActorSystem().Root
	for _, ev := range []lifecycle.Event{lifecycle.Fault, lifecycle.Restart} {
		res, err := root.RequestFuture(k.PID(), lifecycle.Command{Event: ev}, hangWait(t)).Result()
		if err != nil {
			t.Fatal(err)
		}
		r := res.(*lifecycle.Reply)
		var ie *InternalEventError
		if !errors.Is(r.Err, ErrInternalEvent) || !errors.As(r.Err, &ie) || ie.Event != ev || r.To != lifecycle.Active {
			t.Fatalf("%v from outside: %+v", ev, r)
		}
		root.Send(k.PID(), &lifecycle.Command{Event: ev}) // no sender: refused all the same
	}
	if got, err := k.Request(ctx, num{V: 7}); err != nil || got.V != 7 {
		t.Fatalf("Request after refused faults = %v, %v", got, err)
	}
	if st, _ := rt.Status("nofault"); st.State != lifecycle.Active {
		t.Fatalf("state = %v, want active", st.State)
	}
}

// Messages posted to the kernel's PID cannot wait: when ring and overflow are
// full they are rejected with ErrRingFull (to the sender, or counted as
// dropped without one) instead of queueing without bound.
func TestPIDMessagesBoundedByRingAndOverflow(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	k, err := Launch(ctx, rt, NewStatelessKernel("bounded", echoN, WithCapacity(2), WithOverflow(2)))
	if err != nil {
		t.Fatal(err)
	}
	root := rt.ActorSystem().Root
	// Gate closed: nothing is consumed, so exactly 4 messages fit.
	const requests = 50
	futures := make([]interface {
		Result() (any, error)
	}, requests)
	for i := range futures {
		futures[i] = root.RequestFuture(k.PID(), num{V: i}, hangWait(t))
	}
	for i := range 10 {
		root.Send(k.PID(), num{V: 1000 + i}) // no sender
	}
	st, _ := rt.Status("bounded")
	if st.Depth != 4 {
		t.Fatalf("depth = %d, want ring 2 + overflow 2", st.Depth)
	}
	if st.Dropped != requests-4+10 {
		t.Fatalf("dropped = %d, want %d", st.Dropped, requests-4+10)
	}
	if err := k.Activate(ctx); err != nil {
		t.Fatal(err)
	}
	ok := 0
	for i, f := range futures {
		res, err := f.Result()
		if err != nil {
			t.Fatalf("request %d: future %v", i, err)
		}
		switch r := res.(type) {
		case num:
			if r.V != i {
				t.Fatalf("request %d answered %d", i, r.V)
			}
			ok++
		case error:
			var be *BackpressureError
			if !errors.Is(r, ErrRingFull) || !errors.As(r, &be) || be.Policy != Block || i < 4 {
				t.Fatalf("request %d: %v", i, r)
			}
		default:
			t.Fatalf("request %d: reply %T", i, res)
		}
	}
	if ok != 4 {
		t.Fatalf("%d requests answered, want 4", ok)
	}
}

// DropOldest with a full, unread receive stream: evicting would lose the
// evicted message's outcome, so the new message is refused at once with
// ErrRingFull (never a wait past the sender's deadline, never a lost outcome).
func TestDropOldestWithFullStreamRefusesNew(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	k, err := Launch(ctx, rt, NewStatelessKernel("dropold", echoN,
		WithCapacity(2), WithOverflow(1), WithOutputCapacity(1), WithBackpressure(DropOldest)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 { // ring 2 + overflow 1, then the first eviction fills the stream
		if _, err := k.Send(ctx, num{V: i}); err != nil {
			t.Fatal(err)
		}
	}
	sctx, cancel := context.WithTimeout(ctx, time.Hour)
	defer cancel()
	_, err = k.Send(sctx, num{V: 4}) // would evict again, but the stream is full
	var be *BackpressureError
	if !errors.Is(err, ErrRingFull) || !errors.As(err, &be) || be.Policy != DropOldest {
		t.Fatalf("Send = %v, want ErrRingFull from DropOldest", err)
	}
	// The first eviction's outcome is in the stream.
	if _, err := k.Receive(ctx); !errors.Is(err, ErrDropped) {
		t.Fatalf("Receive = %v, want ErrDropped", err)
	}
	// The ring's two and the overflow's newest are still queued and handled
	// (message 2 was evicted, message 4 refused).
	if err := k.Activate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, want := range []int{0, 1, 3} {
		if v, err := k.Receive(ctx); err != nil || v.V != want {
			t.Fatalf("Receive = %v, %v; want %d", v, err, want)
		}
	}
	if st, _ := rt.Status("dropold"); st.Dropped != 2 {
		t.Fatalf("dropped = %d, want one eviction and one refusal", st.Dropped)
	}
}

// A nil handler — given directly or returned by a factory — and a factory
// that panics are ErrInvalidKernel at launch.
func TestNilHandlerRefusedAtLaunch(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	defs := map[string]*KernelDef[num, num]{
		"stateless-nil": NewStatelessKernel[num, num]("stateless-nil", nil),
		"kernel-nil":    NewKernel[num, num]("kernel-nil", nil),
		"factory-nil":   NewKernel("factory-nil", func() Handler[num, num] { return nil }),
		"factory-panic": NewKernel("factory-panic", func() Handler[num, num] { panic("no state for you") }),
	}
	for name, def := range defs {
		if _, err := Launch(ctx, rt, def); !errors.Is(err, ErrInvalidKernel) {
			t.Errorf("%s: Launch = %v, want ErrInvalidKernel", name, err)
		}
		if err := rt.Register(def); err == nil {
			if err := rt.Launch(ctx, name); !errors.Is(err, ErrInvalidKernel) {
				t.Errorf("%s: Runtime.Launch = %v, want ErrInvalidKernel", name, err)
			}
			if st, _ := rt.Status(name); st.State != lifecycle.Created {
				t.Errorf("%s: state after refused launch = %v", name, st.State)
			}
		}
	}
}

// When Terminate's context ends while messages are still queued, each of
// them gets an outcome that says it did not run (ErrTerminated), not a bare
// context error.
func TestTerminateContextExpiryOutcomes(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	started, release := make(chan int, 8), make(chan struct{})
	defer close(release)
	k, err := Launch(ctx, rt, NewStatelessKernel("expire", gatedHandler(started, release)))
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Activate(ctx); err != nil {
		t.Fatal(err)
	}
	root := rt.ActorSystem().Root
	const n = 4
	futures := make([]interface {
		Result() (any, error)
	}, n)
	for i := range futures {
		futures[i] = root.RequestFuture(k.PID(), num{V: i}, hangWait(t))
	}
	<-started // the first message is in the handler, the others queued
	tctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := rt.Terminate(tctx, "expire"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Terminate = %v, want its context's deadline", err)
	}
	for i, f := range futures {
		res, err := f.Result()
		if err != nil {
			t.Fatalf("message %d: future %v", i, err)
		}
		e, ok := res.(error)
		if !ok {
			t.Fatalf("message %d: reply %v, want an error", i, res)
		}
		if i == 0 { // it ran: its handler saw the kernel's context end
			if !errors.Is(e, gpu.ErrExecution) {
				t.Fatalf("message 0: %v, want an ExecutionError", e)
			}
			continue
		}
		if !errors.Is(e, ErrTerminated) {
			t.Fatalf("message %d: %v, want ErrTerminated", i, e)
		}
	}
	<-k.k.done()
}
