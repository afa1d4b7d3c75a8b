package stream

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// count is a window result for tests.
type count struct {
	Key   string
	Start int64
	N     int
}

func countSpec(size, slide int64) WindowSpec[word, string, int, count] {
	return WindowSpec[word, string, int, count]{
		Size: size, Slide: slide,
		Time:   func(w word) int64 { return w.TS },
		Key:    func(w word) string { return w.W },
		Add:    func(n *int, _ word) { *n++ },
		Result: func(k string, s Span, n *int) count { return count{Key: k, Start: s.Start, N: *n} },
		Order:  cmp.Compare[string],
	}
}

// reference counts words per (key, window) the way the window stage must,
// judging lateness against the watermark of the words before each.
func reference(words []word, size, slide, lateness int64) (wins []count, late []word) {
	if slide == 0 {
		slide = size
	}
	open := map[[2]any]int{}
	wm := int64(-1 << 63)
	for _, w := range words {
		added := false
		last, _ := floorTo(w.TS, slide)
		for s := last; s+size > w.TS; s -= slide {
			if s+size > wm {
				open[[2]any{w.W, s}]++
				added = true
			}
		}
		if !added {
			late = append(late, w)
		}
		wm = max(wm, w.TS-lateness)
	}
	for k, n := range open {
		wins = append(wins, count{Key: k[0].(string), Start: k[1].(int64), N: n})
	}
	slices.SortFunc(wins, byStartKey)
	return wins, late
}

func byStartKey(a, b count) int {
	if c := cmp.Compare(a.Start, b.Start); c != 0 {
		return c
	}
	return cmp.Compare(a.Key, b.Key)
}

// words makes n out-of-order words over keys.
func words(n int, keys []string) []word {
	out := make([]word, n)
	for i := range out {
		jitter := int64((i * 7919) % 23)
		out[i] = word{W: keys[(i*31)%len(keys)], TS: int64(i)*3 - jitter}
	}
	return out
}

func TestTumblingWindowLateToSide(t *testing.T) {
	for _, tc := range []struct {
		name              string
		size, slide, late int64
		par               int
		slot              func(word) int
		locate            bool // Locate instead of Time, Key and Slot (Time nil)
	}{
		{"tumbling", 50, 0, 10, 1, nil, false},
		{"tumbling-keyed-4", 50, 0, 10, 4, nil, false},
		{"sliding", 60, 20, 5, 1, nil, false},
		{"sliding-keyed-3", 60, 20, 30, 3, nil, false},
		{"no-lateness", 40, 0, 0, 2, nil, false},
		// Slot hints: one per key, shared by keys (checked against the
		// key), out of range (ignored)
		{"tumbling-slots", 50, 0, 10, 1, func(w word) int { return int(w.W[0] - 'a') }, false},
		{"tumbling-shared-slots", 50, 0, 10, 2, func(w word) int { return int(w.W[0]-'a') % 2 }, false},
		{"sliding-bad-slots", 60, 20, 5, 1, func(w word) int { return []int{-1, MaxWindowSlot, 3}[int(w.W[0]-'a')%3] }, false},
		// Locate: the same four in one call by reference
		{"tumbling-locate", 50, 0, 10, 2, nil, true},
		{"tumbling-locate-slots", 50, 0, 10, 1, func(w word) int { return int(w.W[0] - 'a') }, true},
		{"sliding-locate-bad-slots", 60, 20, 5, 3, func(w word) int { return []int{-1, MaxWindowSlot, 3}[int(w.W[0]-'a')%3] }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			g := newGraph(t, WithBatch(16))
			src := NewSource[word](g, "words").EventTime(func(w word) int64 { return w.TS }, tc.late)
			spec := countSpec(tc.size, tc.slide)
			spec.Slot = tc.slot
			if tc.locate {
				slot := tc.slot
				spec.Time, spec.Key, spec.Slot = nil, func(word) string { panic("Key called with Locate") }, nil
				spec.Locate = func(w *word) (int64, string, int, bool) {
					s := -1
					if slot != nil {
						s = slot(*w)
					}
					return w.TS, w.W, s, false
				}
			}
			win, lateOut := Window(g, "count", spec, Parallelism(tc.par))
			out, ch := ToChan[count](g, "out", 0)
			lateSink, lateCh := ToChan[Late[word]](g, "late", 0)
			if err := errors.Join(
				Connect(src, win, KeyBy(func(w word) string { return w.W })),
				Connect(win, out), Connect(lateOut, lateSink)); err != nil {
				t.Fatal(err)
			}
			if err := g.Start(ctx); err != nil {
				t.Fatal(err)
			}
			got, gotLate := collect(ch), collect(lateCh)
			in := words(2000, []string{"a", "b", "c", "d", "e"})
			for i := 0; i < len(in); i += 7 {
				if err := src.SendAll(ctx, in[i:min(i+7, len(in))]...); err != nil {
					t.Fatal(err)
				}
			}
			if err := g.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			wantWins, wantLate := reference(in, tc.size, tc.slide, tc.late)
			wins := <-got
			slices.SortFunc(wins, byStartKey)
			if !slices.Equal(wins, wantWins) {
				t.Fatalf("%d windows, want %d\n got %v\nwant %v", len(wins), len(wantWins), wins[:min(8, len(wins))], wantWins[:min(8, len(wantWins))])
			}
			var lateWords []word
			for _, l := range <-gotLate {
				lateWords = append(lateWords, l.Value)
			}
			slices.SortFunc(lateWords, func(a, b word) int { return cmp.Compare(a.TS, b.TS) })
			slices.SortFunc(wantLate, func(a, b word) int { return cmp.Compare(a.TS, b.TS) })
			if !slices.Equal(lateWords, wantLate) {
				t.Fatalf("%d late, want %d", len(lateWords), len(wantLate))
			}
			var counted uint64
			for _, s := range g.Stats() {
				if s.Stage == "count" {
					counted += s.Late
				}
			}
			if counted != uint64(len(wantLate)) {
				t.Fatalf("Stats count %d late, want %d", counted, len(wantLate))
			}
			if tc.late < 23*3 && len(wantLate) == 0 && tc.slide == 0 {
				t.Fatalf("the input has no late words: the test proves nothing")
			}
			checkOutcomes(t, g)
		})
	}
}

// TestWindowsCloseInOrderWhileStreaming: with one instance the windows come
// out as the watermark closes them, by start then key, before the drain.
func TestWindowsCloseInOrderWhileStreaming(t *testing.T) {
	ctx := testCtx(t)
	g := newGraph(t, WithBatch(1))
	src := NewSource[word](g, "words").EventTime(func(w word) int64 { return w.TS }, 0)
	win, _ := Window(g, "count", countSpec(10, 0))
	out, ch := ToChan[count](g, "out", 100)
	Connect(src, win)
	Connect(win, out)
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for _, w := range []word{{"b", 1}, {"a", 2}, {"b", 12}, {"a", 25}} {
		if err := src.Send(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	// The watermark (25) has closed [0,10) and [10,20) without a drain.
	want := []count{{"a", 0, 1}, {"b", 0, 1}, {"b", 10, 1}}
	for i, w := range want {
		if got := <-ch; got != w {
			t.Fatalf("window %d: got %v, want %v", i, got, w)
		}
	}
	if err := g.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	// The drain's final watermark closes the window still open.
	if got := <-ch; got != (count{"a", 20, 1}) {
		t.Fatalf("after drain: %v", got)
	}
	if _, ok := <-ch; ok {
		t.Fatal("the channel is not closed after the drain")
	}
}

func TestWindowSpecErrors(t *testing.T) {
	g := New()
	bad := countSpec(0, 0)
	Window(g, "w", bad)
	if err := g.Start(testCtx(t)); !errors.Is(err, ErrInvalidGraph) {
		t.Fatalf("Start: %v, want ErrInvalidGraph", err)
	}
	g2 := New()
	Window(g2, "w", countSpec(10, 20))
	if err := g2.Err(); !errors.Is(err, ErrInvalidGraph) {
		t.Fatalf("slide > size: %v", err)
	}
}

// TestPanicAndDrainWithWindowsOpen: a stage upstream of a window panics on
// some elements mid-stream; without event time nothing closes the windows
// until the drain, whose final watermark emits every one of them. Each
// element has one outcome and the panicking ones are missing from the counts.
func TestPanicAndDrainWithWindowsOpen(t *testing.T) {
	ctx := testCtx(t)
	var panics atomic.Int64
	g := newGraph(t, WithBatch(5), WithErrorHandler(func(e *StageError) {
		if errors.Is(e, ErrPanic) {
			panics.Add(1)
		}
	}))
	src := NewSource[word](g, "words") // no event time: the watermark stays at its minimum
	flaky := Map(g, "flaky", func(w word) (word, error) {
		if w.TS%97 == 0 {
			panic("flaky")
		}
		return w, nil
	}, Parallelism(2))
	win, _ := Window(g, "count", countSpec(100, 0), Parallelism(3))
	out, ch := ToChan[count](g, "out", 0)
	Connect(src, flaky)
	Connect(flaky, win, KeyBy(func(w word) string { return w.W }))
	Connect(win, out)
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	got := collect(ch)
	in := words(3000, []string{"a", "b", "c"})
	var kept []word
	for _, w := range in {
		if err := src.Send(ctx, w); err != nil {
			t.Fatal(err)
		}
		if w.TS%97 != 0 {
			kept = append(kept, w)
		}
	}
	for _, s := range g.Stats() {
		if s.Stage == "out" && s.In != 0 {
			t.Fatalf("a window closed before the drain: %+v", s)
		}
	}
	if err := g.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	want, _ := reference(kept, 100, 0, 1<<62) // nothing late
	wins := <-got
	slices.SortFunc(wins, byStartKey)
	if !slices.Equal(wins, want) {
		t.Fatalf("%d windows, want %d", len(wins), len(want))
	}
	if int(panics.Load()) != len(in)-len(kept) || len(in) == len(kept) {
		t.Fatalf("%d panics, want %d", panics.Load(), len(in)-len(kept))
	}
	checkOutcomes(t, g)
}

// TestWindowAddPanicsMidRun: a window whose Add panics on some elements,
// fed packets of many elements between watermarks (the stage handles such
// a run in one call): each panicking element fails alone — its outcome,
// with the panic value — and every other element of its run is windowed,
// with chaining on and off.
func TestWindowAddPanicsMidRun(t *testing.T) {
	for _, chained := range []bool{false, true} {
		t.Run(fmt.Sprintf("chained=%v", chained), func(t *testing.T) {
			ctx := testCtx(t)
			var mu sync.Mutex
			var panicked []int64
			g := newGraph(t, WithBatch(32), WithChaining(chained), WithErrorHandler(func(e *StageError) {
				if errors.Is(e, ErrPanic) && e.Elements == 1 {
					mu.Lock()
					panicked = append(panicked, e.Panic.(int64))
					mu.Unlock()
				}
			}))
			const lateness = 40
			src := NewSource[word](g, "words").EventTime(func(w word) int64 { return w.TS }, lateness)
			spec := countSpec(50, 0)
			spec.Add = func(n *int, w word) {
				if w.TS%13 == 0 {
					panic(w.TS)
				}
				*n++
			}
			win, lateOut := Window(g, "count", spec)
			out, ch := ToChan[count](g, "out", 0)
			lateSink, lateCh := ToChan[Late[word]](g, "late", 0)
			if err := errors.Join(Connect(src, win), Connect(win, out), Connect(lateOut, lateSink)); err != nil {
				t.Fatal(err)
			}
			in := words(3000, []string{"a", "b", "c"})
			wins, late := sendWindowed(t, ctx, g, src, ch, lateCh, in, 200)
			// The reference: as reference, with the panicking words counted
			// nowhere (they still move the watermark).
			open := map[count]int{}
			wm := int64(math.MinInt64)
			var wantLate int
			var wantPanics []int64
			for _, w := range in {
				start, _ := floorTo(w.TS, 50)
				switch {
				case start+50 <= wm:
					wantLate++
				case w.TS%13 == 0:
					wantPanics = append(wantPanics, w.TS)
				default:
					open[count{Key: w.W, Start: start}]++
				}
				wm = max(wm, w.TS-lateness)
			}
			var want []count
			for k, n := range open {
				want = append(want, count{Key: k.Key, Start: k.Start, N: n})
			}
			slices.SortFunc(want, byStartKey)
			slices.SortFunc(wins, byStartKey)
			if !slices.Equal(wins, want) {
				t.Fatalf("%d windows, want %d", len(wins), len(want))
			}
			if len(late) != wantLate {
				t.Fatalf("%d late, want %d", len(late), wantLate)
			}
			mu.Lock()
			defer mu.Unlock()
			slices.Sort(panicked)
			slices.Sort(wantPanics)
			if !slices.Equal(panicked, wantPanics) || len(wantPanics) < 10 {
				t.Fatalf("panicked on %v, want %v", panicked, wantPanics)
			}
			for _, s := range g.Stats() {
				if s.Stage == "count" && (s.Failed != uint64(len(wantPanics)) || s.Done != uint64(len(in)-len(wantPanics))) {
					t.Fatalf("count: %+v, want %d failed", s, len(wantPanics))
				}
			}
		})
	}
}

// seq is an order-sensitive accumulator: a hash of the times folded into
// a window, in the order they were folded, and their number.
type seq struct {
	H uint64
	N int
}

func (s *seq) add(w word) {
	s.H = s.H*1_000_003 + uint64(w.TS)
	s.N++
}

// TestWindowAddBatchMatchesAdd: a tumbling window with AddBatch gives the
// same windows as with Add (each window's elements folded in the same
// order: the accumulator is a hash of the sequence), the same late
// elements, and Add is not called per element: AddBatch folds them, with
// one call a packet (and one before windows close), far fewer than
// elements.
func TestWindowAddBatchMatchesAdd(t *testing.T) {
	type result struct {
		Key   string
		Start int64
		S     seq
	}
	run := func(t *testing.T, batch bool, par int, slot func(word) int) (wins []result, late []word, calls, folded int) {
		ctx := testCtx(t)
		g := newGraph(t, WithBatch(64))
		src := NewSource[word](g, "words").EventTime(func(w word) int64 { return w.TS }, 10)
		spec := WindowSpec[word, string, seq, result]{
			Size:   50,
			Time:   func(w word) int64 { return w.TS },
			Key:    func(w word) string { return w.W },
			Slot:   slot,
			Add:    func(s *seq, w word) { s.add(w) },
			Result: func(k string, sp Span, s *seq) result { return result{Key: k, Start: sp.Start, S: *s} },
		}
		var mu sync.Mutex
		if batch {
			spec.Add = func(*seq, word) { panic("Add called beside AddBatch") }
			spec.AddBatch = func(accs []*seq, ws []word) {
				if len(accs) != len(ws) {
					panic(fmt.Sprintf("%d accumulators for %d elements", len(accs), len(ws)))
				}
				mu.Lock()
				calls++
				mu.Unlock()
				for i, a := range accs {
					if a != nil {
						a.add(ws[i])
						mu.Lock()
						folded++
						mu.Unlock()
					}
				}
			}
		}
		win, lateOut := Window(g, "seq", spec, Parallelism(par))
		out, ch := ToChan[result](g, "out", 0)
		lateSink, lateCh := ToChan[Late[word]](g, "late", 0)
		if err := errors.Join(
			Connect(src, win, KeyBy(func(w word) string { return w.W })),
			Connect(win, out), Connect(lateOut, lateSink)); err != nil {
			t.Fatal(err)
		}
		if err := g.Start(ctx); err != nil {
			t.Fatal(err)
		}
		got, gotLate := collect(ch), collect(lateCh)
		in := words(5000, []string{"a", "b", "c", "d", "e"})
		for i := 0; i < len(in); i += 500 {
			if err := src.SendAll(ctx, in[i:min(i+500, len(in))]...); err != nil {
				t.Fatal(err)
			}
		}
		if err := g.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		wins = <-got
		for _, l := range <-gotLate {
			late = append(late, l.Value)
		}
		checkOutcomes(t, g)
		slices.SortFunc(wins, func(a, b result) int {
			if c := cmp.Compare(a.Start, b.Start); c != 0 {
				return c
			}
			return cmp.Compare(a.Key, b.Key)
		})
		slices.SortFunc(late, func(a, b word) int { return cmp.Compare(a.TS, b.TS) })
		return wins, late, calls, folded
	}
	for _, tc := range []struct {
		name string
		par  int
		slot func(word) int
	}{
		{"one", 1, nil},
		{"keyed-3", 3, nil},
		{"slots", 1, func(w word) int { return int(w.W[0] - 'a') }},
		{"shared-slots", 2, func(w word) int { return int(w.W[0]-'a') % 2 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantWins, wantLate, _, _ := run(t, false, tc.par, tc.slot)
			wins, late, calls, folded := run(t, true, tc.par, tc.slot)
			if len(wantLate) == 0 {
				t.Fatal("no late words: the test proves less than it should")
			}
			if !slices.Equal(wins, wantWins) {
				t.Fatalf("%d windows with AddBatch, %d with Add\n got %v\nwant %v", len(wins), len(wantWins), wins[:min(4, len(wins))], wantWins[:min(4, len(wantWins))])
			}
			if !slices.Equal(late, wantLate) {
				t.Fatalf("%d late with AddBatch, %d with Add", len(late), len(wantLate))
			}
			n := 0
			for _, w := range wins {
				n += w.S.N
			}
			if folded != n || calls == 0 || calls >= folded/4 {
				t.Fatalf("AddBatch: %d calls folded %d elements (windows hold %d): want one call per run of many", calls, folded, n)
			}
		})
	}
}

// TestWindowAddBatchPanics: a panic in AddBatch is reported (ErrPanic)
// and the stage goes on; the elements it folded before it panicked stay
// folded and none is folded twice, so the windows and the side output hold
// every element once.
func TestWindowAddBatchPanics(t *testing.T) {
	ctx := testCtx(t)
	var mu sync.Mutex
	panics := 0
	g := newGraph(t, WithBatch(32), WithErrorHandler(func(e *StageError) {
		if errors.Is(e, ErrPanic) {
			mu.Lock()
			panics++
			mu.Unlock()
		}
	}))
	src := NewSource[word](g, "words").EventTime(func(w word) int64 { return w.TS }, 10)
	spec := countSpec(50, 0)
	calls := 0
	spec.AddBatch = func(accs []*int, ws []word) {
		for i, a := range accs {
			if a != nil {
				*a++
			}
			_ = ws[i]
		}
		if calls++; calls%5 == 0 {
			panic("every fifth run")
		}
	}
	win, lateOut := Window(g, "count", spec)
	out, ch := ToChan[count](g, "out", 0)
	lateSink, lateCh := ToChan[Late[word]](g, "late", 0)
	if err := errors.Join(Connect(src, win), Connect(win, out), Connect(lateOut, lateSink)); err != nil {
		t.Fatal(err)
	}
	in := words(3000, []string{"a", "b", "c"})
	wins, late := sendWindowed(t, ctx, g, src, ch, lateCh, in, 200)
	n := 0
	for _, w := range wins {
		n += w.N
	}
	mu.Lock()
	defer mu.Unlock()
	if panics == 0 || calls < 5 {
		t.Fatalf("%d panics in %d calls: the test proves nothing", panics, calls)
	}
	// Every element is windowed or late, once: the panicking calls folded
	// theirs before they panicked.
	if n+len(late) != len(in) {
		t.Fatalf("windows hold %d, late %d: %d of %d elements", n, len(late), n+len(late), len(in))
	}
}
