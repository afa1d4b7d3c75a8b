package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"

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
	cpu0 := cpuSince(b, 0)
	for b.Loop() {
		if _, err := sensor.RunIn(ctx, rt, cfg, bytes.NewReader(data), io.Discard, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(cpuSince(b, cpu0)/float64(b.N)*1e3, "cpu-ms/op")
}

// BenchmarkStreamChannels runs the stream measure's baseline
// (sensor.RunChannels) and reports rows per second.
func BenchmarkStreamChannels(b *testing.B) {
	const rows = 300_000
	data, cfg := benchStreamInput(b, rows)
	ctx := context.Background()
	cpu0 := cpuSince(b, 0)
	for b.Loop() {
		if _, err := sensor.RunChannels(ctx, cfg, bytes.NewReader(data), io.Discard, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(cpuSince(b, cpu0)/float64(b.N)*1e3, "cpu-ms/op")
}

func BenchmarkStreamGraphWait(b *testing.B) {
	const rows = 300_000
	data, cfg := benchStreamInput(b, rows)
	ctx := context.Background()
	rt, err := actors.NewRuntime(actors.WithLogger(actors.DiscardLogger()))
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = rt.Close(ctx) }()
	for _, y := range []int{128, 32, 8, 0} {
		b.Run(fmt.Sprint(y), func(b *testing.B) {
			cpu0 := cpuSince(b, 0)
			for b.Loop() {
				if _, err := sensor.RunGraph(ctx, cfg, bytes.NewReader(data), io.Discard, io.Discard, sensor.GraphOptions{Runtime: rt, Stream: []stream.Option{stream.WithWaitStrategy(ring.WaitStrategy{Yields: y})}}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(cpuSince(b, cpu0)/float64(b.N)*1e3, "cpu-ms/op")
		})
	}
}

// cpuSince is the process's CPU time (user and system) in seconds, less base.
func cpuSince(b *testing.B, base float64) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano()+ru.Stime.Nano()).Seconds() - base
}
