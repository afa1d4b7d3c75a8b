package cpu

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// ParallelFor splits [0,n) into contiguous chunks of at least grain
// elements and runs fn(lo, hi) on each, on up to GOMAXPROCS goroutines (the
// calling goroutine is one of them). Chunks are handed out dynamically, so
// uneven work balances; their bounds depend on n, grain and GOMAXPROCS, so
// fn must not assume a particular split. When n < 2*grain it runs fn(0, n)
// inline. A grain below 1 counts as 1; n ≤ 0 runs nothing.
//
// It returns ctx.Err() if ctx is already done on entry (fn is not called),
// or if ctx is cancelled while chunks remain: workers stop taking chunks at
// the next chunk boundary (a running fn is not interrupted) and some of
// [0,n) stays unprocessed. It returns nil when every chunk ran.
//
// If fn panics, the remaining chunks are abandoned, ParallelFor waits for the
// other workers and re-panics with the first panic value on the caller's
// goroutine.
func ParallelFor(ctx context.Context, n, grain int, fn func(lo, hi int)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if n <= 0 {
		return nil
	}
	if grain < 1 {
		grain = 1
	}
	if n/2 < grain { // n < 2*grain without overflow
		fn(0, n)
		return nil
	}
	workers := runtime.GOMAXPROCS(0)
	if most := n / grain; workers > most {
		workers = most
	}
	// A few chunks per worker balance uneven work without much overhead.
	chunk := max(grain, (n+workers*4-1)/(workers*4))
	s := &pfState{
		fn:      fn,
		n:       n,
		chunk:   chunk,
		nchunks: int64((n + chunk - 1) / chunk),
		done:    ctx.Done(),
	}
	s.wg.Add(workers - 1)
	for range workers - 1 {
		go s.worker()
	}
	s.work()
	s.wg.Wait()
	if s.panicked.Load() {
		panic(s.panicVal)
	}
	if s.cancelled.Load() {
		return ctx.Err()
	}
	return nil
}

// pfState is one ParallelFor call's shared state.
type pfState struct {
	fn        func(lo, hi int)
	n, chunk  int
	nchunks   int64
	next      atomic.Int64
	done      <-chan struct{}
	wg        sync.WaitGroup
	cancelled atomic.Bool
	panicked  atomic.Bool
	panicOnce sync.Once
	panicVal  any
}

func (s *pfState) worker() {
	defer s.wg.Done()
	s.work()
}

// work takes chunks until none is left, ctx is done or a worker panicked.
func (s *pfState) work() {
	defer func() {
		if r := recover(); r != nil {
			s.panicOnce.Do(func() { s.panicVal = r })
			s.panicked.Store(true)
			s.next.Store(s.nchunks) // abandon the rest
		}
	}()
	for {
		if s.done != nil {
			select {
			case <-s.done:
				s.cancelled.Store(true)
				return
			default:
			}
		}
		i := s.next.Add(1) - 1
		if i >= s.nchunks {
			return
		}
		lo := int(i) * s.chunk
		s.fn(lo, min(lo+s.chunk, s.n))
	}
}
