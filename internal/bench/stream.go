package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/stream/sensor"
)

// DefaultStreamRows is the generated input of the stream measure when the
// configuration leaves StreamRows zero.
const DefaultStreamRows = 1_000_000

// StreamSamples is how many runs of each pipeline the stream measure times.
// A run of the quick measure's 300,000 rows takes some 30 ms, less than the
// load of a shared machine stays put, so the measure takes many short runs
// in pairs rather than a few.
const StreamSamples = 11

// Stream measures the sensor pipeline as a stream graph (sensor.RunIn, in
// one runtime for all runs) and as a hand-written goroutine-per-stage
// channel pipeline (sensor.RunChannels) over the same generated input, in
// streaming mode (windows emitted as the watermark closes them): rows per
// second and CPU time per row (medians of StreamSamples runs), and their
// ratios.
//
// The runs come in pairs, one of each pipeline, in alternating order (ABBA),
// each after a forced collection (so that neither pays for the other's
// garbage) and after one untimed run of each. A ratio is the median of the
// pairs' ratios: a pair's two runs are seconds apart at most, so a change of
// the machine's load between pairs weighs on both sides of each.
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
		if err != nil {
			return fmt.Errorf("stream graph: %w", err)
		}
		return nil
	}
	chans := func() error {
		_, err := sensor.RunChannels(ctx, cfg, bytes.NewReader(data.Bytes()), io.Discard, io.Discard)
		if err != nil {
			return fmt.Errorf("channel pipeline: %w", err)
		}
		return nil
	}
	for _, f := range []func() error{graph, chans} { // warm-up, untimed
		if err := f(); err != nil {
			return err
		}
	}
	var tg, tc, cg, cc []time.Duration
	var rate, cpu []float64 // per pair: graph over channels
	for i := range StreamSamples {
		runs := [2]func() error{graph, chans}
		if i%2 == 1 {
			runs[0], runs[1] = chans, graph
		}
		var wall, used [2]time.Duration
		for j, f := range runs {
			runtime.GC()
			if wall[j], used[j], err = timeRun(f); err != nil {
				return err
			}
		}
		if i%2 == 1 {
			wall[0], wall[1], used[0], used[1] = wall[1], wall[0], used[1], used[0]
		}
		tg, tc, cg, cc = append(tg, wall[0]), append(tc, wall[1]), append(cg, used[0]), append(cc, used[1])
		rate = append(rate, float64(wall[1])/float64(wall[0]))
		if used[0] > 0 && used[1] > 0 {
			cpu = append(cpu, float64(used[0])/float64(used[1]))
		}
	}
	res.StreamRows = rows
	res.StreamRowsPerS = float64(rows) / median(tg).Seconds()
	res.ChanStreamRowsPerS = float64(rows) / median(tc).Seconds()
	res.StreamRatioVsChan = medianFloat(rate)
	if g, c := median(cg), median(cc); g > 0 && c > 0 {
		res.StreamCPUNsPerRow = float64(g.Nanoseconds()) / float64(rows)
		res.ChanStreamCPUNsPerRow = float64(c.Nanoseconds()) / float64(rows)
		res.StreamCPURatioVsChan = medianFloat(cpu)
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

// medianFloat returns the median of v (0 when empty).
func medianFloat(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
