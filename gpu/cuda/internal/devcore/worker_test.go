package devcore

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestWorkerRunsOnOneThread checks the device thread's mechanics without a device:
// setup, every Do from many goroutines, and teardown run on one OS thread.
func TestWorkerRunsOnOneThread(t *testing.T) {
	var setupTID, teardownTID int
	w, err := StartWorker(
		func() error { setupTID = gettid(); return nil },
		func() error { teardownTID = gettid(); return nil },
	)
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg      sync.WaitGroup
		ran     atomic.Int64
		counter int // only touched on the worker: no race if Do serialises
		other   atomic.Int64
	)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if err := w.Do(func() error {
					if tid := gettid(); tid != setupTID {
						other.Add(1)
					}
					counter++
					ran.Add(1)
					return nil
				}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if ran.Load() != 16*200 || counter != 16*200 {
		t.Fatalf("ran %d, counter %d, want %d", ran.Load(), counter, 16*200)
	}
	if other.Load() != 0 {
		t.Fatalf("%d calls ran off the worker's thread", other.Load())
	}
	if setupTID == 0 || teardownTID != setupTID {
		t.Fatalf("setup on thread %d, teardown on %d", setupTID, teardownTID)
	}
}

func TestWorkerErrorsAndPanics(t *testing.T) {
	w, err := StartWorker(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	sentinel := errors.New("boom")
	if err := w.Do(func() error { return sentinel }); err != sentinel {
		t.Fatalf("Do returned %v, want the function's error", err)
	}
	err = w.Do(func() error { panic("kernel table corrupt") })
	if err == nil || !strings.Contains(err.Error(), "kernel table corrupt") {
		t.Fatalf("Do of a panicking function returned %v", err)
	}
	// The worker survives a panic.
	if err := w.Do(func() error { return nil }); err != nil {
		t.Fatalf("Do after a panic: %v", err)
	}
	// A Do inside a Do runs inline instead of deadlocking.
	outer := gettid()
	var inner int
	err = w.Do(func() error {
		outer = gettid()
		return w.Do(func() error { inner = gettid(); return nil })
	})
	if err != nil || inner != outer {
		t.Fatalf("nested Do: err %v, inner thread %d, outer %d", err, inner, outer)
	}
	if err := w.Do(nil); err == nil {
		t.Fatal("Do(nil) returned nil")
	}
	if err := w.Do(func() error { return w.Close() }); err == nil {
		t.Fatal("Close from inside Do returned nil")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	called := false
	if err := w.Do(func() error { called = true; return nil }); !errors.Is(err, ErrContextClosed) || called {
		t.Fatalf("Do after Close: %v (ran: %v)", err, called)
	}
}

func TestWorkerSetupAndTeardownFailures(t *testing.T) {
	sentinel := errors.New("no primary context")
	if w, err := StartWorker(func() error { return sentinel }, nil); w != nil || err != sentinel {
		t.Fatalf("startWorker with failing setup: %v, %v", w, err)
	}
	if w, err := StartWorker(func() error { panic("setup") }, nil); w != nil || err == nil {
		t.Fatalf("startWorker with panicking setup: %v, %v", w, err)
	}
	w, err := StartWorker(nil, func() error { return sentinel })
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != sentinel {
		t.Fatalf("Close returned %v, want teardown's error", err)
	}
}

// TestPollServesOthersDuringLongDo runs a long Do (a ring kernel's loop)
// that serves the Do calls of other goroutines through poll.
func TestPollServesOthersDuringLongDo(t *testing.T) {
	w, err := StartWorker(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := w.Poll(); n != 0 {
		t.Fatalf("poll off the worker thread ran %d", n)
	}
	const others = 50
	served := make(chan int, others)
	stop := make(chan struct{})
	loopDone := make(chan error, 1)
	loopTID := make(chan int, 1)
	go func() {
		loopDone <- w.Do(func() error {
			loopTID <- gettid()
			for {
				w.Poll()
				select {
				case <-stop:
					return nil
				default:
				}
				runtime.Gosched()
			}
		})
	}()
	tid := <-loopTID
	var wg sync.WaitGroup
	for i := 0; i < others; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.Do(func() error { served <- gettid(); return nil }); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	close(stop)
	if err := <-loopDone; err != nil {
		t.Fatal(err)
	}
	close(served)
	n := 0
	for got := range served {
		n++
		if got != tid {
			t.Fatalf("served on thread %d, loop on %d", got, tid)
		}
	}
	if n != others {
		t.Fatalf("served %d of %d", n, others)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCloseConcurrentWithDo races Close against Do: every Do either runs
// or returns ErrContextClosed, and nothing hangs.
func TestCloseConcurrentWithDo(t *testing.T) {
	w, err := StartWorker(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				if err := w.Do(func() error { return nil }); err != nil && !errors.Is(err, ErrContextClosed) {
					t.Error(err)
				}
			}
		}()
	}
	wg.Add(1)
	go func() { defer wg.Done(); _ = w.Close() }()
	wg.Wait()
	if err := w.Do(func() error { return nil }); !errors.Is(err, ErrContextClosed) {
		t.Fatalf("Do after Close: %v", err)
	}
}

// BenchmarkWorkerDo measures one Do round trip (the per-batch hand-off
// cost of the device thread).
func BenchmarkWorkerDo(b *testing.B) {
	w, err := StartWorker(nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = w.Close() }()
	fn := func() error { return nil }
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Do(fn); err != nil {
			b.Fatal(err)
		}
	}
}
