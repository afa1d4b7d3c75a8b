package stream

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
)

// seen is what a sink saw of one element: the element and the sink's
// watermark when it came (the marks its sender placed before it).
type seen[T any] struct {
	V  T
	WM int64
}

// marksRun is what one run of the quiet-marks test graph produced.
type marksRun struct {
	wins  []seen[count]
	late  []seen[Late[word]]
	stats map[string]StageStats
	runs  int // calls of the window's run function
}

// runMarksGraph runs words → window (tumbling 200, keyed, late and
// skipped words to the side output) → recording sinks, with event time
// (lateness 5) on the sources' output: one source, or two (the window then
// has two inputs, whose marks are never quiet). With direct, the window
// stage has no run function: every element goes on its own, and every
// mark is applied between them by the instance (the reference). The sinks
// record each element with their watermark when it came, so the marks on
// the outputs are compared too.
func runMarksGraph(t *testing.T, in []word, direct, addBatch bool, sources int) marksRun {
	t.Helper()
	ctx := testCtx(t)
	var r marksRun
	var mu sync.Mutex
	g := newGraph(t, WithBatch(64), WithCapacity(256)) // (room for every packet: the two sources' stay in the order sent)
	spec := countSpec(200, 0)
	spec.Skip = func(w word) bool { return w.W == "skip" }
	if addBatch {
		spec.AddBatch = func(accs []*int, ws []word) {
			for _, a := range accs {
				if a != nil {
					*a++
				}
			}
		}
	}
	win, side := Window(g, "win", spec)
	newFuncs := win.newFuncs
	win.newFuncs = func() Funcs[word, count] {
		f := newFuncs()
		if direct {
			f.run, f.endItems = nil, nil
			return f
		}
		run := f.run
		f.run = func(c *Context, vs []word, ms *runMarks, at *int) (int, error) {
			mu.Lock()
			r.runs++
			mu.Unlock()
			return run(c, vs, ms, at)
		}
		return f
	}
	out := NewStage(g, "out", func() Funcs[count, struct{}] {
		return Funcs[count, struct{}]{Element: func(c *Context, v count, _ *Emitter[struct{}]) error {
			mu.Lock()
			r.wins = append(r.wins, seen[count]{v, c.Watermark()})
			mu.Unlock()
			return nil
		}}
	})
	lateOut := NewStage(g, "late", func() Funcs[Late[word], struct{}] {
		return Funcs[Late[word], struct{}]{Element: func(c *Context, v Late[word], _ *Emitter[struct{}]) error {
			mu.Lock()
			r.late = append(r.late, seen[Late[word]]{v, c.Watermark()})
			mu.Unlock()
			return nil
		}}
	})
	var srcs []*Source[word]
	errs := []error{Connect(win, out), Connect(side, lateOut)}
	for i := range sources {
		src := NewSource[word](g, fmt.Sprint("words", i)).EventTime(func(w word) int64 { return w.TS }, 5)
		srcs = append(srcs, src)
		errs = append(errs, Connect(src, win))
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(in); i += 50 {
		// packets of 50, to the sources in turn
		if err := srcs[(i/50)%len(srcs)].SendAll(ctx, in[i:min(i+50, len(in))]...); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	checkOutcomes(t, g)
	r.stats = map[string]StageStats{}
	for _, s := range g.Stats() {
		r.stats[s.Stage] = s
	}
	return r
}

// marksWords are n words over keys a–d, out of order (some late), with a
// skipped one ("skip") every 41: most of them advance the watermark.
func marksWords(n int) []word {
	in := words(n, []string{"a", "b", "c", "d"})
	for i := range in {
		in[i].TS -= int64((i * 7919) % 61)
		if i%41 == 40 {
			in[i].W = "skip"
		}
	}
	return in
}

// advances is how many of in raise the watermark (the largest time so far
// minus lateness) on the way: the marks a source sending them places.
func advances(in []word, lateness int64) int {
	n, wm := 0, int64(-1<<63)
	for _, w := range in {
		if w.TS-lateness > wm {
			wm = w.TS - lateness
			n++
		}
	}
	return n
}

// TestWindowTakesQuietMarks: the window stage takes the watermarks that
// close no window in its own loop over a packet's elements (runMarks)
// and gives what it gives when every mark is applied between elements
// handled one by one: the same windows (with the watermark the output
// had when each came), the same late and skipped elements with the
// watermark they record and the side output's, the same stage stats —
// with Add and with AddBatch, with one input (quiet marks) and two (none
// quiet). With one input, the run function is called about once a
// packet and once a window end, not once between each two marks.
func TestWindowTakesQuietMarks(t *testing.T) {
	in := marksWords(4000)
	for _, sources := range []int{1, 2} {
		for _, addBatch := range []bool{false, true} {
			name := fmt.Sprintf("sources=%d addBatch=%v", sources, addBatch)
			want := runMarksGraph(t, in, true, addBatch, sources)
			got := runMarksGraph(t, in, false, addBatch, sources)
			if len(want.wins) == 0 || len(want.late) < 20 {
				t.Fatalf("%s: %d windows, %d late: the test shows nothing", name, len(want.wins), len(want.late))
			}
			lateWM := 0
			for _, l := range want.late {
				if !l.V.Skipped && l.V.Watermark > l.V.Value.TS {
					lateWM++
				}
			}
			if lateWM == 0 {
				t.Fatalf("%s: no late element recorded a watermark past its time", name)
			}
			if !slices.Equal(got.wins, want.wins) {
				t.Errorf("%s: windows differ from the element-by-element run's (%d, %d)", name, len(got.wins), len(want.wins))
			}
			if !slices.Equal(got.late, want.late) {
				for i := range min(len(got.late), len(want.late)) {
					if got.late[i] != want.late[i] {
						t.Errorf("%s: late element %d: %+v, element by element %+v", name, i, got.late[i], want.late[i])
						break
					}
				}
				t.Errorf("%s: %d late, element by element %d", name, len(got.late), len(want.late))
			}
			for _, s := range []string{"win", "out", "late"} {
				g, w := got.stats[s], want.stats[s]
				g.Depth, w.Depth = 0, 0 // (a moment's queue)
				if g != w {
					t.Errorf("%s: %s stats %+v, element by element %+v", name, s, g, w)
				}
			}
			if n := advances(in, 5); sources == 1 && got.runs*3 > n {
				t.Errorf("%s: %d calls of the run function for %d marks: a run stops at quiet marks", name, got.runs, n)
			}
			if testing.Verbose() {
				t.Logf("%s: %d runs, %d marks, %d windows, %d late", name, got.runs, advances(in, 5), len(got.wins), len(got.late))
			}
		}
	}
}
