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
// watermark closes them): rows per second, medians of StreamSamples runs.
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
	var tg, tc []time.Duration
	for range StreamSamples { // interleaved, so that drift hits both
		d, err := timeRun(graph)
		if err != nil {
			return fmt.Errorf("stream graph: %w", err)
		}
		tg = append(tg, d)
		if d, err = timeRun(chans); err != nil {
			return fmt.Errorf("channel pipeline: %w", err)
		}
		tc = append(tc, d)
	}
	res.StreamRows = rows
	res.StreamRowsPerS = float64(rows) / median(tg).Seconds()
	res.ChanStreamRowsPerS = float64(rows) / median(tc).Seconds()
	res.StreamRatioVsChan = res.StreamRowsPerS / res.ChanStreamRowsPerS
	return nil
}

func timeRun(f func() error) (time.Duration, error) {
	start := time.Now()
	err := f()
	return time.Since(start), err
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
