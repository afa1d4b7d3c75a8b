package stream

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/ringactor/ringactor/gpu/ring"
)

// pair is a test element that Next's callers fill field by field.
type pair struct{ A, B int }

// TestNextWritesInPlace emits runs of every length around the batch size
// with Next, mixed with Emit and EmitAll, to one sink (in the packet), to
// two (aside, then copied to each) and to one through an output with event
// time (aside): every sink gets every element in order, each Next slot
// starts at the zero value even where the recycled packet array held an
// element before, and Stats counts every element emitted.
func TestNextWritesInPlace(t *testing.T) {
	for _, tc := range []struct {
		name      string
		sinks     int
		eventTime bool
		batch     int
	}{
		{"one target", 1, false, 4}, {"two targets", 2, false, 4}, {"event time", 1, true, 4},
		{"one target, batch 1", 1, false, 1}, {"one target, batch 7", 1, false, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			g := newGraph(t, WithBatch(tc.batch), WithCapacity(2), WithWaitStrategy(ring.WaitStrategy{Yields: 1}))
			src := NewSource[int](g, "n")
			next := 0
			var want []pair // what runs emitted, in order
			element := func(n int, out *Emitter[pair]) error {
				for i := range n {
					switch i % 5 {
					case 3:
						// B set: had a recycled packet array's elements
						// leaked into Next's slots, a later check would see it.
						out.Emit(pair{A: next, B: -1})
						want = append(want, pair{A: next, B: -1})
					case 4:
						out.EmitAll(pair{A: next}, pair{A: next + 1, B: -1})
						want = append(want, pair{A: next}, pair{A: next + 1, B: -1})
						next++
					default:
						p := out.Next()
						if p.B != 0 {
							return fmt.Errorf("slot %d holds %+v, want the zero value", next, *p)
						}
						p.A = next // B stays zero
						want = append(want, pair{A: next})
						if i%5 == 1 {
							_ = out.Watermark() // ends the slot, as any call does
						}
					}
					next++
				}
				*out.Next() = pair{A: next, B: -2}
				want = append(want, pair{A: next, B: -2})
				next++
				return nil
			}
			runs := NewStage(g, "runs", func() Funcs[int, pair] {
				return Funcs[int, pair]{
					Element: func(_ *Context, n int, out *Emitter[pair]) error { return element(n, out) },
					Drain: func(_ *Context, out *Emitter[pair]) error {
						// Written in place at the end of the stream: it
						// goes with the end, in the last packet.
						*out.Next() = pair{A: next, B: -3}
						want = append(want, pair{A: next, B: -3})
						next++
						return nil
					},
				}
			})
			if tc.eventTime {
				runs.EventTime(func(p pair) int64 { return int64(p.A) }, 2)
			}
			got := startFanOut(t, ctx, g, src, runs, tc.sinks)
			lens := []int{0, 1, 3, 4, 5, 8, 9, 0, 17, 2, 40}
			if err := src.SendAll(ctx, lens...); err != nil {
				t.Fatal(err)
			}
			if err := g.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			if err := g.Err(); err != nil {
				t.Fatal(err)
			}
			for i, ch := range got {
				if out := <-ch; !slices.Equal(out, want) {
					t.Errorf("sink %d got %v, want %v", i, out, want)
				}
			}
			checkOutcomes(t, g)
			if st := g.Stats(); st[1].Out != uint64(next) || st[1].Done != uint64(len(lens)) {
				t.Errorf("runs: %+v, want %d emitted, %d done", st[1], next, len(lens))
			}
		})
	}
}

// TestNextAfterStop: a stage that writes its outputs with Next while the
// graph stops under it (its sink never reads) fails the elements whose
// packets could not be sent, with ErrStopped, and every element admitted
// has exactly one outcome.
func TestNextAfterStop(t *testing.T) {
	for _, chained := range []bool{false, true} {
		t.Run(fmt.Sprintf("chained=%v", chained), func(t *testing.T) {
			ctx := testCtx(t)
			var mu sync.Mutex
			var stopped int
			g := newGraph(t, WithCapacity(2), WithBatch(3), WithChaining(chained), WithErrorHandler(func(e *StageError) {
				if errors.Is(e, ErrStopped) {
					mu.Lock()
					stopped++
					mu.Unlock()
				}
			}))
			src := NewSource[int](g, "n")
			m := FlatMap(g, "m", func(v int, out *Emitter[int]) error {
				for i := range 5 {
					*out.Next() = v*10 + i
				}
				return nil
			}).StartChain()
			out, _ := ToChan[int](g, "out", 0) // never read
			Connect(src, m)
			Connect(m, out)
			_ = sendUntilStopped(t, ctx, g, src, 2)
			checkOutcomes(t, g)
			mu.Lock()
			defer mu.Unlock()
			if stopped == 0 {
				t.Fatal("no element failed with ErrStopped")
			}
		})
	}
}
