package stream

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
)

// Source is where elements enter a graph: an Outlet of T fed by Send from
// any goroutine (one at a time; concurrent Sends are serialised, and each
// goroutine's elements keep their order).
type Source[T any] struct {
	n      *node
	g      *Graph
	em     *Emitter[T]
	sem    chan struct{} // held by a Send or a drain
	closed atomic.Bool
	ended  bool // the end of stream has been sent (under sem)
}

// NewSource declares a source of elements of type T.
func NewSource[T any](g *Graph, name string) *Source[T] {
	s := &Source[T]{n: &node{name: name, par: 1}, g: g, sem: make(chan struct{}, 1)}
	st := &instStats{}
	st.wm.Store(math.MinInt64)
	s.n.stats = []*instStats{st}
	s.em = newEmitter[T](g, st)
	s.n.drainSource = s.drain
	s.n.closeSource = func() { s.closed.Store(true) }
	g.add(s.n)
	return s
}

// EventTime declares how the source assigns event time: ts(v) is an
// element's time, and the watermark is the largest time sent so far minus
// lateness, the allowed out-of-orderness (≥ 0). An element whose time is at
// or below the watermark when it arrives is late for event-time stages
// (Window).
func (s *Source[T]) EventTime(ts func(T) int64, lateness int64) *Source[T] {
	if ts == nil || lateness < 0 {
		s.g.mu.Lock()
		s.g.fail(fmt.Errorf("%w: source %q: event time needs a function and a lateness ≥ 0", ErrInvalidGraph, s.n.name))
		s.g.mu.Unlock()
		return s
	}
	s.em.timeOf, s.em.lateness = ts, lateness
	return s
}

// Name is the source's name.
func (s *Source[T]) Name() string { return s.n.name }

func (s *Source[T]) outNode() *node          { return s.n }
func (s *Source[T]) emitters() []*Emitter[T] { return []*Emitter[T]{s.em} }

// Send puts v into the graph, waiting (under ctx) while the first stage is
// full. An error means v was not admitted: ErrNotStarted, ErrClosed after
// Drain or Stop, or the end of ctx. Once admitted, v's outcome in each
// stage is counted in Stats and a failure reported to the error handler.
func (s *Source[T]) Send(ctx context.Context, v T) error {
	return s.SendAll(ctx, v)
}

// SendAll puts vs into the graph in order, in as few packets as the batch
// size allows. On an error, the elements before the failed packet were
// admitted.
func (s *Source[T]) SendAll(ctx context.Context, vs ...T) error {
	release, err := s.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	if s.closed.Load() || s.ended {
		return fmt.Errorf("stream: source %q: %w", s.n.name, ErrClosed)
	}
	stop := s.bind(ctx)
	defer stop()
	for _, v := range vs {
		s.em.Emit(v)
	}
	if err := s.em.flush(); err != nil {
		s.em.take()
		return err
	}
	return s.em.take()
}

// acquire takes the source for one Send or drain.
func (s *Source[T]) acquire(ctx context.Context) (func(), error) {
	s.g.mu.Lock()
	ph := s.g.phase
	s.g.mu.Unlock()
	if ph == building {
		return nil, fmt.Errorf("stream: source %q: %w", s.n.name, ErrNotStarted)
	}
	select {
	case s.sem <- struct{}{}:
		return func() { <-s.sem }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("stream: source %q: %w", s.n.name, ctx.Err())
	}
}

// bind makes the emitter's sends wait under ctx as well as the graph's
// context, until the returned stop.
func (s *Source[T]) bind(ctx context.Context) func() {
	g := s.g
	if ctx.Done() == nil {
		s.em.ctx = g.ctx
		return func() {}
	}
	c, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(g.ctx, cancel)
	s.em.ctx = c
	return func() {
		stop()
		cancel()
	}
}

// drain stops the source taking elements and sends the end of stream, once.
func (s *Source[T]) drain(ctx context.Context) error {
	release, err := s.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	s.closed.Store(true)
	if s.ended {
		return nil
	}
	stop := s.bind(ctx)
	defer stop()
	if err := s.em.end(); err != nil {
		return err
	}
	s.ended = true
	return nil
}
