package stream

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.uber.org/goleak"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/lifecycle"
)

// leakCheck returns a check that no goroutine started since the call is
// still running (Proto.Actor's dead-letter throttle excepted).
func leakCheck(t *testing.T) func() {
	t.Helper()
	before := goleak.IgnoreCurrent()
	return func() {
		t.Helper()
		goleak.VerifyNone(t, before, goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"))
	}
}

// quietRuntime is a runtime for a graph to run in, closed by the caller.
func quietRuntime(t *testing.T) *actors.Runtime {
	t.Helper()
	rt, err := actors.NewRuntime(actors.WithLogger(actors.DiscardLogger()), actors.WithTelemetry(false))
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// pipeline3 declares src → a → b → c → out, where b's functions are made
// by factory, and returns the source, the stage b and the sink's channel.
func pipeline3(g *Graph, factory func() Funcs[int, int], opts ...StageOption) (*Source[int], *Stage[int, int], <-chan int) {
	src := NewSource[int](g, "src")
	id := func(v int) (int, error) { return v, nil }
	a := Map(g, "a", id)
	b := NewStage(g, "b", factory, opts...)
	c := Map(g, "c", id)
	out, ch := ToChan[int](g, "out", 0)
	Connect(src, a)
	Connect(a, b)
	Connect(b, c)
	Connect(c, out)
	return src, b, ch
}

// startFails runs a Start that must fail with every target, in a runtime of
// the graph's own (own) or one given to it, and checks that nothing was
// left behind: Stop returns nil, a given runtime holds no kernel that is
// not terminated, and no
// goroutine started by the graph is still running.
func startFails(t *testing.T, own bool, declare func(g *Graph) *Source[int], targets ...error) {
	t.Helper()
	ctx := testCtx(t)
	check := leakCheck(t)
	opts := []Option{WithRuntimeOptions(actors.WithLogger(actors.DiscardLogger()), actors.WithTelemetry(false))}
	var rt *actors.Runtime
	if !own {
		rt = quietRuntime(t)
		opts = append(opts, WithRuntime(rt))
	}
	g := New(opts...)
	src := declare(g)
	err := g.Start(ctx)
	for _, target := range targets {
		if !errors.Is(err, target) {
			t.Fatalf("Start: %v, want %v", err, target)
		}
	}
	if err := src.Send(ctx, 1); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("Send after the failed Start: %v, want ErrNotStarted", err)
	}
	if err := g.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if rt != nil {
		for _, id := range rt.Kernels() { // (a terminated kernel stays registered)
			if st, err := rt.Status(id); err != nil || st.State != lifecycle.Terminated {
				t.Fatalf("kernel %s left %v (%v)", id, st.State, err)
			}
		}
		if err := rt.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	check()
}

// TestPanickingFactoryFailsStart: a stage factory that panics (here on the
// stage's second instance, after its first was built) makes Start return
// ErrInvalidGraph and ErrPanic before anything is launched; the error is
// kept (Err, a second Start), Stop returns nil, and nothing keeps running.
func TestPanickingFactoryFailsStart(t *testing.T) {
	for _, own := range []bool{true, false} {
		t.Run(fmt.Sprintf("own runtime=%v", own), func(t *testing.T) {
			var g *Graph
			startFails(t, own, func(gg *Graph) *Source[int] {
				g = gg
				built := 0
				src, _, _ := pipeline3(g, func() Funcs[int, int] {
					if built++; built == 2 {
						panic("no state for you")
					}
					return Funcs[int, int]{Element: func(_ *Context, v int, out *Emitter[int]) error { out.Emit(v); return nil }}
				}, Parallelism(2))
				return src
			}, ErrInvalidGraph, ErrPanic)
			if err := g.Err(); !errors.Is(err, ErrInvalidGraph) || !errors.Is(err, ErrPanic) {
				t.Fatalf("Err: %v", err)
			}
			if err := g.Start(testCtx(t)); !errors.Is(err, ErrInvalidGraph) {
				t.Fatalf("second Start: %v", err)
			}
		})
	}
}

// TestLaunchPanicUndoesStart: a panic while a node launches (after the
// stages downstream of it have launched their kernels) is Start's error
// (ErrPanic), and the kernels launched so far are terminated, a runtime of
// the graph's own closed: Stop returns nil and no goroutine leaks.
func TestLaunchPanicUndoesStart(t *testing.T) {
	for _, own := range []bool{true, false} {
		t.Run(fmt.Sprintf("own runtime=%v", own), func(t *testing.T) {
			startFails(t, own, func(g *Graph) *Source[int] {
				src, b, _ := pipeline3(g, func() Funcs[int, int] {
					return Funcs[int, int]{Element: func(_ *Context, v int, out *Emitter[int]) error { out.Emit(v); return nil }}
				}, Parallelism(2)) // (b, c and out are not chained: each has kernels of its own)
				launch := b.n.launch
				b.n.launch = func(ctx context.Context) error {
					if err := launch(ctx); err != nil {
						return err
					}
					panic("launch went wrong")
				}
				return src
			}, ErrPanic)
		})
	}
}

// TestStageWithoutElementIsABuildError: Funcs without Element (documented
// as required) fails Start with ErrInvalidGraph before anything is
// launched; it used to be accepted, and every element then failed with
// ErrPanic (a nil function).
func TestStageWithoutElementIsABuildError(t *testing.T) {
	startFails(t, true, func(g *Graph) *Source[int] {
		src, _, _ := pipeline3(g, func() Funcs[int, int] {
			return Funcs[int, int]{Flush: func(*Context, *Emitter[int]) error { return nil }}
		})
		return src
	}, ErrInvalidGraph)
}
