package stream_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/stream"
)

// A source, a stage that emits zero or more words per line, and a channel
// sink: start, send, drain, stop.
func Example() {
	ctx := context.Background()
	g := stream.New(stream.WithRuntimeOptions(actors.WithLogger(actors.DiscardLogger())))
	lines := stream.NewSource[string](g, "lines")
	words := stream.FlatMap(g, "words", func(line string, out *stream.Emitter[string]) error {
		for w := range strings.FieldsSeq(line) {
			out.Emit(strings.ToUpper(w))
		}
		return nil
	})
	sink, ch := stream.ToChan[string](g, "out", 16)
	if err := stream.Connect(lines, words); err != nil {
		log.Fatal(err)
	}
	if err := stream.Connect(words, sink); err != nil {
		log.Fatal(err)
	}
	if err := g.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer func() {
		if err := g.Stop(ctx); err != nil {
			log.Fatal(err)
		}
	}()
	if err := lines.Send(ctx, "ring kernels"); err != nil {
		log.Fatal(err)
	}
	if err := lines.Send(ctx, ""); err != nil {
		log.Fatal(err)
	}
	if err := lines.Send(ctx, "stream graphs"); err != nil {
		log.Fatal(err)
	}
	// ch has room for everything; otherwise read it meanwhile
	if err := g.Drain(ctx); err != nil {
		log.Fatal(err)
	}
	for w := range ch {
		fmt.Println(w)
	}
	// Output:
	// RING
	// KERNELS
	// STREAM
	// GRAPHS
}

type reading struct {
	Sensor string
	TS     int64
	V      float64
}

// A keyed tumbling window over event time: readings are counted per sensor
// in 10 ms windows; the reading that comes after its window has closed goes
// to the side output.
func ExampleWindow() {
	ctx := context.Background()
	g := stream.New(stream.WithRuntimeOptions(actors.WithLogger(actors.DiscardLogger())))
	src := stream.NewSource[reading](g, "readings").EventTime(func(r reading) int64 { return r.TS }, 0)
	win, late := stream.Window(g, "count", stream.WindowSpec[reading, string, int, string]{
		Size: 10,
		Time: func(r reading) int64 { return r.TS },
		Key:  func(r reading) string { return r.Sensor },
		Add:  func(n *int, _ reading) { *n++ },
		Result: func(s string, w stream.Span, n *int) string {
			return fmt.Sprintf("%s [%d,%d): %d", s, w.Start, w.End, *n)
		},
		Order: strings.Compare,
	})
	out, ch := stream.ToChan[string](g, "out", 16)
	lateOut, lateCh := stream.ToChan[stream.Late[reading]](g, "late", 16)
	if err := stream.Connect(src, win); err != nil {
		log.Fatal(err)
	}
	if err := stream.Connect(win, out); err != nil {
		log.Fatal(err)
	}
	if err := stream.Connect(late, lateOut); err != nil {
		log.Fatal(err)
	}
	if err := g.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer func() {
		if err := g.Stop(ctx); err != nil {
			log.Fatal(err)
		}
	}()
	src.SendAll(ctx, reading{"a", 1, 0}, reading{"b", 3, 0}, reading{"a", 7, 0}, reading{"a", 12, 0}, reading{"b", 4, 0})
	if err := g.Drain(ctx); err != nil {
		log.Fatal(err)
	}
	for s := range ch {
		fmt.Println(s)
	}
	for l := range lateCh {
		fmt.Println("late:", l.Value.Sensor, l.Value.TS, "watermark", l.Watermark)
	}
	// Output:
	// a [0,10): 2
	// b [0,10): 1
	// a [10,20): 1
	// late: b 4 watermark 12
}

// Operator chaining: a stage fed by one instance of a stage runs on that
// stage's loop (out runs on double's), unless StartChain gives it a loop
// of its own: double then works in parallel with parse. (parse has a loop:
// its upstream is a source.)
func ExampleStage_StartChain() {
	ctx := context.Background()
	g := stream.New(stream.WithRuntimeOptions(actors.WithLogger(actors.DiscardLogger())))
	src := stream.NewSource[string](g, "text")
	parse := stream.Map(g, "parse", func(s string) (int, error) { return len(s), nil })
	double := stream.Map(g, "double", func(n int) (int, error) { return 2 * n, nil }).StartChain()
	sink, ch := stream.ToChan[int](g, "out", 16)
	if err := stream.Connect(src, parse); err != nil {
		log.Fatal(err)
	}
	if err := stream.Connect(parse, double); err != nil {
		log.Fatal(err)
	}
	if err := stream.Connect(double, sink); err != nil {
		log.Fatal(err)
	}
	if err := g.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer func() {
		if err := g.Stop(ctx); err != nil {
			log.Fatal(err)
		}
	}()
	src.SendAll(ctx, "ring", "kernel")
	if err := g.Drain(ctx); err != nil {
		log.Fatal(err)
	}
	for n := range ch {
		fmt.Println(n)
	}
	for _, s := range g.Stats() {
		fmt.Printf("%s chained: %v\n", s.Stage, s.Chained)
	}
	// Output:
	// 8
	// 12
	// text chained: false
	// parse chained: false
	// double chained: false
	// out chained: true
}

// A stage that changes elements where they lie: its function gets each
// packet's elements at once (here the three readings sent together), and
// the packet goes on to the sink as it is.
func ExampleMapInPlace() {
	ctx := context.Background()
	g := stream.New(stream.WithRuntimeOptions(actors.WithLogger(actors.DiscardLogger())))
	src := stream.NewSource[reading](g, "readings")
	calibrate := stream.MapInPlace(g, "calibrate", func(rs []reading) error {
		fmt.Println("packet of", len(rs))
		for i := range rs {
			rs[i].V = rs[i].V*2 + 1
		}
		return nil
	})
	sink, ch := stream.ToChan[reading](g, "out", 16)
	if err := stream.Connect(src, calibrate); err != nil {
		log.Fatal(err)
	}
	if err := stream.Connect(calibrate, sink); err != nil {
		log.Fatal(err)
	}
	if err := g.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer func() {
		if err := g.Stop(ctx); err != nil {
			log.Fatal(err)
		}
	}()
	src.SendAll(ctx, reading{"a", 1, 1}, reading{"b", 2, 2}, reading{"a", 3, 3})
	if err := g.Drain(ctx); err != nil {
		log.Fatal(err)
	}
	for r := range ch {
		fmt.Println(r.Sensor, r.V)
	}
	// Output:
	// packet of 3
	// a 3
	// b 5
	// a 7
}

type point struct{ X, Y int }

// A stage that writes its outputs in place with Next: each slot comes
// zeroed, in the pending packet itself where the output feeds one
// instance, and is filled before the next call to the emitter.
func ExampleEmitter_Next() {
	ctx := context.Background()
	g := stream.New(stream.WithRuntimeOptions(actors.WithLogger(actors.DiscardLogger())))
	src := stream.NewSource[int](g, "n")
	grid := stream.FlatMap(g, "grid", func(n int, out *stream.Emitter[point]) error {
		for x := range n {
			p := out.Next()
			p.X, p.Y = x, n // fields not written stay zero
		}
		return nil
	})
	sink, ch := stream.ToChan[point](g, "out", 16)
	if err := stream.Connect(src, grid); err != nil {
		log.Fatal(err)
	}
	if err := stream.Connect(grid, sink); err != nil {
		log.Fatal(err)
	}
	if err := g.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer func() {
		if err := g.Stop(ctx); err != nil {
			log.Fatal(err)
		}
	}()
	src.SendAll(ctx, 2, 3)
	if err := g.Drain(ctx); err != nil {
		log.Fatal(err)
	}
	for p := range ch {
		fmt.Println(p)
	}
	// Output:
	// {0 2}
	// {1 2}
	// {0 3}
	// {1 3}
	// {2 3}
}
