package actors

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestRequestAsyncWithin: admission waits under its own context, the
// handler runs under the other; each admitted message gets one outcome.
func TestRequestAsyncWithin(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	k := mustLaunch(t, rt, NewStatelessKernel("within", func(hctx context.Context, n num) (total, error) {
		if hctx.Value(ctxKey{}) != "handler" {
			return total{}, errors.New("not the handler's context")
		}
		return total{Sum: n.V}, nil
	}, WithCapacity(2), WithOverflow(0)), false)
	hctx := context.WithValue(ctx, ctxKey{}, "handler")
	outcomes := make(chan error, 8)
	done := func(r total, err error) { outcomes <- err }
	// The gate is closed: two messages fill the ring.
	for i := range 2 {
		if err := k.RequestAsyncWithin(ctx, hctx, num{V: i}, done); err != nil {
			t.Fatal(err)
		}
	}
	// A third waits for room under its admission context, which ends.
	actx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := k.RequestAsyncWithin(actx, hctx, num{V: 2}, done); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("full ring: %v, want DeadlineExceeded", err)
	}
	// A message whose handler context has ended gets that as its outcome.
	gone, stop := context.WithCancel(hctx)
	if err := k.Activate(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-outcomes; err != nil {
			t.Fatal(err)
		}
	}
	if err := k.RequestAsyncWithin(ctx, gone, num{V: 3}, done); err != nil {
		t.Fatal(err)
	}
	stop()
	if err := <-outcomes; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("outcome %v", err)
	}
	if err := k.RequestAsyncWithin(ctx, gone, num{V: 4}, done); !errors.Is(err, context.Canceled) {
		t.Fatalf("ended handler context: %v", err)
	}
	if err := k.RequestAsyncWithin(ctx, hctx, num{V: 5}, nil); !errors.Is(err, ErrNilMessage) {
		t.Fatalf("nil done: %v", err)
	}
	select {
	case err := <-outcomes:
		t.Fatalf("an outcome for a message that was not admitted: %v", err)
	default:
	}
}

type ctxKey struct{}
