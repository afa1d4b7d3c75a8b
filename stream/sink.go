package stream

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// Sink is where elements leave a graph: an Inlet of T.
type Sink[T any] struct {
	s *Stage[T, struct{}]
}

// Name is the sink's name.
func (k *Sink[T]) Name() string { return k.s.n.name }

func (k *Sink[T]) inNode() *node                   { return k.s.n }
func (k *Sink[T]) targets(from int32) []*target[T] { return k.s.targets(from) }

// ToFunc declares a sink that calls fn with every element, on its ring
// kernel's loop (one call at a time per instance). fn's error is the
// element's outcome. ctx is the graph's, cancelled by Stop: a blocking fn
// should honour it.
func ToFunc[T any](g *Graph, name string, fn func(ctx context.Context, v T) error, opts ...StageOption) *Sink[T] {
	var f func() Funcs[T, struct{}]
	if fn != nil {
		f = func() Funcs[T, struct{}] {
			return Funcs[T, struct{}]{Element: func(c *Context, v T, _ *Emitter[struct{}]) error { return fn(c.ctx, v) }}
		}
	}
	st := NewStage(g, name, f, opts...)
	st.n.sink = true
	return &Sink[T]{s: st}
}

// ToChan declares a sink that sends every element to the channel it
// returns, which holds buf elements. A full channel holds the sink back,
// and through it the graph: read it while the graph runs, also during
// Drain. The channel is closed once every element has been delivered after
// Drain, or by Stop.
func ToChan[T any](g *Graph, name string, buf int, opts ...StageOption) (*Sink[T], <-chan T) {
	ch := make(chan T, max(buf, 0))
	var once sync.Once
	closeCh := func() { once.Do(func() { close(ch) }) }
	var left atomic.Int64
	st := NewStage(g, name, func() Funcs[T, struct{}] {
		left.Add(1)
		return Funcs[T, struct{}]{
			Element: func(c *Context, v T, _ *Emitter[struct{}]) error {
				select {
				case ch <- v:
					return nil
				default:
				}
				select {
				case ch <- v:
					return nil
				case <-c.ctx.Done():
					return fmt.Errorf("stream: sink %q: %w", c.stage, ErrStopped)
				}
			},
			Drain: func(*Context, *Emitter[struct{}]) error {
				if left.Add(-1) == 0 {
					closeCh()
				}
				return nil
			},
		}
	}, opts...)
	st.n.sink = true
	stop := st.n.stop
	st.n.stop = func(ctx context.Context) error {
		err := stop(ctx)
		closeCh()
		return err
	}
	return &Sink[T]{s: st}, ch
}
