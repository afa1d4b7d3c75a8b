package actors

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// TestGoPipelinesInOrder admits many messages with RequestAsync before any reply is
// read: every one gets exactly one outcome, in admission order.
func TestGoPipelinesInOrder(t *testing.T) {
	rt := newTestRuntime(t)
	k := mustLaunch(t, rt, NewKernel("go-sum", runningSum), true)
	const n = 2000
	var (
		mu   sync.Mutex
		got  []int
		errs int
		wg   sync.WaitGroup
	)
	wg.Add(n)
	for i := 1; i <= n; i++ {
		err := k.RequestAsync(testCtx(t), num{V: 1}, func(r total, err error) {
			mu.Lock()
			if err != nil {
				errs++
			} else {
				got = append(got, r.Sum)
			}
			mu.Unlock()
			wg.Done()
		})
		if err != nil {
			t.Fatalf("Go %d: %v", i, err)
		}
	}
	wg.Wait()
	if errs != 0 || len(got) != n {
		t.Fatalf("%d replies, %d errors; want %d replies", len(got), errs, n)
	}
	for i, v := range got {
		if v != i+1 {
			t.Fatalf("reply %d = %d: out of order", i, v)
		}
	}
}

// TestGoErrors: a failing handler's error reaches done; a nil message or nil
// callback and a terminated kernel are refused at admission without calling
// done.
func TestGoErrors(t *testing.T) {
	rt := newTestRuntime(t)
	k := mustLaunch(t, rt, NewKernel("go-add", func() Handler[addReq, addResp] { return vectorAdd }), true)
	res := make(chan error, 1)
	if err := k.RequestAsync(testCtx(t), addReq{A: []float32{1}, B: nil}, func(_ addResp, err error) { res <- err }); err != nil {
		t.Fatal(err)
	}
	if err := <-res; err == nil {
		t.Fatal("mismatched lengths: no error")
	}
	called := func(addResp, error) { t.Error("done called for a refused message") }
	wantErr(t, k.RequestAsync(testCtx(t), addReq{}, nil), ErrNilMessage)
	ctx, cancel := context.WithCancel(testCtx(t))
	cancel()
	if err := k.RequestAsync(ctx, addReq{}, called); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled ctx: %v", err)
	}
	if err := k.Terminate(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	wantErr(t, k.RequestAsync(testCtx(t), addReq{}, called), ErrTerminated)
}

// TestGoDrainedOnTerminate: messages admitted while the gate is closed get
// an outcome when the kernel terminates.
func TestGoDrainedOnTerminate(t *testing.T) {
	rt := newTestRuntime(t)
	k := mustLaunch(t, rt, NewKernel("go-gated", runningSum), false)
	const n = 10
	outcomes := make(chan error, n)
	for range n {
		if err := k.RequestAsync(testCtx(t), num{V: 1}, func(_ total, err error) { outcomes <- err }); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.Terminate(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	for range n {
		<-outcomes // each message has its one outcome (handled or refused by the drain)
	}
	select {
	case err := <-outcomes:
		t.Fatalf("extra outcome %v", err)
	default:
	}
}
