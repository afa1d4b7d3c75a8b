package stream

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
)

// TestFinalWatermarkOnce: in src (event time) → a → b → c → out, every
// stage's Watermark is called once per advance, and once with the final
// math.MaxInt64, chaining on or off. b and c used to get the final
// watermark twice (their upstream passed it on as an ordinary mark, then
// the end of stream delivered it again), so a stage that flushes on it
// emitted its output twice.
func TestFinalWatermarkOnce(t *testing.T) {
	for _, chaining := range []bool{true, false} {
		t.Run(fmt.Sprintf("chaining=%v", chaining), func(t *testing.T) {
			ctx := testCtx(t)
			g := newGraph(t, WithChaining(chaining), WithBatch(8))
			var mu sync.Mutex
			wms := map[string][]int64{}
			// A stage that passes its elements on, records its watermarks
			// and emits -1 when it sees the final one (its flush).
			recorder := func(name string) *Stage[int, int] {
				return NewStage(g, name, func() Funcs[int, int] {
					return Funcs[int, int]{
						Element: func(_ *Context, v int, out *Emitter[int]) error { out.Emit(v); return nil },
						Watermark: func(_ *Context, wm int64, out *Emitter[int]) error {
							mu.Lock()
							wms[name] = append(wms[name], wm)
							mu.Unlock()
							if wm == math.MaxInt64 {
								out.Emit(-1)
							}
							return nil
						},
					}
				})
			}
			src := NewSource[int](g, "src").EventTime(func(v int) int64 { return int64(v) }, 0)
			a, b, c := recorder("a"), recorder("b"), recorder("c")
			out, ch := ToChan[int](g, "out", 0)
			Connect(src, a)
			Connect(a, b)
			Connect(b, c)
			Connect(c, out)
			if err := g.Start(ctx); err != nil {
				t.Fatal(err)
			}
			got := collect(ch)
			for i := 0; i < 500; i += 7 {
				vs := []int{}
				for j := i; j < min(i+7, 500); j++ {
					vs = append(vs, j)
				}
				if err := src.SendAll(ctx, vs...); err != nil {
					t.Fatal(err)
				}
			}
			if err := g.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			flushes := 0
			for _, v := range <-got {
				if v == -1 {
					flushes++
				}
			}
			if flushes != 3 {
				t.Errorf("%d flushes reached the sink, want 3 (one per stage)", flushes)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, name := range []string{"a", "b", "c"} {
				w := wms[name]
				n := len(w)
				if n < 2 || w[n-1] != math.MaxInt64 || w[n-2] != 499 || slices.Index(w, math.MaxInt64) != n-1 {
					t.Errorf("%s: watermarks …%v, want one call per advance ending 499, MaxInt64", name, w[max(0, n-4):])
				}
				for i := 1; i < n; i++ {
					if w[i] <= w[i-1] {
						t.Errorf("%s: watermark %d after %d", name, w[i], w[i-1])
					}
				}
			}
			checkOutcomes(t, g)
		})
	}
}
