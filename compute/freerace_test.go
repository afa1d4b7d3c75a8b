package compute

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ringactor/ringactor/gpu"
)

// TestFreeDuringExecute frees a pooled input while many goroutines execute
// kernels reading it. Each execution either succeeds with the right data
// or fails with gpu.ErrFreed; the race detector sees no race (Free used to
// clear the buffer's memory under a running kernel); and the input's
// storage goes back to its pool exactly once, after the last use.
func TestFreeDuringExecute(t *testing.T) {
	const (
		workers = 8
		n       = 1024
	)
	for round := range 20 {
		rt := newTestOrchestrator(t)
		ctx := testCtx(t)
		pool := gpu.NewPool()
		in, err := pool.Get(gpu.F32, gpu.Shape{n})
		if err != nil {
			t.Fatal(err)
		}
		host, err := gpu.HostSlice[float32](in)
		if err != nil {
			t.Fatal(err)
		}
		for i := range host {
			host[i] = float32(i)
		}
		var (
			started   sync.WaitGroup // every worker has finished one execution
			wg        sync.WaitGroup
			ok, freed atomic.Int64
			stop      = make(chan struct{})
		)
		started.Add(workers)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				first := true
				for {
					var out *gpu.UnifiedBuffer
					var err error
					if w%2 == 0 {
						out, err = rt.Execute(ctx, "scale", bufs(in), nil, WithScalars(2))
					} else {
						out, err = rt.Map(ctx, "scale", bufs(in), 256, WithScalars(2))
					}
					switch {
					case err == nil:
						got, rerr := gpu.HostSlice[float32](out)
						if rerr != nil {
							t.Errorf("reading the output: %v", rerr)
							return
						}
						for i, v := range got {
							if v != 2*float32(i) {
								t.Errorf("round %d: out[%d] = %v, want %v", round, i, v, 2*float32(i))
								return
							}
						}
						_ = out.Free()
						ok.Add(1)
					case errors.Is(err, gpu.ErrFreed):
						freed.Add(1)
					default:
						t.Errorf("round %d: Execute: %v, want success or ErrFreed", round, err)
						return
					}
					if first {
						first = false
						started.Done()
					}
					if err != nil {
						return
					}
					select {
					case <-stop:
						return
					default:
					}
				}
			}()
		}
		started.Wait() // the input is in use, or about to be, in every worker
		if err := in.Free(); err != nil {
			t.Fatalf("Free: %v", err)
		}
		close(stop)
		wg.Wait()
		if err := in.Free(); err != nil {
			t.Fatalf("second Free: %v", err)
		}
		if s := pool.Stats(); s.Puts != 1 || s.Drops != 0 || s.HeldBytes != n*4 {
			t.Fatalf("round %d: storage returned %d times (stats %+v), want once", round, s.Puts, s)
		}
		if _, err := rt.Execute(ctx, "scale", bufs(in), nil); !errors.Is(err, gpu.ErrFreed) {
			t.Fatalf("Execute after Free: %v, want ErrFreed", err)
		}
		if ok.Load() < workers {
			t.Fatalf("only %d executions succeeded", ok.Load())
		}
	}
}
