package cluster

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestLazyDeadlineExpiresWithoutDone(t *testing.T) {
	d := time.Now().Add(30 * time.Millisecond)
	ctx, cancel := newLazyDeadline(d)
	defer cancel()
	if got, ok := ctx.Deadline(); !ok || !got.Equal(d) {
		t.Fatalf("Deadline() = %v, %v", got, ok)
	}
	if err := ctx.Err(); err != nil {
		t.Fatalf("Err before the deadline: %v", err)
	}
	if ctx.Value("k") != nil {
		t.Fatal("Value of a key it does not carry")
	}
	// Err turns by itself at the deadline, with no timer started, and not
	// before it.
	for {
		err := ctx.Err()
		after := time.Now()
		if err == nil {
			continue
		}
		if after.Before(d) {
			t.Fatalf("Err before the deadline: %v", err)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Err after the deadline: %v", err)
		}
		break
	}
	if ctx.timer != nil {
		t.Fatal("a timer started without anyone waiting on Done")
	}
	select {
	case <-ctx.Done():
	default:
		t.Fatal("Done is open after Err reported the deadline")
	}
	cancel()
	if err := ctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancel after expiry changed Err to %v", err)
	}
}

func TestLazyDeadlineDoneCloses(t *testing.T) {
	ctx, cancel := newLazyDeadline(time.Now().Add(20 * time.Millisecond))
	defer cancel()
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done never closed")
	}
	if err := ctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Err: %v", err)
	}
	// A context derived from it ends with it.
	child, ccancel := context.WithCancel(ctx)
	defer ccancel()
	<-child.Done()
}

func TestLazyDeadlineCancel(t *testing.T) {
	ctx, cancel := newLazyDeadline(time.Now().Add(time.Hour))
	done := ctx.Done()
	var wg sync.WaitGroup
	for range 8 { // cancel and wait concurrently, twice over
		wg.Add(2)
		go func() { defer wg.Done(); cancel() }()
		go func() { defer wg.Done(); <-ctx.Done(); _ = ctx.Err() }()
	}
	wg.Wait()
	<-done
	if err := ctx.Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Err after cancel: %v", err)
	}
	if ctx.timer != nil && ctx.timer.Stop() {
		t.Fatal("cancel left the timer running")
	}
	// Cancelled before anyone waited: Done is closed when first asked.
	ctx2, cancel2 := newLazyDeadline(time.Now().Add(time.Hour))
	cancel2()
	select {
	case <-ctx2.Done():
	default:
		t.Fatal("Done of a cancelled context is open")
	}
}
