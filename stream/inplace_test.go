package stream

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// inPlaceRun is what one run of the in-place test graph produced.
type inPlaceRun struct {
	wins  []count
	late  []Late[word]
	stats map[string]StageStats
	runs  []int // the lengths of the runs MapInPlace's function got
}

// inPlaceVariant is one way to run the in-place test graph.
type inPlaceVariant struct {
	inPlace   bool // MapInPlace, else Map
	stageTime bool // event time assigned on the stage's output, else at the source
	batchTime bool // with stageTime: Stage.EventTimes rather than EventTime
	par       int  // the window stage's parallelism (KeyBy when > 1)
}

// runInPlaceGraph runs source → upper (MapInPlace or Map) → window (late
// side output) → sinks and returns what it produced, windows and late
// elements sorted.
func runInPlaceGraph(t *testing.T, in []word, v inPlaceVariant, opts ...Option) inPlaceRun {
	t.Helper()
	ctx := testCtx(t)
	var mu sync.Mutex
	var r inPlaceRun
	g := newGraph(t, append([]Option{WithBatch(16), WithCapacity(2)}, opts...)...)
	src := NewSource[word](g, "words")
	var st *Stage[word, word]
	if v.inPlace {
		st = MapInPlace(g, "upper", func(ws []word) error {
			mu.Lock()
			r.runs = append(r.runs, len(ws))
			mu.Unlock()
			for i := range ws {
				ws[i].W = strings.ToUpper(ws[i].W)
			}
			return nil
		})
	} else {
		st = Map(g, "upper", func(w word) (word, error) {
			w.W = strings.ToUpper(w.W)
			return w, nil
		})
	}
	switch {
	case v.stageTime && v.batchTime:
		st.EventTimes(func(ws []word, ts []int64) {
			for i := range ws {
				ts[i] = ws[i].TS
			}
		}, 5)
	case v.stageTime:
		st.EventTime(func(w word) int64 { return w.TS }, 5)
	default:
		src.EventTime(func(w word) int64 { return w.TS }, 5)
	}
	win, late := Window(g, "count", countSpec(20, 10), Parallelism(max(v.par, 1)))
	out, ch := ToChan[count](g, "out", 0)
	lateOut, lateCh := ToChan[Late[word]](g, "late", 0)
	var route []Router[word]
	if v.par > 1 {
		route = append(route, KeyBy(func(w word) string { return w.W }))
	}
	for _, err := range []error{Connect(src, st), Connect(st, win, route...), Connect(win, out), Connect(late, lateOut)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	r.wins, r.late = sendWindowed(t, ctx, g, src, ch, lateCh, in, 37)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(r.wins, func(a, b count) int { return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.Key, b.Key)) })
	slices.SortFunc(r.late, func(a, b Late[word]) int { return cmp.Compare(a.Value.TS, b.Value.TS) })
	r.stats = map[string]StageStats{}
	for _, s := range g.Stats() {
		if s.Instance == 0 {
			r.stats[s.Stage] = s
		}
	}
	return r
}

// TestMapInPlaceAsMap: a MapInPlace stage gives downstream what Map gives,
// the same elements, late ones and watermarks (the same windows close with
// the same counts), with chaining on and off, with event time at the
// source or on the stage's output (EventTime or EventTimes), and to a
// keyed parallel stage (where it goes element by element); where its
// output has one target its function gets whole packets.
func TestMapInPlaceAsMap(t *testing.T) {
	in := words(3000, []string{"a", "b", "c", "d", "e"})
	for i := range in {
		in[i].TS -= int64((i * 7919) % 61) // some are late
	}
	for _, v := range []inPlaceVariant{{}, {stageTime: true}, {par: 3}, {stageTime: true, par: 3}, {stageTime: true, batchTime: true}, {stageTime: true, batchTime: true, par: 3}} {
		mv := v
		mv.batchTime = false // Map with EventTime: what the others must give
		want := runInPlaceGraph(t, in, mv)
		if len(want.wins) == 0 || len(want.late) == 0 {
			t.Fatalf("%+v: %d windows, %d late: the test shows nothing", v, len(want.wins), len(want.late))
		}
		for _, chain := range []bool{true, false} {
			name := fmt.Sprintf("%+v chaining %v", v, chain)
			iv := v
			iv.inPlace = true
			got := runInPlaceGraph(t, in, iv, WithChaining(chain))
			if !slices.Equal(got.wins, want.wins) {
				t.Fatalf("%s: %d windows, Map gave %d (or other counts)", name, len(got.wins), len(want.wins))
			}
			if !slices.Equal(got.late, want.late) {
				t.Fatalf("%s: %d late, Map gave %d (or other ones)", name, len(got.late), len(want.late))
			}
			for _, s := range []string{"upper", "count"} {
				g, w := got.stats[s], want.stats[s]
				if g.In != w.In || g.Done != w.Done || g.Out != w.Out || g.Late != w.Late || g.Failed != 0 {
					t.Fatalf("%s: %s stats %+v, Map's %+v", name, s, g, w)
				}
			}
			if n := slices.Max(got.runs); (v.par > 1) != (n == 1) {
				t.Fatalf("%s: longest run %d: whole packets %v where the output has %d targets", name, n, n > 1, max(v.par, 1))
			}
		}
	}
}

// TestMapInPlaceFailsItsRun: an error or a panic of MapInPlace's function
// fails every element of the run it was given — counted, reported once
// with their number, none of them emitted — and the others go on.
func TestMapInPlaceFailsItsRun(t *testing.T) {
	for _, panics := range []bool{false, true} {
		ctx := testCtx(t)
		var mu sync.Mutex
		var reported []*StageError
		var failedRuns, okRuns int
		var failedElems int
		g := newGraph(t, WithBatch(8), WithErrorHandler(func(e *StageError) {
			mu.Lock()
			reported = append(reported, e)
			mu.Unlock()
		}))
		src := NewSource[int](g, "n")
		st := MapInPlace(g, "double", func(vs []int) error {
			if slices.Contains(vs, 13) || slices.Contains(vs, 77) {
				failedRuns++
				failedElems += len(vs)
				vs[0] = -1 // changed before failing: must not go on
				if panics {
					panic("poison")
				}
				return errors.New("poison")
			}
			okRuns++
			for i := range vs {
				vs[i] *= 2
			}
			return nil
		})
		out, ch := ToChan[int](g, "out", 0)
		Connect(src, st)
		Connect(st, out)
		if err := g.Start(ctx); err != nil {
			t.Fatal(err)
		}
		got := collect(ch)
		for i := 0; i < 100; i += 5 {
			if err := src.SendAll(ctx, i, i+1, i+2, i+3, i+4); err != nil {
				t.Fatal(err)
			}
		}
		if err := g.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		vals := <-got
		checkOutcomes(t, g)
		if failedRuns != 2 || okRuns == 0 {
			t.Fatalf("panics %v: %d failed runs, %d good ones", panics, failedRuns, okRuns)
		}
		if len(vals) != 100-failedElems {
			t.Fatalf("panics %v: %d outputs, want %d", panics, len(vals), 100-failedElems)
		}
		for _, v := range vals {
			if v < 0 || v%2 != 0 || v/2 >= 10 && v/2 < 15 || v/2 >= 75 && v/2 < 80 {
				t.Fatalf("panics %v: output %d from a failed run", panics, v)
			}
		}
		if len(reported) != 2 {
			t.Fatalf("panics %v: %d reports, want 2", panics, len(reported))
		}
		n := 0
		for _, e := range reported {
			n += e.Elements
			if e.Stage != "double" || (e.Panic != nil) != panics || panics != errors.Is(e, ErrPanic) {
				t.Fatalf("panics %v: report %+v", panics, e)
			}
		}
		s := g.Stats()[1]
		if n != failedElems || s.Failed != uint64(failedElems) || s.Done != uint64(100-failedElems) {
			t.Fatalf("panics %v: reported %d elements, stats %+v, want %d failed", panics, n, s, failedElems)
		}
	}
}
