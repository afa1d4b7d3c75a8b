package sensor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/ringactor/ringactor/actors"
)

// shutdownTimeout bounds the termination of a run's kernels.
const shutdownTimeout = 10 * time.Second

// runs numbers the runs of the process, so that kernel ids are unique and
// several pipelines can share a runtime.
var runs atomic.Uint64

// Run streams in through the pipeline — a stream graph (RunGraph) in a
// runtime of its own, made with opts and closed before Run returns. The
// windows go to out as CSV, the rejected rows and, when there are any, the
// final "rejected N rows" line to rejects. It returns the run's counters. A read, write or
// pipeline failure, or the end of ctx, stops the run with an error;
// rejected rows are not errors.
func Run(ctx context.Context, cfg Config, in io.Reader, out, rejects io.Writer, opts ...actors.Option) (Stats, error) {
	return RunGraph(ctx, cfg, in, out, rejects, GraphOptions{RuntimeOptions: opts})
}

// RunIn is Run in an existing runtime: the graph's kernels run there (under
// ids of their own) and are terminated before it returns.
func RunIn(ctx context.Context, rt *actors.Runtime, cfg Config, in io.Reader, out, rejects io.Writer) (Stats, error) {
	return RunGraph(ctx, cfg, in, out, rejects, GraphOptions{Runtime: rt})
}

// runChain is the pipeline as it was before package stream: four ring
// kernels chained with actors.WithDownstream, in a runtime of its own. It
// is kept as the reference RunGraph is compared with (graph_test.go).
func runChain(ctx context.Context, cfg Config, in io.Reader, out, rejects io.Writer, opts ...actors.Option) (st Stats, err error) {
	if err := cfg.Validate(); err != nil {
		return Stats{}, err
	}
	rt, err := actors.NewRuntime(opts...)
	if err != nil {
		return Stats{}, fmt.Errorf("sensor: start runtime: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
		defer cancel()
		if cerr := rt.Close(cctx); cerr != nil {
			err = errors.Join(err, fmt.Errorf("sensor: close runtime: %w", cerr))
		}
	}()
	return runChainIn(ctx, rt, cfg, in, out, rejects)
}

// stage is what shutdown needs of a launched kernel.
type stage interface {
	ID() string
	Terminate(context.Context) error
}

// runChainIn is runChain in an existing runtime: it launches the four
// kernels there (under ids of their own, "sensor.N.parse" and so on) and
// terminates them before it returns.
func runChainIn(ctx context.Context, rt *actors.Runtime, cfg Config, in io.Reader, out, rejects io.Writer) (st Stats, err error) {
	if err := cfg.Validate(); err != nil {
		return Stats{}, err
	}
	cfg = cfg.withDefaults()
	p := newPools(cfg.ChunkBytes)
	prefix := fmt.Sprintf("sensor.%d.", runs.Add(1))
	// Each stage queues at most 2·RingCapacity messages: its ring and an
	// overflow of the same size (the default). (An overflow of 0 would be
	// tighter, but actors' admission can then lose the wake-up of a blocked
	// sender.)
	ring := []actors.KernelOption{actors.WithCapacity(cfg.RingCapacity)}
	with := func(more ...actors.KernelOption) []actors.KernelOption {
		return append(append([]actors.KernelOption(nil), ring...), more...)
	}

	// Tail first: a kernel's downstream must exist when it launches.
	var launched []stage
	defer func() {
		if serr := shutdown(ctx, launched); serr != nil {
			err = errors.Join(err, serr)
		}
	}()
	sinkK, err := launch(ctx, rt, actors.NewKernel(prefix+"sink", newSinkHandler(cfg, out, rejects),
		with(actors.WithOutputCapacity(cfg.RingCapacity))...))
	if err != nil {
		return Stats{}, err
	}
	launched = append(launched, sinkK)
	windowK, err := launch(ctx, rt, actors.NewKernel(prefix+"window", newWindowHandler(cfg, p),
		with(actors.WithDownstream(sinkK.ID()))...))
	if err != nil {
		return Stats{}, err
	}
	launched = append([]stage{windowK}, launched...)
	scaleHandler, scalePlacement := newScaleHandler(cfg), actors.PlacementCPU
	if cfg.DeviceScale {
		dev, err := launchDeviceScale(ctx, rt, prefix+"scale.device")
		if err != nil {
			return Stats{}, err
		}
		launched = append([]stage{dev}, launched...)
		scaleHandler, scalePlacement = newDeviceScaleHandler(cfg, dev), dev.Placement()
	}
	scaleK, err := launch(ctx, rt, actors.NewStatelessKernel(prefix+"scale", scaleHandler,
		with(actors.WithDownstream(windowK.ID()))...))
	if err != nil {
		return Stats{}, err
	}
	launched = append([]stage{scaleK}, launched...)
	parseK, err := launch(ctx, rt, actors.NewKernel(prefix+"parse", newParseHandler(cfg, p),
		with(actors.WithDownstream(scaleK.ID()))...))
	if err != nil {
		return Stats{}, err
	}
	launched = append([]stage{parseK}, launched...)
	if cfg.OnStage != nil {
		cfg.OnStage("parse", parseK.Placement())
		cfg.OnStage("scale", scalePlacement)
		cfg.OnStage("window", windowK.Placement())
		cfg.OnStage("sink", sinkK.Placement())
	}

	// The reader feeds parse; this goroutine reads the sink's progress until
	// the final chunk has come through every stage.
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	fed := make(chan error, 1)
	go func() {
		err := feed(rctx, parseK, in, p)
		if err != nil {
			cancel(err)
		}
		fed <- err
	}()
	for {
		pr, rerr := sinkK.Receive(rctx)
		if rerr != nil {
			if cause := context.Cause(rctx); cause != nil && rctx.Err() != nil && ctx.Err() == nil {
				rerr = cause // the reader failed
			}
			err = fmt.Errorf("sensor: %w", rerr)
			break
		}
		if pr.Done {
			st = pr.Stats
			break
		}
	}
	cancel(nil)
	if ctx.Err() == nil {
		// The reader has sent the final chunk, or is stopping: its Send is
		// cancelled. (When ctx has ended it may sit in a Read that nothing
		// can interrupt; it stops when that returns.)
		<-fed
	}
	// Drain what the sink still reports while the kernels terminate.
	go func() {
		for {
			if _, err := sinkK.Receive(context.Background()); errors.Is(err, actors.ErrEndOfStream) {
				return
			}
		}
	}()
	return st, err
}

// launch launches def in rt and opens its gate.
func launch[Req, Resp any](ctx context.Context, rt *actors.Runtime, def *actors.KernelDef[Req, Resp]) (*actors.Kernel[Req, Resp], error) {
	k, err := actors.Launch(ctx, rt, def)
	if err != nil {
		return nil, fmt.Errorf("sensor: launch %s: %w", def.ID(), err)
	}
	if err := k.Activate(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("sensor: activate %s: %w", def.ID(), err), k.Terminate(ctx))
	}
	return k, nil
}

// shutdown terminates the stages head first, so that each drains what the
// one before it forwarded, under a deadline of its own (ctx may be over).
func shutdown(ctx context.Context, stages []stage) error {
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	var errs []error
	for _, s := range stages {
		if err := s.Terminate(tctx); err != nil {
			errs = append(errs, fmt.Errorf("sensor: terminate %s: %w", s.ID(), err))
		}
	}
	return errors.Join(errs...)
}

// feed reads in and sends parse chunks of whole lines with the number of
// their first line, then the final chunk. Each Read's complete lines go out
// at once (a slow stream is not held back to fill a chunk); a line longer
// than a chunk grows the buffer. Send waits while parse's ring is full:
// this is where backpressure stops the reading.
func feed(ctx context.Context, parse *actors.Kernel[Chunk, *Batch], in io.Reader, p *pools) error {
	return feedFunc(ctx, func(c Chunk) error {
		if _, err := parse.Send(ctx, c); err != nil {
			return fmt.Errorf("send to %s: %w", parse.ID(), err)
		}
		return nil
	}, in, p)
}

// feedFunc is feed with the sending left to send.
func feedFunc(ctx context.Context, send func(Chunk) error, in io.Reader, p *pools) error {
	buf := p.chunk()
	line := int64(1)
	for {
		b := *buf
		if len(b) == cap(b) {
			b = append(b, make([]byte, cap(b))...)[:len(b)]
		}
		n, rerr := in.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		*buf = b
		if i := bytes.LastIndexByte(b[len(b)-n:], '\n'); i >= 0 {
			cut := len(b) - n + i + 1
			next := p.chunk()
			*next = append(*next, b[cut:]...)
			data := b[:cut]
			if err := send(Chunk{Data: data, Line: line, buf: buf}); err != nil {
				return err
			}
			line += int64(bytes.Count(data, []byte{'\n'}))
			buf = next
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return fmt.Errorf("read input: %w", rerr)
		}
	}
	if len(*buf) > 0 { // a last line without "\n"
		if err := send(Chunk{Data: *buf, Line: line, buf: buf}); err != nil {
			return err
		}
	} else {
		p.putChunk(buf)
	}
	return send(Chunk{Final: true})
}
