package sensor

import (
	"context"
	"fmt"
	"io"
	"sync"
)

// RunChannels is the same pipeline hand-written with Go channels — a
// goroutine per stage (parse, scale, window, sink) joined by buffered
// channels of Config.RingCapacity — running the same stage code as the
// kernel chain on the same batches. It is the baseline `ringactor bench`
// measures the stream graph (Run) against; its output is Run's.
func RunChannels(ctx context.Context, cfg Config, in io.Reader, out, rejects io.Writer) (Stats, error) {
	if err := cfg.Validate(); err != nil {
		return Stats{}, err
	}
	cfg = cfg.withDefaults()
	p := newPools(cfg.ChunkBytes)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	chunks := make(chan Chunk, cfg.RingCapacity)
	parsed := make(chan *Batch, cfg.RingCapacity)
	scaledC := make(chan *Batch, cfg.RingCapacity)
	emits := make(chan *Emit, cfg.RingCapacity)
	var wg sync.WaitGroup
	stage := func(run func() error) {
		wg.Go(func() {
			if err := run(); err != nil {
				cancel(err)
			}
		})
	}
	parse, scale := newParseHandler(cfg, p)(), newScaleHandler(cfg)
	window, sink := newWindowHandler(cfg, p)(), newSinkHandler(cfg, out, rejects)()
	stage(func() error {
		defer close(chunks)
		return feedFunc(ctx, func(c Chunk) error {
			select {
			case chunks <- c:
				return nil
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}, in, p)
	})
	pipe := func(in <-chan Chunk, out chan<- *Batch) error {
		defer close(out)
		for c := range in {
			b, _ := parse(ctx, c)
			select {
			case out <- b:
			case <-ctx.Done():
				return nil
			}
		}
		return nil
	}
	stage(func() error { return pipe(chunks, parsed) })
	stage(func() error {
		defer close(scaledC)
		for b := range parsed {
			b, _ = scale(ctx, b)
			select {
			case scaledC <- b:
			case <-ctx.Done():
				return nil
			}
		}
		return nil
	})
	stage(func() error {
		defer close(emits)
		for b := range scaledC {
			e, _ := window(ctx, b)
			select {
			case emits <- e:
			case <-ctx.Done():
				return nil
			}
		}
		return nil
	})
	var st Stats
	stage(func() error {
		for e := range emits {
			pr, err := sink(ctx, e)
			if err != nil {
				return err
			}
			if pr.Done {
				st = pr.Stats
			}
		}
		return nil
	})
	// Drain what a failed stage leaves behind so that every goroutine ends.
	wg.Wait()
	if err := context.Cause(ctx); err != nil && err != context.Canceled {
		return Stats{}, fmt.Errorf("sensor: %w", err)
	}
	return st, nil
}
