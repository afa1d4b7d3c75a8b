package stream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// chainRun is what one run of the chaining test graph produced.
type chainRun struct {
	wins   []count
	late   []Late[word]
	stats  []StageStats
	errs   []string
	marks  []int64 // the watermarks the "tag" stage saw, in order
	chains map[string]bool
}

// runChainGraph runs source → tag (panics on some, emits some twice) →
// window (keyed, late side output) → sink, late → sink, with opts, and
// returns everything observable.
func runChainGraph(t *testing.T, in []word, opts ...Option) chainRun {
	t.Helper()
	ctx := testCtx(t)
	var mu sync.Mutex
	var r chainRun
	g := newGraph(t, append([]Option{WithBatch(7), WithCapacity(2), WithErrorHandler(func(e *StageError) {
		mu.Lock()
		r.errs = append(r.errs, fmt.Sprintf("%s %d %v", e.Stage, e.Elements, e.Panic))
		mu.Unlock()
	})}, opts...)...)
	src := NewSource[word](g, "words").EventTime(func(w word) int64 { return w.TS }, 5)
	tag := NewStage(g, "tag", func() Funcs[word, word] {
		return Funcs[word, word]{
			Element: func(_ *Context, w word, out *Emitter[word]) error {
				switch {
				case w.TS%41 == 0:
					panic(w.TS)
				case w.TS%43 == 0:
					return fmt.Errorf("refused %d", w.TS)
				case w.TS%5 == 0:
					out.Emit(w)
				}
				out.Emit(w)
				return nil
			},
			Watermark: func(_ *Context, wm int64, _ *Emitter[word]) error {
				mu.Lock()
				r.marks = append(r.marks, wm)
				mu.Unlock()
				return nil
			},
		}
	})
	win, late := Window(g, "count", countSpec(20, 10))
	out, ch := ToChan[count](g, "out", 0)
	lateOut, lateCh := ToChan[Late[word]](g, "late", 0)
	for _, err := range []error{Connect(src, tag), Connect(tag, win), Connect(win, out), Connect(late, lateOut)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	r.wins, r.late = sendWindowed(t, ctx, g, src, ch, lateCh, in, 3)
	r.stats = g.Stats()
	r.chains = map[string]bool{}
	for _, s := range r.stats {
		r.chains[s.Stage] = s.Chained
	}
	return r
}

// TestChainingChangesNothingObservable: the same graph with and without
// operator chaining emits the same elements in the same order, fails the
// same elements, counts the same, and its stages see the same watermarks.
func TestChainingChangesNothingObservable(t *testing.T) {
	in := words(2000, []string{"a", "b", "c", "d"})
	for i := range in {
		in[i].TS -= int64((i * 7919) % 61) // later than words' jitter: some are late
	}
	on := runChainGraph(t, in)
	off := runChainGraph(t, in, WithChaining(false))
	want := map[string]bool{"words": false, "tag": false, "count": true, "out": true, "late": true}
	if fmt.Sprint(on.chains) != fmt.Sprint(want) {
		t.Fatalf("chained stages %v, want %v", on.chains, want)
	}
	for name, c := range off.chains {
		if c {
			t.Fatalf("%q chained with WithChaining(false)", name)
		}
	}
	if len(on.wins) == 0 || len(on.late) == 0 {
		t.Fatalf("%d windows and %d late elements: the test shows nothing", len(on.wins), len(on.late))
	}
	if !slices.Equal(on.wins, off.wins) {
		t.Fatalf("windows differ: %d chained, %d not", len(on.wins), len(off.wins))
	}
	if !slices.Equal(on.late, off.late) {
		t.Fatalf("late elements differ: %d chained, %d not", len(on.late), len(off.late))
	}
	slices.Sort(on.errs)
	slices.Sort(off.errs)
	if !slices.Equal(on.errs, off.errs) || len(on.errs) == 0 {
		t.Fatalf("failures differ: %v vs %v", on.errs, off.errs)
	}
	if !slices.Equal(on.marks, off.marks) {
		t.Fatalf("the tag stage saw other watermarks: %d vs %d", len(on.marks), len(off.marks))
	}
	for i, s := range on.stats {
		o := off.stats[i]
		if s.In != o.In || s.Done != o.Done || s.Failed != o.Failed || s.Out != o.Out || s.Late != o.Late || s.Watermark != o.Watermark {
			t.Fatalf("stats differ:\n chained %+v\n     not %+v", s, o)
		}
	}
}

// TestStartChain: a stage marked StartChain gets a ring kernel of its own
// (and so does everything after a fan-in or a parallel stage), the others
// run on their upstream's loop; StartChain after Start is refused.
func TestStartChain(t *testing.T) {
	ctx := testCtx(t)
	g := newGraph(t)
	src := NewSource[int](g, "n")
	a := Map(g, "a", func(v int) (int, error) { return v + 1, nil })
	b := Map(g, "b", func(v int) (int, error) { return v * 2, nil }).StartChain()
	c := Map(g, "c", func(v int) (int, error) { return v - 1, nil })
	p := Map(g, "p", func(v int) (int, error) { return v, nil }, Parallelism(2))
	out, ch := ToChan[int](g, "out", 0)
	Connect(src, a)
	Connect(a, b)
	Connect(b, c)
	Connect(c, p)
	Connect(p, out)
	vals := runInts(t, ctx, g, src, ch, 100)
	slices.Sort(vals)
	for i, v := range vals {
		if v != (i+1)*2-1 {
			t.Fatalf("output %d is %d, want %d", i, v, (i+1)*2-1)
		}
	}
	if len(vals) != 100 {
		t.Fatalf("%d outputs, want 100", len(vals))
	}
	kernels := map[string]bool{}
	for _, id := range g.Runtime().Kernels() {
		if i := strings.LastIndexByte(id, '/'); i > 0 {
			if j := strings.LastIndexByte(id[:i], '/'); j >= 0 {
				kernels[id[j+1:i]] = true
			}
		}
	}
	// a: its upstream is a source (no loop); b: StartChain; c: chained to
	// b; p: parallel; out: two senders.
	want := map[string]bool{"a": true, "b": true, "p": true, "out": true}
	if fmt.Sprint(kernels) != fmt.Sprint(want) {
		t.Fatalf("stages with kernels %v, want %v", kernels, want)
	}
	for _, s := range g.Stats() {
		if s.Chained != (s.Stage == "c") {
			t.Fatalf("%s[%d]: Chained %v", s.Stage, s.Instance, s.Chained)
		}
	}
	c.StartChain()
	if err := g.Err(); !errors.Is(err, ErrStarted) {
		t.Fatalf("StartChain after Start: %v, want ErrStarted", err)
	}
}

// TestChainedTimer: a stage chained to its upstream sets a processing-time
// timer; it fires on the chain's loop without any further element, and
// not after the drain.
func TestChainedTimer(t *testing.T) {
	ctx := testCtx(t)
	g := newGraph(t)
	src := NewSource[int](g, "n")
	head := Map(g, "head", func(v int) (int, error) { return v, nil })
	fired := make(chan int, 1)
	ticker := NewStage(g, "tick", countingTicker(9, true))
	out := ToFunc(g, "out", func(_ context.Context, v int) error {
		select {
		case fired <- v:
		default:
		}
		return nil
	})
	Connect(src, head)
	Connect(head, ticker)
	Connect(ticker, out)
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if err := src.Send(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case n := <-fired:
		if n != 4 {
			t.Fatalf("the timer emitted %d, want 4", n)
		}
	case <-ctx.Done():
		t.Fatal("the chained stage's timer never fired")
	}
	if err := g.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	for _, s := range g.Stats() {
		if s.Stage == "tick" && (!s.Chained || s.In != 4 || s.Done != 4 || s.Out != 1) {
			t.Fatalf("tick: %+v", s)
		}
	}
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestChainedStageBlocksItsUpstream: a chained sink that does not take
// holds back its upstream's loop and, through its ring, the source: the
// elements admitted stay within the head's ring and one packet in hand.
func TestChainedStageBlocksItsUpstream(t *testing.T) {
	ctx := testCtx(t)
	const capacity, batch = 2, 4
	g := newGraph(t, WithCapacity(capacity), WithBatch(batch))
	src := NewSource[int](g, "n")
	head := Map(g, "head", func(v int) (int, error) { return v, nil })
	release := make(chan struct{})
	out := ToFunc(g, "slow", func(ctx context.Context, _ int) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	Connect(src, head)
	Connect(head, out)
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	slowStats := func() (slow StageStats) {
		for _, s := range g.Stats() {
			if s.Stage == "slow" {
				slow = s
			}
		}
		return slow
	}
	sent := 0
	for {
		sctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		err := src.Send(sctx, sent)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			// A Send that waited is a blocked source only once the sink
			// holds its element: on a loaded machine the pipeline may
			// simply not have moved yet (the wait bounds a probe, not the
			// machine's speed), so look again.
			if slowStats().In != 0 {
				break
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if sent++; sent > 10_000 {
			t.Fatal("the source never blocked: unbounded buffering")
		}
	}
	if bound := (2*capacity + 1) * batch; sent > bound {
		t.Fatalf("%d elements admitted before the source blocked, bound %d", sent, bound)
	}
	if slow := slowStats(); !slow.Chained || slow.In != 1 {
		t.Fatalf("the blocked chained sink: %+v, want chained with its one element in", slow)
	}
	close(release)
	if err := g.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	checkOutcomes(t, g)
}

// TestChainedStagePanics: a chained stage that panics on some elements
// fails exactly those, as its own outcomes: its upstream's elements are all
// handled, and everything else comes out.
func TestChainedStagePanics(t *testing.T) {
	ctx := testCtx(t)
	var mu sync.Mutex
	failed := map[string][]int{}
	g := newGraph(t, WithBatch(8), WithErrorHandler(func(e *StageError) {
		mu.Lock()
		defer mu.Unlock()
		if errors.Is(e, ErrPanic) && e.Elements == 1 {
			failed[e.Stage] = append(failed[e.Stage], e.Panic.(int))
		}
	}))
	src := NewSource[int](g, "n")
	head := FlatMap(g, "head", func(v int, out *Emitter[int]) error {
		out.Emit(v)
		out.Emit(v + 1000) // after a panic downstream, still emitted
		return nil
	})
	boom := Map(g, "boom", func(v int) (int, error) {
		if v%7 == 0 {
			panic(v)
		}
		return v, nil
	})
	out, ch := ToChan[int](g, "out", 0)
	Connect(src, head)
	Connect(head, boom)
	Connect(boom, out)
	got := runInts(t, ctx, g, src, ch, 100)
	var want []int
	var panicked []int
	for i := range 100 {
		for _, v := range []int{i, i + 1000} {
			if v%7 == 0 {
				panicked = append(panicked, v)
			} else {
				want = append(want, v)
			}
		}
	}
	if vals := got; !slices.Equal(vals, want) {
		t.Fatalf("%d outputs, want %d in order", len(vals), len(want))
	}
	slices.Sort(failed["boom"])
	slices.Sort(panicked)
	if !slices.Equal(failed["boom"], panicked) || len(failed) != 1 {
		t.Fatalf("panics %v, want boom's %v", failed, panicked)
	}
	for _, s := range g.Stats() {
		switch s.Stage {
		case "head":
			if s.Done != 100 || s.Failed != 0 || s.Chained {
				t.Fatalf("head: %+v", s)
			}
		case "boom":
			if !s.Chained || s.In != 200 || s.Failed != uint64(len(panicked)) {
				t.Fatalf("boom: %+v", s)
			}
		}
	}
	checkOutcomes(t, g)
}
