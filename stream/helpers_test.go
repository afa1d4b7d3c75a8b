package stream

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/internal/testutil/hangguard"
	"github.com/ringactor/ringactor/messages"
)

func TestMain(m *testing.M) {
	// Proto.Actor's dead-letter throttle goroutine ends by itself a second
	// after a dead letter; it is not a leak (see actors' TestMain).
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"))
}

// word is a test element with a key.
type word struct {
	W  string
	TS int64
}

func init() {
	messages.MustRegister[word]("stream.test.word")
}

// testCtx is the test's hang guard (hangguard.Context): no wall-clock
// deadline of its own.
func testCtx(t testing.TB) context.Context { return hangguard.Context(t) }

// newGraph declares a graph in a quiet runtime of its own, stopped at the
// end of the test.
func newGraph(t testing.TB, opts ...Option) *Graph {
	t.Helper()
	g := New(append([]Option{WithRuntimeOptions(actors.WithLogger(actors.DiscardLogger()), actors.WithTelemetry(false))}, opts...)...)
	t.Cleanup(func() {
		if err := g.Stop(context.Background()); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return g
}

// collect reads ch until it is closed.
// startFanOut connects src to stage and stage to n ToChan sinks (outa,
// outb, …), starts g, and returns what each sink receives, once the graph
// has drained.
func startFanOut[In, Out any](t *testing.T, ctx context.Context, g *Graph, src *Source[In], stage *Stage[In, Out], n int) []<-chan []Out {
	t.Helper()
	errs := []error{Connect(src, stage)}
	var got []<-chan []Out
	for i := range n {
		sink, ch := ToChan[Out](g, "out"+string(rune('a'+i)), 0)
		errs = append(errs, Connect(stage, sink))
		got = append(got, collect(ch))
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return got
}

func collect[T any](ch <-chan T) <-chan []T {
	done := make(chan []T, 1)
	go func() {
		var out []T
		for v := range ch {
			out = append(out, v)
		}
		done <- out
	}()
	return done
}

// checkOutcomes asserts that every element admitted into every stage got
// exactly one outcome.
func checkOutcomes(t *testing.T, g *Graph) {
	t.Helper()
	for _, s := range g.Stats() {
		if s.In != s.Done+s.Failed && s.Stage != "" && s.In != 0 {
			t.Errorf("%s[%d]: in %d ≠ done %d + failed %d", s.Stage, s.Instance, s.In, s.Done, s.Failed)
		}
	}
}

// runInts starts g, sends 0..n-1 into src, drains g and returns what the
// channel sink ch (the graph's output) received.
func runInts[T any](t *testing.T, ctx context.Context, g *Graph, src *Source[int], ch <-chan T, n int) []T {
	t.Helper()
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	got := collect(ch)
	for i := range n {
		if err := src.Send(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	return <-got
}

// sendWindowed starts g, sends in into src step elements at a time, drains
// g, checks that every admitted element has an outcome, and returns what
// the window's output and late sinks (ch, lateCh) received.
func sendWindowed(t *testing.T, ctx context.Context, g *Graph, src *Source[word], ch <-chan count, lateCh <-chan Late[word], in []word, step int) ([]count, []Late[word]) {
	t.Helper()
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	gotWins, gotLate := collect(ch), collect(lateCh)
	for i := 0; i < len(in); i += step {
		if err := src.SendAll(ctx, in[i:min(i+step, len(in))]...); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	wins, late := <-gotWins, <-gotLate
	checkOutcomes(t, g)
	return wins, late
}

// sendUntilStopped starts g, sends 0, 1, 2… from a goroutine into src until
// a Send fails, stops g once the stage at index sink has taken an element,
// and returns the error that ended the sends.
func sendUntilStopped(t *testing.T, ctx context.Context, g *Graph, src *Source[int], sink int) error {
	t.Helper()
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	blocked := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			if err := src.Send(ctx, i); err != nil {
				blocked <- err
				return
			}
		}
	}()
	for g.Stats()[sink].In == 0 {
		time.Sleep(time.Millisecond) // polling a counter, not synchronising
	}
	if err := g.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	return <-blocked
}

// countingTicker is a stage's functions that count elements and emit the
// count on a processing-time timer tagged tag, armed 1 ms after the first
// element since the last firing; with afterDrain, the drain sets a timer
// (tag+1) that must never fire.
func countingTicker(tag uint64, afterDrain bool) func() Funcs[int, int] {
	return func() Funcs[int, int] {
		n, armed := 0, false
		f := Funcs[int, int]{
			Element: func(c *Context, _ int, _ *Emitter[int]) error {
				n++
				if !armed {
					armed = true
					c.SetTimer(time.Now().Add(time.Millisecond), tag)
				}
				return nil
			},
			Timer: func(_ *Context, tm Timer, out *Emitter[int]) error {
				if tm.Tag != tag {
					return fmt.Errorf("tag %d", tm.Tag)
				}
				armed = false
				out.Emit(n)
				return nil
			},
		}
		if afterDrain {
			f.Drain = func(c *Context, _ *Emitter[int]) error {
				c.SetTimer(time.Now(), tag+1) // after the drain: never fires
				return nil
			}
		}
		return f
	}
}
