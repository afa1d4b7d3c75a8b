package stream

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/gpu/ring"
)

// Defaults of a graph.
const (
	// DefaultCapacity is each stage instance's input ring, in packets.
	DefaultCapacity = 16
	// DefaultBatch is how many elements one packet carries at most.
	DefaultBatch = 256
	// MaxParallelism is the most instances a stage may have.
	MaxParallelism = 1024
	// MaxBatch is the largest WithBatch.
	MaxBatch = 1 << 20
)

// graphs numbers the graphs of the process, so that kernel ids are unique.
var graphs atomic.Uint64

// Option configures a Graph.
type Option func(*config)

type config struct {
	rt       *actors.Runtime
	rtOpts   []actors.Option
	capacity int
	batch    int
	onError  func(*StageError)
	log      *slog.Logger
	wait     *ring.WaitStrategy
	noChain  bool
}

// WithRuntime runs the graph's stages in rt (which the graph does not
// close). Without it, Start makes a runtime of its own, closed by Stop.
func WithRuntime(rt *actors.Runtime) Option { return func(c *config) { c.rt = rt } }

// WithRuntimeOptions are the options of the runtime the graph makes when it
// is given none.
func WithRuntimeOptions(opts ...actors.Option) Option {
	return func(c *config) { c.rtOpts = append(c.rtOpts, opts...) }
}

// WithCapacity sets each stage instance's input ring, in packets: a power of
// two, at least 2 (default DefaultCapacity). With the ring's overflow of as
// many, an instance holds at most 2·capacity·batch elements it has not
// handled.
func WithCapacity(n int) Option { return func(c *config) { c.capacity = n } }

// WithBatch sets how many elements one packet carries at most (default
// DefaultBatch). An emitter sends its packet when it is full, and at the end
// of every packet its stage handles.
func WithBatch(n int) Option { return func(c *config) { c.batch = n } }

// WithErrorHandler receives every failed element's *StageError, from the
// failing stage's loop: it must not block. Without one, failures are counted
// (Stats) and the first is kept (Err).
func WithErrorHandler(fn func(*StageError)) Option { return func(c *config) { c.onError = fn } }

// WithWaitStrategy sets the idle strategy of every stage instance's loop
// (default: actors' default, ring.DefaultWaitStrategy).
func WithWaitStrategy(w ring.WaitStrategy) Option { return func(c *config) { c.wait = &w } }

// WithLogger sets the graph's logger (default: slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// phase is where a graph is in its life.
type phase uint8

const (
	building phase = iota
	started
	draining
	drained
	stopped
)

// Graph is a streaming job: sources, stages and sinks joined by typed
// edges. Declare nodes with NewSource, NewStage (and its shorthands),
// NewKernelStage, Window, ToFunc and ToChan, join them with Connect, then
// Start, feed the sources, Drain and Stop. Every stage instance is a ring
// kernel of package actors, supervised by the runtime's orchestrator.
type Graph struct {
	cfg  config
	id   string
	seed maphash.Seed

	mu    sync.Mutex
	phase phase
	nodes []*node
	names map[string]bool
	err   error                // the first build error
	pools map[reflect.Type]any // *bufPool[T] by T (poolOf)

	rt     *actors.Runtime
	ownRT  bool
	ctx    context.Context // the running graph's; cancelled by Stop
	cancel context.CancelFunc
	first  atomic.Pointer[StageError]
	tel    *telemetryReg
}

// New declares an empty graph.
func New(opts ...Option) *Graph {
	c := config{capacity: DefaultCapacity, batch: DefaultBatch}
	for _, o := range opts {
		o(&c)
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	g := &Graph{cfg: c, id: fmt.Sprintf("stream.%d", graphs.Add(1)), seed: maphash.MakeSeed(), names: map[string]bool{}}
	switch {
	case !ring.ValidCapacity(c.capacity) || c.capacity < 2:
		g.err = fmt.Errorf("%w: capacity %d, want a power of two, at least 2", ErrInvalidGraph, c.capacity)
	case c.batch < 1 || c.batch > MaxBatch:
		g.err = fmt.Errorf("%w: batch %d, want 1 to %d", ErrInvalidGraph, c.batch, MaxBatch)
	}
	return g
}

// Err returns the first build error, or after Start the first failed
// element's *StageError (nil when none).
func (g *Graph) Err() error {
	g.mu.Lock()
	err := g.err
	g.mu.Unlock()
	if err != nil {
		return err
	}
	if e := g.first.Load(); e != nil {
		return e
	}
	return nil
}

// fail records a build error (the first one wins) and returns it.
func (g *Graph) fail(err error) error {
	if g.err == nil {
		g.err = err
	}
	return err
}

// add declares node n; the caller holds no lock.
func (g *Graph) add(n *node) {
	g.mu.Lock()
	defer g.mu.Unlock()
	n.g = g
	switch {
	case g.phase != building:
		g.fail(fmt.Errorf("%w: cannot add %q", ErrStarted, n.name))
		return
	case n.name == "":
		g.fail(fmt.Errorf("%w: empty node name", ErrInvalidGraph))
		return
	case g.names[n.name]:
		g.fail(fmt.Errorf("%w: two nodes named %q", ErrInvalidGraph, n.name))
		return
	case n.par < 1 || n.par > MaxParallelism:
		g.fail(fmt.Errorf("%w: node %q: parallelism %d, want 1 to %d", ErrInvalidGraph, n.name, n.par, MaxParallelism))
		return
	}
	g.names[n.name] = true
	n.index = len(g.nodes)
	g.nodes = append(g.nodes, n)
}

// report accounts for a failed element.
func (g *Graph) report(e *StageError) {
	g.first.CompareAndSwap(nil, e)
	if g.cfg.onError != nil {
		g.cfg.onError(e)
	}
}

// kernelID names instance i of node n.
func (g *Graph) kernelID(n *node, i int) string { return fmt.Sprintf("%s/%s/%d", g.id, n.name, i) }

// Start launches the graph: it runs every stage's function factory, then
// launches every stage instance's ring kernel (sinks first, so that each
// stage's downstream exists), then wires the edges and opens the gates. A
// build error (a cycle, an invalid declaration, an inlet without an edge, a
// factory that panics or returns no Element) is returned before anything is
// launched, and kept (Err). On a later failure (a launch fails or panics)
// the kernels launched so far are terminated and a runtime Start made is
// closed.
func (g *Graph) Start(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err != nil {
		return g.err
	}
	if g.phase != building {
		return ErrStarted
	}
	order, err := g.topo()
	if err != nil {
		return g.fail(err)
	}
	for _, n := range order {
		if n.needsInput && n.senders == 0 {
			return g.fail(fmt.Errorf("%w: %q has no input edge", ErrInvalidGraph, n.name))
		}
	}
	g.chain(order)
	for _, n := range order {
		if n.prepare != nil {
			if err := n.prepare(); err != nil {
				return g.fail(err)
			}
		}
	}
	if g.rt = g.cfg.rt; g.rt == nil {
		rt, err := actors.NewRuntime(g.cfg.rtOpts...)
		if err != nil {
			return fmt.Errorf("stream: start a runtime: %w", err)
		}
		g.rt, g.ownRT = rt, true
	}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	var launched []*node
	undo := func(err error) error {
		g.cancel()
		for _, n := range launched {
			if n.stop != nil {
				err = errors.Join(err, n.stop(context.WithoutCancel(ctx)))
			}
		}
		if g.ownRT {
			err = errors.Join(err, g.rt.Close(context.WithoutCancel(ctx)))
		}
		return err
	}
	for i := len(order) - 1; i >= 0; i-- { // tail first
		n := order[i]
		launched = append([]*node{n}, launched...) // a failed launch undoes its own instances too
		if err := launchNode(ctx, n); err != nil {
			return undo(fmt.Errorf("stream: start %q: %w", n.name, err))
		}
	}
	for _, n := range order {
		for _, b := range n.bind {
			b()
		}
	}
	g.tel = registerTelemetry(g)
	g.phase = started
	register(g.rt, g)
	return nil
}

// launchNode launches n's kernels, turning a panic into an error (Start
// then undoes what was launched).
func launchNode(ctx context.Context, n *node) (err error) {
	if n.launch == nil {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", ErrPanic, p)
		}
	}()
	return n.launch(ctx)
}

// topo orders the nodes so that every edge points forward, or reports a cycle.
func (g *Graph) topo() ([]*node, error) {
	indeg := make([]int, len(g.nodes))
	for _, n := range g.nodes {
		for _, s := range n.succ {
			indeg[s.index]++
		}
	}
	var order, ready []*node
	for _, n := range g.nodes {
		if indeg[n.index] == 0 {
			ready = append(ready, n)
		}
	}
	for len(ready) > 0 {
		n := ready[0]
		ready = ready[1:]
		order = append(order, n)
		for _, s := range n.succ {
			if indeg[s.index]--; indeg[s.index] == 0 {
				ready = append(ready, s)
			}
		}
	}
	if len(order) != len(g.nodes) {
		return nil, ErrCycle
	}
	return order, nil
}

// Drain ends the stream: every source stops taking elements (Send fails with
// ErrClosed), what they sent flows through the graph, each stage's final
// watermark closes what event time holds open (windows), each stage's Drain
// function flushes the rest, and Drain returns once every sink has taken
// everything. ctx bounds the wait; the graph must still be stopped.
func (g *Graph) Drain(ctx context.Context) error {
	g.mu.Lock()
	switch g.phase {
	case building:
		g.mu.Unlock()
		return ErrNotStarted
	case stopped:
		g.mu.Unlock()
		return ErrClosed
	case started:
		g.phase = draining
	}
	nodes := g.nodes
	g.mu.Unlock()
	for _, n := range nodes {
		if n.drainSource != nil {
			if err := n.drainSource(ctx); err != nil {
				return fmt.Errorf("stream: drain %q: %w", n.name, err)
			}
		}
	}
	for _, n := range nodes {
		for _, d := range n.drained {
			select {
			case <-d:
			case <-ctx.Done():
				return fmt.Errorf("stream: drain: %w", ctx.Err())
			case <-g.ctx.Done():
				return fmt.Errorf("stream: drain: %w", ErrStopped)
			}
		}
	}
	g.mu.Lock()
	if g.phase == draining {
		g.phase = drained
	}
	g.mu.Unlock()
	return nil
}

// Stop stops the graph: what is still in flight fails with ErrStopped (after
// Drain nothing is), every stage's ring kernel is terminated (sources
// first), channel sinks are closed, and a runtime the graph made is closed.
// A second Stop does nothing.
func (g *Graph) Stop(ctx context.Context) error {
	g.mu.Lock()
	if g.phase == stopped {
		g.mu.Unlock()
		return nil
	}
	if g.phase == building {
		g.phase = stopped
		g.mu.Unlock()
		return nil
	}
	g.phase = stopped
	nodes := g.nodes
	g.mu.Unlock()
	unregister(g.rt, g)
	for _, n := range nodes {
		if n.closeSource != nil {
			n.closeSource()
		}
	}
	g.cancel()
	order, _ := g.topo()
	var errs []error
	for _, n := range order {
		if n.stop != nil {
			errs = append(errs, n.stop(ctx))
		}
	}
	g.tel.unregister()
	if g.ownRT {
		errs = append(errs, g.rt.Close(ctx))
	}
	return errors.Join(errs...)
}

// Runtime returns the runtime the graph's kernels run in (nil before Start).
func (g *Graph) Runtime() *actors.Runtime {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.rt
}
