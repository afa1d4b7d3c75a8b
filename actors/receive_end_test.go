package actors

import (
	"context"
	"errors"
	"testing"
	"time"
)

// drainStream reads k's receive stream to its end (ErrEndOfStream) and
// returns how many replies and error outcomes it held.
func drainStream(t *testing.T, ctx context.Context, k *Kernel[num, total]) (replies, errs int) {
	t.Helper()
	for {
		_, err := k.Receive(ctx)
		switch {
		case err == nil:
			replies++
		case errors.Is(err, ErrEndOfStream):
			return replies, errs
		case ctx.Err() != nil:
			t.Fatalf("the stream never ended: %v (%d replies, %d errors so far)", err, replies, errs)
		default:
			errs++
		}
	}
}

// checkOutcomes asserts that each of n sent messages has exactly one
// outcome: a reply, an error on the stream, or a count in Dropped.
func checkOutcomes(t *testing.T, k *Kernel[num, total], n, replies, errs int) {
	t.Helper()
	st := k.Telemetry()
	if st.Processed != uint64(n) || uint64(replies+errs)+st.Dropped != uint64(n) {
		t.Fatalf("%d messages: %d replies + %d errors + %d dropped (processed %d)", n, replies, errs, st.Dropped, st.Processed)
	}
	if _, err := k.Receive(testCtx(t)); !errors.Is(err, ErrEndOfStream) || !errors.Is(err, ErrTerminated) {
		t.Fatalf("Receive after the end: %v, want ErrEndOfStream (and ErrTerminated)", err)
	}
}

// TestUnreadStreamTerminateKeepsOutcomes: a stateless kernel with a receive
// stream of 2, ten Sends, nobody reading; Terminate with a short context
// gives up on readers (context deadline exceeded). Every message still has
// exactly one outcome — a reply, an error, or a count in Dropped — whatever
// the order of terminate, emit and drain. It used to look as if three were
// lost: the messages the aborted terminate did not run have an error that
// matches ErrTerminated, which was also the end of the stream, so a reader
// stopped at the first of them (2 replies, dropped 5, three unaccounted).
func TestUnreadStreamTerminateKeepsOutcomes(t *testing.T) {
	const n = 10
	launch := func(t *testing.T, h Handler[num, total]) *Kernel[num, total] {
		rt := newTestRuntime(t)
		k := mustLaunch(t, rt, NewStatelessKernel("echo", h, WithOutputCapacity(2)), true)
		fill(t, k, 0, n)
		return k
	}
	terminate := func(t *testing.T, k *Kernel[num, total]) error {
		short, cancel := context.WithTimeout(testCtx(t), 300*time.Millisecond)
		defer cancel()
		return k.Terminate(short)
	}

	// The order: the loop blocks emitting the third reply, the
	// terminate gives up on it, and the stream is read while the loop
	// still drains the rest.
	t.Run("read after the terminate gave up", func(t *testing.T) {
		ctx := testCtx(t)
		k := launch(t, echoNum)
		wantErr(t, terminate(t, k), context.DeadlineExceeded)
		replies, errs := drainStream(t, ctx, k)
		checkOutcomes(t, k, n, replies, errs)
	})

	// A second Terminate waits for the end; the stream then holds what
	// fitted in it, and Dropped counts the rest. A third does nothing.
	t.Run("terminate twice", func(t *testing.T) {
		ctx := testCtx(t)
		k := launch(t, echoNum)
		wantErr(t, terminate(t, k), context.DeadlineExceeded)
		if err := k.Terminate(ctx); err != nil {
			t.Fatalf("second Terminate: %v", err)
		}
		replies, errs := drainStream(t, ctx, k)
		if replies+errs != 2 {
			t.Fatalf("the stream held %d replies and %d errors, want 2 in all (its capacity)", replies, errs)
		}
		checkOutcomes(t, k, n, replies, errs)
		if err := k.Terminate(ctx); err != nil {
			t.Fatalf("third Terminate: %v", err)
		}
	})

	// The terminate arrives and gives up while the handler runs the first
	// message: it then replies, and the messages behind it are not run.
	t.Run("terminate while handling", func(t *testing.T) {
		ctx := testCtx(t)
		started, release := make(chan struct{}), make(chan struct{})
		k := launch(t, func(_ context.Context, m num) (total, error) {
			if m.V == 0 {
				close(started)
				<-release
			}
			return total{Sum: m.V}, nil
		})
		<-started
		wantErr(t, terminate(t, k), context.DeadlineExceeded)
		close(release)
		replies, errs := drainStream(t, ctx, k)
		if replies < 1 {
			t.Fatalf("the message being handled did not reply (%d errors)", errs)
		}
		checkOutcomes(t, k, n, replies, errs)
	})

	// A reader drains the stream while the kernel terminates: the
	// terminate may finish in time or give up; either way every message
	// has its outcome.
	t.Run("drain concurrently", func(t *testing.T) {
		ctx := testCtx(t)
		k := launch(t, echoNum)
		type counts struct{ replies, errs int }
		read := make(chan counts, 1)
		go func() {
			var c counts
			for {
				_, err := k.Receive(ctx)
				switch {
				case err == nil:
					c.replies++
					continue
				case errors.Is(err, ErrEndOfStream), ctx.Err() != nil:
					read <- c
					return
				}
				c.errs++
			}
		}()
		if err := terminate(t, k); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Terminate: %v", err)
		}
		c := <-read
		checkOutcomes(t, k, n, c.replies, c.errs)
	})
}
