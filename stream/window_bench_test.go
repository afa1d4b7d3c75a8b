package stream

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/messages"
)

// reading is the window benchmark's element: the sensor graph's shape (32
// bytes, no pointer).
type reading struct {
	TS   int64
	V    float64
	Line int64
	Key  uint32
	Skip uint32
}

func init() {
	messages.MustRegister[reading]("stream.test.reading")
}

// benchReadings are n readings of 16 keys whose times rise by one a
// reading with up to 200 of jitter, one in 5,000 skipped: the sensor
// benchmark's input, where some 9 % of the elements advance the watermark.
func benchReadings(n int) []reading {
	rs := make([]reading, n)
	x := uint32(1)
	for i := range rs {
		x = x*1664525 + 1013904223
		rs[i] = reading{TS: int64(i) - int64(x>>8)%200, V: float64(x >> 16), Line: int64(i + 1), Key: uint32(i % 16)}
		if i%5000 == 4999 {
			rs[i].Skip = 1
		}
	}
	return rs
}

// readingWindow is the sensor graph's window over readings: 1,000 wide,
// keyed by slot, AddBatch, Locate.
func readingWindow() WindowSpec[reading, uint32, [2]float64, [2]float64] {
	return WindowSpec[reading, uint32, [2]float64, [2]float64]{
		Size: 1000,
		Time: func(r reading) int64 { return r.TS },
		Locate: func(r *reading) (int64, uint32, int, bool) {
			return r.TS, r.Key, int(r.Key), r.Skip != 0
		},
		Add: func(a *[2]float64, r reading) { a[0]++; a[1] += r.V },
		AddBatch: func(accs []*[2]float64, rs []reading) {
			for i, a := range accs {
				if a != nil {
					a[0]++
					a[1] += rs[i].V
				}
			}
		},
		Result: func(_ uint32, _ Span, a *[2]float64) [2]float64 { return *a },
	}
}

// BenchmarkWindowStream runs 300,000 readings through a MapInPlace stage
// with EventTimes (lateness 200) and a chained window with its late
// side output, as the sensor graph's second loop does, and reports the
// wall time and the process's CPU time per element (the source's sends run
// beside the loop; starting and stopping the graph is not timed).
func BenchmarkWindowStream(b *testing.B) {
	const n = 300_000
	in := benchReadings(n)
	ctx := context.Background()
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		g := New(WithBatch(4096), WithRuntimeOptions(actors.WithLogger(actors.DiscardLogger()), actors.WithTelemetry(false)))
		src := NewSource[reading](g, "read")
		scale := MapInPlace(g, "scale", func(rs []reading) error {
			for i := range rs {
				rs[i].V *= 2
			}
			return nil
		}).StartChain()
		scale.EventTimes(func(rs []reading, ts []int64) {
			for i := range rs {
				ts[i] = rs[i].TS
			}
		}, 200)
		win, late := Window(g, "window", readingWindow())
		var wins, lates int
		out := ToFunc(g, "out", func(context.Context, [2]float64) error { wins++; return nil })
		lateOut := ToFunc(g, "late", func(context.Context, Late[reading]) error { lates++; return nil })
		if err := errors.Join(Connect(src, scale), Connect(scale, win), Connect(win, out), Connect(late, lateOut)); err != nil {
			b.Fatal(err)
		}
		if err := g.Start(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		cpu0 := processCPU()
		for i := 0; i < n; i += 4096 {
			if err := src.SendAll(ctx, in[i:min(i+4096, n)]...); err != nil {
				b.Fatal(err)
			}
		}
		if err := g.Drain(ctx); err != nil {
			b.Fatal(err)
		}
		cpu += processCPU() - cpu0
		b.StopTimer()
		if err := g.Stop(ctx); err != nil {
			b.Fatal(err)
		}
		if wins == 0 || lates == 0 {
			b.Fatalf("%d windows, %d late", wins, lates)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/elem")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/n, "cpu-ns/elem")
}
