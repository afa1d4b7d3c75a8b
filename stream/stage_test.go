package stream

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ringactor/ringactor/gpu/ring"
)

func TestFlatMapEmitsZeroOrMany(t *testing.T) {
	ctx := testCtx(t)
	g := newGraph(t, WithBatch(4), WithWaitStrategy(ring.WaitStrategy{Yields: 1})) // park almost at once
	src := NewSource[string](g, "lines")
	split := FlatMap(g, "split", func(line string, out *Emitter[string]) error {
		for _, w := range strings.Fields(line) {
			out.Emit(w)
		}
		return nil
	})
	sink, ch := ToChan[string](g, "out", 0)
	if err := errors.Join(Connect(src, split), Connect(split, sink)); err != nil {
		t.Fatal(err)
	}
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	got := collect(ch)
	lines := []string{"a b c", "", "d", "   ", "e f g h i j k l m"}
	for _, l := range lines {
		if err := src.Send(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(strings.Join(lines, " "))
	if out := <-got; !slices.Equal(out, want) {
		t.Fatalf("got %q, want %q", out, want)
	}
	checkOutcomes(t, g)
	st := g.Stats()
	if st[1].In != uint64(len(lines)) || st[1].Out != uint64(len(want)) || st[2].Done != uint64(len(want)) {
		t.Fatalf("stats %+v", st)
	}
	if err := src.Send(ctx, "late"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Send after Drain: %v, want ErrClosed", err)
	}
}

func TestElementErrorIsItsOutcome(t *testing.T) {
	ctx := testCtx(t)
	var failures atomic.Int64
	g := newGraph(t, WithErrorHandler(func(e *StageError) {
		if e.Stage == "even" && e.Elements == 1 {
			failures.Add(1)
		}
	}))
	src := NewSource[int](g, "n")
	even := Map(g, "even", func(v int) (int, error) {
		if v%2 != 0 {
			return 0, errors.New("odd")
		}
		return v, nil
	})
	sink, ch := ToChan[int](g, "out", 0)
	Connect(src, even)
	Connect(even, sink)
	got := runInts(t, ctx, g, src, ch, 100)
	if out := got; len(out) != 50 {
		t.Fatalf("%d outputs, want 50", len(out))
	}
	if failures.Load() != 50 {
		t.Fatalf("%d failures reported, want 50", failures.Load())
	}
	checkOutcomes(t, g)
	var se *StageError
	if !errors.As(g.Err(), &se) || se.Stage != "even" {
		t.Fatalf("Err() = %v", g.Err())
	}
	_ = context.Background
}
