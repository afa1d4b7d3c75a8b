package stream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestCycleIsABuildError(t *testing.T) {
	g := New()
	a := Map(g, "a", func(v int) (int, error) { return v, nil })
	b := Map(g, "b", func(v int) (int, error) { return v, nil })
	if err := Connect(a, b); err != nil {
		t.Fatal(err)
	}
	if err := Connect(b, a); !errors.Is(err, ErrCycle) {
		t.Fatalf("b → a: %v, want ErrCycle", err)
	}
	if err := Connect(a, a); !errors.Is(err, ErrCycle) {
		t.Fatalf("a → a: %v, want ErrCycle", err)
	}
	if err := g.Start(testCtx(t)); !errors.Is(err, ErrCycle) {
		t.Fatalf("Start: %v, want ErrCycle", err)
	}
}

func TestBuildErrors(t *testing.T) {
	ctx := testCtx(t)
	t.Run("foreign", func(t *testing.T) {
		g1, g2 := New(), New()
		a := NewSource[int](g1, "a")
		b, _ := ToChan[int](g2, "b", 0)
		if err := Connect(a, b); !errors.Is(err, ErrForeignNode) {
			t.Fatalf("%v, want ErrForeignNode", err)
		}
	})
	t.Run("duplicate name", func(t *testing.T) {
		g := New()
		NewSource[int](g, "x")
		NewSource[int](g, "x")
		if err := g.Start(ctx); !errors.Is(err, ErrInvalidGraph) {
			t.Fatalf("%v, want ErrInvalidGraph", err)
		}
	})
	t.Run("no input", func(t *testing.T) {
		g := New()
		ToChan[int](g, "lonely", 0)
		if err := g.Start(ctx); !errors.Is(err, ErrInvalidGraph) {
			t.Fatalf("%v, want ErrInvalidGraph", err)
		}
	})
	t.Run("bad options", func(t *testing.T) {
		for _, g := range []*Graph{New(WithCapacity(3)), New(WithBatch(0)), New(WithBatch(1 << 40)), New(WithCapacity(1 << 40))} {
			if err := g.Start(ctx); !errors.Is(err, ErrInvalidGraph) {
				t.Fatalf("%v, want ErrInvalidGraph", err)
			}
		}
		g := New()
		Map[int, int](g, "nil", nil)
		Map(g, "par0", func(v int) (int, error) { return v, nil }, Parallelism(0))
		if err := g.Err(); !errors.Is(err, ErrInvalidGraph) {
			t.Fatalf("%v, want ErrInvalidGraph", err)
		}
		g = New()
		Map(g, "huge", func(v int) (int, error) { return v, nil }, Parallelism(1<<30))
		if err := g.Err(); !errors.Is(err, ErrInvalidGraph) {
			t.Fatalf("parallelism 1<<30: %v, want ErrInvalidGraph", err)
		}
	})
}

func TestMisuse(t *testing.T) {
	ctx := testCtx(t)
	g := newGraph(t)
	src := NewSource[int](g, "n")
	out, ch := ToChan[int](g, "out", 1000)
	Connect(src, out)
	if err := src.Send(ctx, 1); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("Send before Start: %v", err)
	}
	if err := g.Drain(ctx); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("Drain before Start: %v", err)
	}
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := g.Start(ctx); !errors.Is(err, ErrStarted) {
		t.Fatalf("second Start: %v", err)
	}
	if err := Connect(src, out); !errors.Is(err, ErrStarted) {
		t.Fatalf("Connect after Start: %v", err)
	}
	// Concurrent senders and concurrent drains.
	var wg sync.WaitGroup
	for s := range 4 {
		wg.Go(func() {
			for i := range 100 {
				if err := src.Send(ctx, s*1000+i); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for range 2 {
		wg.Go(func() {
			if err := g.Drain(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got := <-collect(ch)
	if len(got) != 400 {
		t.Fatalf("%d elements, want 400", len(got))
	}
	for s := range 4 { // each sender's order is kept
		var mine []int
		for _, v := range got {
			if v/1000 == s {
				mine = append(mine, v)
			}
		}
		if !slices.IsSorted(mine) || len(mine) != 100 {
			t.Fatalf("sender %d: %v", s, mine)
		}
	}
	if err := g.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := g.Stop(ctx); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if err := src.Send(ctx, 1); !errors.Is(err, ErrClosed) {
		t.Fatalf("Send after Stop: %v", err)
	}
	if err := g.Drain(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("Drain after Stop: %v", err)
	}
}

// TestPanicMidStream: a stage that panics on some elements fails exactly
// those, with ErrPanic; every other element comes out, and the graph drains.
func TestPanicMidStream(t *testing.T) {
	ctx := testCtx(t)
	var mu sync.Mutex
	var failed []int
	g := newGraph(t, WithBatch(8), WithErrorHandler(func(e *StageError) {
		if errors.Is(e, ErrPanic) && e.Elements == 1 && e.Panic != nil {
			mu.Lock()
			failed = append(failed, e.Panic.(int))
			mu.Unlock()
		}
	}))
	src := NewSource[int](g, "n")
	var seen atomic.Int64
	boom := NewStage(g, "boom", func() Funcs[int, int] {
		mine := 0 // state kept across panics
		return Funcs[int, int]{Element: func(_ *Context, v int, out *Emitter[int]) error {
			mine++
			seen.Add(1)
			if int(seen.Load()) < mine {
				return errors.New("state lost")
			}
			out.Emit(v) // emitted before the panic: kept
			if v%10 == 3 {
				panic(v)
			}
			out.Emit(-v)
			return nil
		}}
	}, Parallelism(2))
	out, ch := ToChan[int](g, "out", 0)
	Connect(src, boom)
	Connect(boom, out)
	vals := runInts(t, ctx, g, src, ch, 200)
	if len(vals) != 200+180 {
		t.Fatalf("%d outputs, want 380", len(vals))
	}
	slices.Sort(failed)
	if len(failed) != 20 || failed[0] != 3 || failed[19] != 193 {
		t.Fatalf("failed %v", failed)
	}
	if seen.Load() != 200 {
		t.Fatalf("the stage saw %d elements, want 200", seen.Load())
	}
	checkOutcomes(t, g)
	var done, fails uint64
	for _, s := range g.Stats() {
		if s.Stage == "boom" {
			done, fails = done+s.Done, fails+s.Failed
		}
	}
	if done != 180 || fails != 20 {
		t.Fatalf("boom: done %d failed %d", done, fails)
	}
}

// TestBackpressureBounded: with a sink that does not take, the elements
// admitted but not delivered stay within what the rings hold, and the
// source's Send blocks (until its context ends) instead of buffering.
func TestBackpressureBounded(t *testing.T) {
	ctx := testCtx(t)
	const capacity, batch = 2, 4
	var once sync.Once
	g := newGraph(t, WithCapacity(capacity), WithBatch(batch), WithErrorHandler(func(e *StageError) { once.Do(func() { t.Log(e) }) }))
	src := NewSource[int](g, "n")
	double := FlatMap(g, "double", func(v int, out *Emitter[int]) error {
		out.Emit(v)
		out.Emit(v)
		return nil
	})
	release := make(chan struct{})
	var took atomic.Int64
	out := ToFunc(g, "slow", func(ctx context.Context, v int) error {
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		took.Add(1)
		return nil
	})
	Connect(src, double)
	Connect(double, out)
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	sent := 0
	for {
		sctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		err := src.Send(sctx, sent)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		sent++
		if sent > 10_000 {
			t.Fatal("the source never blocked: unbounded buffering")
		}
	}
	// Each stage holds at most its ring and overflow (2·capacity packets of
	// batch elements), one packet in hand, and its emitter's pending one.
	perStage := (2*capacity + 2) * batch
	t.Logf("%+v", g.Stats())
	if bound := 2 * perStage; sent > bound {
		t.Fatalf("%d elements admitted before the source blocked, bound %d", sent, bound)
	}
	close(release)
	if err := g.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if took.Load() != int64(2*sent) {
		t.Fatalf("the sink took %d, want %d", took.Load(), 2*sent)
	}
	checkOutcomes(t, g)
}

// TestFanInKeepsEachUpstreamsOrder: three sources into one stage; each
// source's elements arrive in order, and the merged watermark is the
// minimum of the three.
func TestFanInKeepsEachUpstreamsOrder(t *testing.T) {
	ctx := testCtx(t)
	g := newGraph(t, WithBatch(3))
	var srcs []*Source[word]
	for i := range 3 {
		srcs = append(srcs, NewSource[word](g, fmt.Sprint("s", i)).EventTime(func(w word) int64 { return w.TS }, 0))
	}
	var mu sync.Mutex
	var wms []int64
	merge := NewStage(g, "merge", func() Funcs[word, word] {
		return Funcs[word, word]{
			Element: func(_ *Context, v word, out *Emitter[word]) error { out.Emit(v); return nil },
			Watermark: func(_ *Context, wm int64, _ *Emitter[word]) error {
				mu.Lock()
				defer mu.Unlock()
				wms = append(wms, wm)
				return nil
			},
		}
	})
	out, ch := ToChan[word](g, "out", 0)
	for _, s := range srcs {
		Connect(s, merge)
	}
	Connect(merge, out)
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	got := collect(ch)
	var wg sync.WaitGroup
	for i, s := range srcs {
		wg.Go(func() {
			for j := range 300 {
				// source i's clock runs at 10^i ms a step: s0 is the slowest
				if err := s.Send(ctx, word{W: fmt.Sprint(i), TS: int64(j) * [3]int64{1, 10, 100}[i]}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	mu.Lock()
	before := slices.Clone(wms)
	mu.Unlock()
	if err := g.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	last := map[string]int64{}
	n := 0
	for _, w := range <-got {
		if p, ok := last[w.W]; ok && w.TS <= p {
			t.Fatalf("source %s out of order: %d after %d", w.W, w.TS, p)
		}
		last[w.W] = w.TS
		n++
	}
	if n != 900 {
		t.Fatalf("%d elements, want 900", n)
	}
	// While every source runs, the merged watermark never passes the
	// slowest source's newest time (299); once they have all ended it is
	// math.MaxInt64.
	if len(before) == 0 || slices.Max(before) > 299 || !slices.IsSorted(wms) || wms[len(wms)-1] != 1<<63-1 {
		t.Fatalf("watermarks before the drain %v, all %v", before[max(0, len(before)-5):], wms[max(0, len(wms)-5):])
	}
}

func TestBroadcastAndRoundRobin(t *testing.T) {
	ctx := testCtx(t)
	g := newGraph(t)
	src := NewSource[int](g, "n")
	tag := func(name string) *Stage[int, string] {
		return NewStage(g, name, func() Funcs[int, string] {
			return Funcs[int, string]{Element: func(c *Context, v int, out *Emitter[string]) error {
				out.Emit(fmt.Sprintf("%s%d:%d", name, c.Instance(), v))
				return nil
			}}
		}, Parallelism(3))
	}
	all, rr := tag("b"), tag("r")
	out, ch := ToChan[string](g, "out", 0)
	Connect(src, all, Broadcast[int]())
	Connect(src, rr) // a second edge from the same source gets every element too
	Connect(all, out)
	Connect(rr, out)
	got := runInts(t, ctx, g, src, ch, 30)
	per := map[string]int{}
	for _, s := range got {
		per[s[:2]]++
	}
	want := map[string]int{"b0": 30, "b1": 30, "b2": 30, "r0": 10, "r1": 10, "r2": 10}
	if fmt.Sprint(per) != fmt.Sprint(want) {
		t.Fatalf("per instance %v, want %v", per, want)
	}
}

// TestProcessingTimeTimer: a stage that counts and emits its count on a
// processing-time timer, not on every element.
func TestProcessingTimeTimer(t *testing.T) {
	ctx := testCtx(t)
	g := newGraph(t)
	src := NewSource[int](g, "n")
	ticker := NewStage(g, "tick", countingTicker(7, false))
	out, ch := ToChan[int](g, "out", 0)
	Connect(src, ticker)
	Connect(ticker, out)
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := src.Send(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	// The timer fires without any further element: the count comes out.
	for got := 0; got < 5; {
		select {
		case got = <-ch:
		case <-ctx.Done():
			t.Fatal("the timer never fired")
		}
	}
	if err := src.Send(ctx, 5); err != nil {
		t.Fatal(err)
	}
	if got := <-ch; got != 6 {
		t.Fatalf("second tick: %d, want 6", got)
	}
	if err := g.Drain(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestStopWithoutDrain: Stop with elements in flight and a sink nobody
// reads: every admitted element gets an outcome, nothing leaks. With
// chaining the sink runs on its upstream's loop, blocked in an emit to a
// reader that never comes: that wait ends with ErrStopped as the blocked
// element's outcome, and Stop still returns.
func TestStopWithoutDrain(t *testing.T) {
	for _, chained := range []bool{false, true} {
		t.Run(fmt.Sprintf("chained=%v", chained), func(t *testing.T) {
			ctx := testCtx(t)
			g := newGraph(t, WithCapacity(2), WithBatch(2), WithChaining(chained))
			src := NewSource[int](g, "n")
			m := Map(g, "m", func(v int) (int, error) { return v, nil })
			out, _ := ToChan[int](g, "out", 0) // never read
			Connect(src, m)
			Connect(m, out)
			if err := sendUntilStopped(t, ctx, g, src, 2); !errors.Is(err, ErrClosed) && !errors.Is(err, context.Canceled) && !errors.Is(err, ErrStopped) {
				t.Fatalf("the blocked Send ended with %v", err)
			}
			checkOutcomes(t, g)
			if !chained {
				return
			}
			if s := g.Stats()[2]; !s.Chained || s.In == 0 || s.Failed == 0 {
				t.Fatalf("out: %+v, want chained, with its blocked element failed", s)
			}
			if err := g.Err(); !errors.Is(err, ErrStopped) {
				t.Fatalf("Err: %v, want ErrStopped", err)
			}
		})
	}
}

// TestDrainRacesStop: Stop while a Drain waits on a sink nobody reads ends
// the Drain with ErrStopped; every admitted element has an outcome.
func TestDrainRacesStop(t *testing.T) {
	ctx := testCtx(t)
	g := newGraph(t, WithCapacity(2), WithBatch(2))
	src := NewSource[int](g, "n")
	out, ch := ToChan[int](g, "out", 0)
	Connect(src, out)
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := src.Send(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	<-ch // the sink has taken one and waits with the next
	drained := make(chan error, 1)
	go func() { drained <- g.Drain(ctx) }()
	if err := g.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-drained; err != nil && !errors.Is(err, ErrStopped) && !errors.Is(err, ErrClosed) {
		t.Fatalf("Drain: %v", err)
	}
	checkOutcomes(t, g)
	for range ch { // closed by Stop
	}
}
