package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/examples/pipeline/sensor"
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/stream"
)

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

// BenchmarkStreamGraph runs the stream measure's graph (sensor.RunIn in one
// runtime) and reports rows per second; BenchmarkStreamChannels is its
// baseline.
func BenchmarkStreamGraph(b *testing.B) {
	const rows = 300_000
	data, cfg := benchStreamInput(b, rows)
	ctx := context.Background()
	rt, err := actors.NewRuntime(actors.WithLogger(actors.DiscardLogger()))
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = rt.Close(ctx) }()
	cpu0 := processCPU()
	for b.Loop() {
		if _, err := sensor.RunIn(ctx, rt, cfg, bytes.NewReader(data), io.Discard, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
}

// BenchmarkStreamChannels runs the stream measure's baseline
// (sensor.RunChannels) and reports rows per second.
func BenchmarkStreamChannels(b *testing.B) {
	const rows = 300_000
	data, cfg := benchStreamInput(b, rows)
	ctx := context.Background()
	cpu0 := processCPU()
	for b.Loop() {
		if _, err := sensor.RunChannels(ctx, cfg, bytes.NewReader(data), io.Discard, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
}

// BenchmarkStreamGraphBatch runs the graph with packets of several sizes
// (GraphOptions.Batch).
func BenchmarkStreamGraphBatch(b *testing.B) {
	const rows = 300_000
	data, cfg := benchStreamInput(b, rows)
	ctx := context.Background()
	rt, err := actors.NewRuntime(actors.WithLogger(actors.DiscardLogger()))
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = rt.Close(ctx) }()
	for _, y := range []int{256, 1024, 4096, 8192} {
		b.Run(fmt.Sprint(y), func(b *testing.B) {
			cpu0 := processCPU()
			for b.Loop() {
				if _, err := sensor.RunGraph(ctx, cfg, bytes.NewReader(data), io.Discard, io.Discard, sensor.GraphOptions{Runtime: rt, Batch: y}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}

// BenchmarkStreamGraphWait runs the graph with several idle strategies of
// its loops (stream.WithWaitStrategy): how many yields before parking.
func BenchmarkStreamGraphWait(b *testing.B) {
	const rows = 300_000
	data, cfg := benchStreamInput(b, rows)
	ctx := context.Background()
	rt, err := actors.NewRuntime(actors.WithLogger(actors.DiscardLogger()))
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = rt.Close(ctx) }()
	for _, y := range []int{0, 8, 128} {
		b.Run(fmt.Sprint(y), func(b *testing.B) {
			cpu0 := processCPU()
			o := sensor.GraphOptions{Runtime: rt, Stream: []stream.Option{stream.WithWaitStrategy(ring.WaitStrategy{Yields: y})}}
			for b.Loop() {
				if _, err := sensor.RunGraph(ctx, cfg, bytes.NewReader(data), io.Discard, io.Discard, o); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}

// BenchmarkStreamGraphFixed runs the graph and the channel pipeline over a
// tiny input: what a run costs besides its rows (launching and stopping).
func BenchmarkStreamGraphFixed(b *testing.B) {
	const rows = 1000
	data, cfg := benchStreamInput(b, rows)
	ctx := context.Background()
	rt, err := actors.NewRuntime(actors.WithLogger(actors.DiscardLogger()))
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = rt.Close(ctx) }()
	b.Run("graph", func(b *testing.B) {
		for b.Loop() {
			if _, err := sensor.RunIn(ctx, rt, cfg, bytes.NewReader(data), io.Discard, io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("channels", func(b *testing.B) {
		for b.Loop() {
			if _, err := sensor.RunChannels(ctx, cfg, bytes.NewReader(data), io.Discard, io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
}
