package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/stream"
	"github.com/ringactor/ringactor/stream/sensor"
)

// benchRows is the generated input of the stream benchmarks.
const benchRows = 300_000

// benchStreamInput is the stream measure's input and configuration.
func benchStreamInput(b *testing.B, rows int) ([]byte, sensor.Config) {
	b.Helper()
	g := sensor.DefaultSynthetic()
	g.Rows = rows
	var data bytes.Buffer
	if err := sensor.Generate(&data, g); err != nil {
		b.Fatal(err)
	}
	cfg := sensor.DefaultConfig()
	cfg.Streaming, cfg.LatenessMS = true, 200
	return data.Bytes(), cfg
}

// benchRuntime returns a runtime for the graph runs of one benchmark, as an
// application keeps one; it is closed when the benchmark ends.
func benchRuntime(b *testing.B) *actors.Runtime {
	b.Helper()
	rt, err := actors.NewRuntime(actors.WithLogger(actors.DiscardLogger()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rt.Close(context.Background()) })
	return rt
}

// loopRows runs run once per iteration and reports rows per second and the
// process's CPU milliseconds per run.
func loopRows(b *testing.B, rows int, run func() error) {
	b.Helper()
	cpu0 := processCPU()
	for b.Loop() {
		if err := run(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
}

// BenchmarkStreamGraph runs the stream measure's graph (sensor.RunIn in one
// runtime) and reports rows per second; BenchmarkStreamChannels is its
// baseline.
func BenchmarkStreamGraph(b *testing.B) {
	data, cfg := benchStreamInput(b, benchRows)
	ctx, rt := context.Background(), benchRuntime(b)
	loopRows(b, benchRows, func() error {
		_, err := sensor.RunIn(ctx, rt, cfg, bytes.NewReader(data), io.Discard, io.Discard)
		return err
	})
}

// BenchmarkStreamChannels runs the stream measure's baseline
// (sensor.RunChannels) and reports rows per second.
func BenchmarkStreamChannels(b *testing.B) {
	data, cfg := benchStreamInput(b, benchRows)
	ctx := context.Background()
	loopRows(b, benchRows, func() error {
		_, err := sensor.RunChannels(ctx, cfg, bytes.NewReader(data), io.Discard, io.Discard)
		return err
	})
}

// BenchmarkStreamGraphBatch runs the graph with packets of several sizes
// (GraphOptions.Batch).
func BenchmarkStreamGraphBatch(b *testing.B) {
	data, cfg := benchStreamInput(b, benchRows)
	ctx, rt := context.Background(), benchRuntime(b)
	for _, y := range []int{256, 1024, 4096, 8192} {
		b.Run(fmt.Sprint(y), func(b *testing.B) {
			loopRows(b, benchRows, func() error {
				_, err := sensor.RunGraph(ctx, cfg, bytes.NewReader(data), io.Discard, io.Discard, sensor.GraphOptions{Runtime: rt, Batch: y})
				return err
			})
		})
	}
}

// BenchmarkStreamGraphWait runs the graph with several idle strategies of
// its loops (stream.WithWaitStrategy): how many yields before parking.
func BenchmarkStreamGraphWait(b *testing.B) {
	data, cfg := benchStreamInput(b, benchRows)
	ctx, rt := context.Background(), benchRuntime(b)
	for _, y := range []int{0, 8, 128} {
		b.Run(fmt.Sprint(y), func(b *testing.B) {
			o := sensor.GraphOptions{Runtime: rt, Stream: []stream.Option{stream.WithWaitStrategy(ring.WaitStrategy{Yields: y})}}
			loopRows(b, benchRows, func() error {
				_, err := sensor.RunGraph(ctx, cfg, bytes.NewReader(data), io.Discard, io.Discard, o)
				return err
			})
		})
	}
}

// BenchmarkStreamGraphFixed runs the graph and the channel pipeline over a
// tiny input: what a run costs besides its rows (launching and stopping).
func BenchmarkStreamGraphFixed(b *testing.B) {
	const rows = 1000
	data, cfg := benchStreamInput(b, rows)
	ctx, rt := context.Background(), benchRuntime(b)
	b.Run("graph", func(b *testing.B) {
		loopRows(b, rows, func() error {
			_, err := sensor.RunIn(ctx, rt, cfg, bytes.NewReader(data), io.Discard, io.Discard)
			return err
		})
	})
	b.Run("channels", func(b *testing.B) {
		loopRows(b, rows, func() error {
			_, err := sensor.RunChannels(ctx, cfg, bytes.NewReader(data), io.Discard, io.Discard)
			return err
		})
	})
}
