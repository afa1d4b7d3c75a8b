package stream

import (
	"slices"
	"testing"

	"github.com/ringactor/ringactor/gpu/ring"
)

// TestEmitAll emits runs of every length around the batch size with
// EmitAll: to one sink (the bulk path) and to two (element by element,
// each sink gets everything), in order, with the emitted count in Stats.
func TestEmitAll(t *testing.T) {
	for _, sinks := range []int{1, 2} {
		t.Run(map[int]string{1: "one target", 2: "two targets"}[sinks], func(t *testing.T) {
			ctx := testCtx(t)
			g := newGraph(t, WithBatch(4), WithCapacity(2), WithWaitStrategy(ring.WaitStrategy{Yields: 1}))
			src := NewSource[int](g, "n")
			next := 0
			runs := FlatMap(g, "runs", func(n int, out *Emitter[int]) error {
				vs := make([]int, n)
				for i := range vs {
					vs[i] = next
					next++
				}
				out.EmitAll(vs...)
				clear(vs) // EmitAll keeps none of vs
				return nil
			})
			got := startFanOut(t, ctx, g, src, runs, sinks)
			lens := []int{0, 1, 3, 4, 5, 8, 9, 0, 17, 2}
			if err := src.SendAll(ctx, lens...); err != nil {
				t.Fatal(err)
			}
			if err := g.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			want := make([]int, next)
			for i := range want {
				want[i] = i
			}
			for i, ch := range got {
				if out := <-ch; !slices.Equal(out, want) {
					t.Errorf("sink %d got %v, want %v", i, out, want)
				}
			}
			checkOutcomes(t, g)
			if st := g.Stats(); st[1].Out != uint64(next) {
				t.Errorf("runs emitted %d, want %d", st[1].Out, next)
			}
		})
	}
}
