package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/examples/pipeline/sensor"
)

// DefaultStreamRows is the generated input of the stream measure when the
// configuration leaves StreamRows zero.
const DefaultStreamRows = 1_000_000

// StreamSamples is how many runs of each pipeline the stream measure times;
// the median counts.
const StreamSamples = 3

// Stream measures the sensor pipeline as a stream graph (sensor.RunIn, in
// one runtime for all runs) and as
// a hand-written goroutine-per-stage channel pipeline (sensor.RunChannels)
// over the same generated input, in streaming mode (windows emitted as the
// watermark closes them): rows per second and CPU time per row, medians of
// StreamSamples runs.
func Stream(ctx context.Context, rows int, res *Result) error {
	if rows <= 0 {
		rows = DefaultStreamRows
	}
	g := sensor.DefaultSynthetic()
	g.Rows = rows
	var data bytes.Buffer
	if err := sensor.Generate(&data, g); err != nil {
		return err
	}
	cfg := sensor.DefaultConfig()
	cfg.Streaming, cfg.LatenessMS = true, 200
	// One runtime for every graph run, as an application keeps one: a run
	// pays for launching its stages' kernels, not for a new actor system.
	rt, err := actors.NewRuntime(actors.WithLogger(actors.DiscardLogger()))
	if err != nil {
		return err
	}
	defer func() { _ = rt.Close(context.WithoutCancel(ctx)) }()
	graph := func() error {
		_, err := sensor.RunIn(ctx, rt, cfg, bytes.NewReader(data.Bytes()), io.Discard, io.Discard)
		return err
	}
	chans := func() error {
		_, err := sensor.RunChannels(ctx, cfg, bytes.NewReader(data.Bytes()), io.Discard, io.Discard)
		return err
	}
	var tg, tc, cg, cc []time.Duration
	for range StreamSamples { // interleaved, so that drift hits both
		d, cpu, err := timeRun(graph)
		if err != nil {
			return fmt.Errorf("stream graph: %w", err)
		}
		tg, cg = append(tg, d), append(cg, cpu)
		if d, cpu, err = timeRun(chans); err != nil {
			return fmt.Errorf("channel pipeline: %w", err)
		}
		tc, cc = append(tc, d), append(cc, cpu)
	}
	res.StreamRows = rows
	res.StreamRowsPerS = float64(rows) / median(tg).Seconds()
	res.ChanStreamRowsPerS = float64(rows) / median(tc).Seconds()
	res.StreamRatioVsChan = res.StreamRowsPerS / res.ChanStreamRowsPerS
	if g, c := median(cg), median(cc); g > 0 && c > 0 {
		res.StreamCPUNsPerRow = float64(g.Nanoseconds()) / float64(rows)
		res.ChanStreamCPUNsPerRow = float64(c.Nanoseconds()) / float64(rows)
		res.StreamCPURatioVsChan = res.StreamCPUNsPerRow / res.ChanStreamCPUNsPerRow
	}
	return nil
}

// timeRun runs f and returns the wall-clock time it took and the process's
// CPU time meanwhile (zero where the platform does not report it).
func timeRun(f func() error) (wall, cpu time.Duration, err error) {
	cpu0 := processCPU()
	start := time.Now()
	err = f()
	return time.Since(start), processCPU() - cpu0, err
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
