package sensor

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/messages"
	"github.com/ringactor/ringactor/stream"
)

// Reading is the element that flows from parse to window in the stream
// graph: one accepted row (Reject 0), or one rejected row, in line order.
// It is 32 bytes and holds no pointer (the names and the reasons stay with
// the run), so the packets that carry readings cost the garbage collector
// nothing to scan and parse writes them without write barriers.
type Reading struct {
	TS     int64   // timestamp, ms (math.MinInt64 for a reject)
	V      float64 // the value (for RejectOverflow, the value before scaling)
	Line   int64   // input line number
	Sensor uint32  // parse's intern id of the sensor name: 0, 1, … in order of first appearance
	// Reject is 0 for an accepted row, RejectOverflow for a row whose scaled
	// value overflows (a scale stage sets it), and another number for a row
	// parse rejected (the rejects sink gets its reason from the run).
	Reject uint32
}

func init() {
	messages.MustRegister[Reading]("ringactor.stream.sensor.Reading")
	messages.MustRegister[WindowStat]("ringactor.stream.sensor.WindowStat")
}

// ScaleStage declares the graph's scale stage: Reading in, Reading out,
// v' = v·Scale + Offset, in order. DefaultScaleStage is a CPU stage; a
// device version may replace it (GraphOptions.Scale): stream.NewKernelStage
// makes an actors kernel of Reading a stage, and a kernel of batches fits
// in a stream.NewStage whose Element collects readings and whose Flush (end
// of each packet) requests the batch and emits the results.
type ScaleStage func(g *stream.Graph, cfg Config) *stream.Stage[Reading, Reading]

// DefaultScaleStage is the scale stage on the CPU: a stateless stage that
// scales each accepted reading in place and passes every reading on
// (stream.MapInPlace: a loop over each packet's readings, as the channel
// pipeline's scale loops over a batch's rows; the packet itself travels on
// to the window stage, nothing is copied).
func DefaultScaleStage(g *stream.Graph, cfg Config) *stream.Stage[Reading, Reading] {
	scale, offset := cfg.Scale, cfg.Offset
	return stream.MapInPlace(g, "scale", func(rs []Reading) error {
		for i := range rs {
			if r := &rs[i]; r.Reject == 0 {
				v := r.V
				r.V = scaled(v, scale, offset)
				rejectOverflow(r, v)
			}
		}
		return nil
	})
}

// GraphBatch is RunGraph's packet size: a chunk's some 4,500 readings
// travel from parse to scale in two packets (4,096 and the rest, sent at the
// end of the chunk), so that the scale loop is woken twice a chunk. In
// interleaved runs (BenchmarkStreamGraphBatch, three sets of 8–12 rounds),
// 4,096 took 5–12 % less CPU and less wall time than 1,024 (8,192, one
// packet a chunk, no less than 4,096); earlier, 1,024 had taken a fifth to
// a third less wall time than 256. With RingCapacity 8 the scale loop
// holds at most 2·8·4,096 readings it has not handled (some 3 MB).
const GraphBatch = 4096

// graphWait is the idle strategy of RunGraph's loops (stream.WithWaitStrategy;
// GraphOptions.Stream may set another): park at once when there is no
// packet, as a goroutine of the channel pipeline blocks on its channel.
// The graph's loops are stages fed by packets of thousands of readings and
// never wait for a reply, so the yields of ring.DefaultWaitStrategy (up to
// 128 before parking, for request/reply round trips) only burn CPU while
// the window's loop waits for parse: in 40 interleaved pairs of runs (300,000
// rows, the bench's stream measure, three sets at load averages 13–16)
// the graph's CPU per row against the channel pipeline's was 1.035–1.044×
// parking at once against 1.053–1.070× with the default, at the same rate.
var graphWait = ring.WaitStrategy{}

// GraphOptions tune RunGraph.
type GraphOptions struct {
	// Runtime runs the graph's kernels; nil: a runtime of its own, made
	// with RuntimeOptions and closed before RunGraph returns.
	Runtime        *actors.Runtime
	RuntimeOptions []actors.Option
	// Scale declares the scale stage (nil: DefaultScaleStage).
	Scale ScaleStage
	// Batch is how many readings travel in one packet between stages
	// (0: GraphBatch).
	Batch int
	// Stream are more options of the graph (stream.WithWaitStrategy…:
	// without one, the loops park at once when idle).
	Stream []stream.Option
}

// RunGraph is the pipeline as a stream graph (package stream), with the
// same input, output and rejects as Run:
//
//	reader ─chunks─▶ parse ─readings─▶ scale ─▶ window ─windows─▶ out
//	                                              └─ late and rejected rows ─▶ rejects
//
// scale's output carries event time in streaming mode (the watermark is the
// newest timestamp minus the lateness; a ScaleStage must pass the readings
// on one for one, in order), parse writes each reading in place in the
// packet that carries it (Emitter.Next), window is the library's tumbling window
// stage (stream.Window) whose side output carries the late rows and, in line
// order with them, the rows parse rejected. parse runs on a loop of its
// own; scale starts a second one (Stage.StartChain), on which window and
// the sinks are chained.
func RunGraph(ctx context.Context, cfg Config, in io.Reader, out, rejects io.Writer, o GraphOptions) (st Stats, err error) {
	if err := cfg.Validate(); err != nil {
		return Stats{}, err
	}
	cfg = cfg.withDefaults()
	p := newPools(cfg.ChunkBytes)
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	opts := []stream.Option{stream.WithCapacity(cfg.RingCapacity), stream.WithBatch(cmp.Or(o.Batch, GraphBatch)), stream.WithWaitStrategy(graphWait), stream.WithErrorHandler(func(e *stream.StageError) {
		cancel(e) // any failure ends the run
	})}
	rt := o.Runtime
	if rt == nil && cfg.DeviceScale && o.Scale == nil {
		// The device scale kernel must launch before the graph is declared:
		// a runtime of the run's own, closed after the graph has stopped.
		if rt, err = actors.NewRuntime(o.RuntimeOptions...); err != nil {
			return Stats{}, fmt.Errorf("sensor: start runtime: %w", err)
		}
		defer func() {
			cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
			defer ccancel()
			if cerr := rt.Close(cctx); cerr != nil {
				err = errors.Join(err, fmt.Errorf("sensor: close runtime: %w", cerr))
			}
		}()
	}
	if rt != nil {
		opts = append(opts, stream.WithRuntime(rt))
	} else {
		opts = append(opts, stream.WithRuntimeOptions(o.RuntimeOptions...))
	}
	scaleFn, scalePlacement := o.Scale, actors.PlacementCPU
	if cfg.DeviceScale && scaleFn == nil {
		dev, err := launchDeviceScale(ctx, rt, fmt.Sprintf("sensor.%d.scale.device", runs.Add(1)))
		if err != nil {
			return Stats{}, err
		}
		defer func() {
			tctx, tcancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
			defer tcancel()
			if terr := dev.Terminate(tctx); terr != nil {
				err = errors.Join(err, fmt.Errorf("sensor: terminate the device scale kernel: %w", terr))
			}
		}()
		scaleFn, scalePlacement = DeviceScaleStage(dev), dev.Placement()
	}
	g := stream.New(append(opts, o.Stream...)...)
	defer func() {
		sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
		defer scancel()
		if serr := g.Stop(sctx); serr != nil {
			err = errors.Join(err, fmt.Errorf("sensor: stop: %w", serr))
		}
	}()

	table := newRunTable()
	ps := &parser{window: cfg.WindowMS, pools: p, ids: make(map[string]uint32), table: table}
	var scratch Batch // parse makes readings, not the batch: it only collects new names
	ps.asReadings = true
	src := stream.NewSource[Chunk](g, "read")
	parse := stream.FlatMap(g, "parse", func(c Chunk, out *stream.Emitter[Reading]) error {
		if c.Final {
			return nil
		}
		scratch.NewNames = scratch.NewNames[:0]
		ps.out = out // each reading is written in place in the packet (Emitter.Next)
		ps.parse(c.Data, c.Line, &scratch)
		ps.out = nil
		p.putChunk(c.buf)
		return nil
	})
	if scaleFn == nil {
		scaleFn = DefaultScaleStage
	}
	// parse runs on a loop of its own; scale, window and the sinks are
	// chained on a second one (stream's operator chaining), so that the
	// two halves work in parallel, as the channel pipeline's goroutines do.
	scale := scaleFn(g, cfg).StartChain()
	if cfg.Streaming {
		// Event time is assigned on scale's output rather than parse's: scale
		// passes the readings on one for one, in order, so the watermarks
		// fall between the same readings, and the per-reading work of
		// tracking the watermark leaves parse, the busiest stage, and is
		// done once instead of twice (assigned at parse, then forwarded by
		// scale).
		// EventTimes: one call a packet reads the readings' times.
		scale.EventTimes(func(rs []Reading, ts []int64) {
			for i := range rs {
				ts[i] = rs[i].TS
			}
		}, cfg.LatenessMS)
	}
	win, side := stream.Window(g, "window", stream.WindowSpec[Reading, uint32, agg, WindowStat]{
		Size: cfg.WindowMS,
		Time: func(r Reading) int64 { return r.TS },
		Key:  func(r Reading) uint32 { return r.Sensor },
		Slot: func(r Reading) int { return int(r.Sensor) },
		Skip: func(r Reading) bool { return r.Reject != 0 },
		// Time, Key, Slot and Skip in one call by reference: the window
		// stage calls it instead of those four.
		Locate: func(r *Reading) (int64, uint32, int, bool) {
			return r.TS, r.Sensor, int(r.Sensor), r.Reject != 0
		},
		Add: func(a *agg, r Reading) { a.add(r.V) },
		// One call a run of readings: the fold is inlined in this loop.
		AddBatch: func(accs []*agg, rs []Reading) {
			for i, a := range accs {
				if a != nil {
					a.add(rs[i].V)
				}
			}
		},
		Result: func(sensor uint32, s stream.Span, a *agg) WindowStat {
			return WindowStat{Sensor: table.sensorNames()[sensor], Start: s.Start, Count: a.count, Min: a.min, Max: a.max, Mean: a.mean()}
		},
		Order: func(a, b uint32) int {
			names := table.sensorNames()
			return cmp.Compare(names[a], names[b])
		},
	})

	// The window sink writes the CSV: as windows close in streaming mode,
	// all of them sorted by sensor, then start at the end otherwise.
	var windows int64
	bout := bufio.NewWriterSize(out, 64<<10)
	var held []WindowStat
	var line []byte
	outSink := stream.NewStage(g, "sink", func() stream.Funcs[WindowStat, struct{}] {
		wrote := false
		return stream.Funcs[WindowStat, struct{}]{
			Element: func(_ *stream.Context, w WindowStat, _ *stream.Emitter[struct{}]) error {
				if !cfg.Streaming {
					held = append(held, w)
					return nil
				}
				if rctx.Err() != nil {
					return nil // the run has failed: write no more
				}
				line = appendWindow(line[:0], &w)
				bout.Write(line)
				windows++
				wrote = true
				return nil
			},
			Flush: func(*stream.Context, *stream.Emitter[struct{}]) error {
				if !wrote {
					return nil
				}
				wrote = false
				if err := bout.Flush(); err != nil {
					return fmt.Errorf("write output: %w", err)
				}
				return nil
			},
		}
	})
	// The rejects sink writes "line N: reason" in line order.
	var rejected, late int64
	brej := bufio.NewWriterSize(rejects, 4<<10)
	rejSink := stream.NewStage(g, "rejects", func() stream.Funcs[stream.Late[Reading], struct{}] {
		wrote := false
		var stopped error // the failure that has stopped the sink: it writes no more
		return stream.Funcs[stream.Late[Reading], struct{}]{
			Element: func(_ *stream.Context, l stream.Late[Reading], _ *stream.Emitter[struct{}]) error {
				if stopped != nil {
					return stopped
				}
				r := &l.Value
				var reason string
				switch {
				case l.Skipped && r.Reject == RejectOverflow:
					reason = overflowReason(r.V, cfg.Scale, cfg.Offset, scaled(r.V, cfg.Scale, cfg.Offset))
				case l.Skipped:
					reason = table.takeReason(r.Reject)
				default:
					late++
					start, _ := windowStart(r.TS, cfg.WindowMS)
					reason = fmt.Sprintf("late event for window %d of sensor %s: newest timestamp %d ≥ window end %d + lateness %d",
						start, quote(table.sensorNames()[r.Sensor]), l.Watermark+cfg.LatenessMS, start+cfg.WindowMS, cfg.LatenessMS)
				}
				fmt.Fprintf(brej, "line %d: %s\n", r.Line, reason)
				rejected++
				wrote = true
				if cfg.LimitRejects && rejected > cfg.MaxRejects {
					if err := brej.Flush(); err != nil {
						stopped = fmt.Errorf("write rejects: %w", err)
						return stopped
					}
					stopped = fmt.Errorf("%w: more than %d (stopped at line %d)", ErrTooManyRejects, cfg.MaxRejects, r.Line)
					return stopped
				}
				return nil
			},
			Flush: func(*stream.Context, *stream.Emitter[struct{}]) error {
				if !wrote {
					return nil
				}
				wrote = false
				if err := brej.Flush(); err != nil {
					return fmt.Errorf("write rejects: %w", err)
				}
				return nil
			},
		}
	})
	for _, err := range []error{
		stream.Connect(src, parse), stream.Connect(parse, scale), stream.Connect(scale, win),
		stream.Connect(win, outSink), stream.Connect(side, rejSink),
	} {
		if err != nil {
			return Stats{}, fmt.Errorf("sensor: %w", err)
		}
	}
	if err := g.Start(rctx); err != nil {
		return Stats{}, fmt.Errorf("sensor: %w", err)
	}
	if cfg.OnStage != nil {
		// The graph's stages are CPU ring kernels; the scale stage's
		// arithmetic runs where its device kernel was placed.
		cfg.OnStage("parse", actors.PlacementCPU)
		cfg.OnStage("scale", scalePlacement)
		cfg.OnStage("window", actors.PlacementCPU)
		cfg.OnStage("sink", actors.PlacementCPU)
	}
	bout.WriteString(OutputHeader + "\n")
	if err := feedFunc(rctx, func(c Chunk) error { return src.Send(rctx, c) }, in, p); err != nil {
		return Stats{}, graphErr(ctx, rctx, err)
	}
	if err := g.Drain(rctx); err != nil {
		return Stats{}, graphErr(ctx, rctx, err)
	}
	if err := g.Err(); err != nil {
		return Stats{}, fmt.Errorf("sensor: %w", err)
	}
	// Without streaming every window was held: written now that the run
	// has succeeded, by sensor, then start.
	slices.SortFunc(held, bySensorStart)
	for i := range held {
		line = appendWindow(line[:0], &held[i])
		bout.Write(line)
	}
	windows += int64(len(held))
	if err := bout.Flush(); err != nil {
		return Stats{}, fmt.Errorf("sensor: write output: %w", err)
	}
	st = ps.stats
	st.Rejected = rejected // parse's, the late ones and those whose scaled value overflowed
	st.Late = late
	st.Windows = windows
	brej.WriteString(rejectedLine(st.Rejected))
	if err := brej.Flush(); err != nil {
		return st, fmt.Errorf("sensor: write rejects: %w", err)
	}
	return st, nil
}

// graphErr is the error that ended a run: a stage's failure when one
// cancelled rctx, else err.
func graphErr(ctx, rctx context.Context, err error) error {
	if cause := context.Cause(rctx); cause != nil && rctx.Err() != nil && ctx.Err() == nil {
		err = cause
	}
	return fmt.Errorf("sensor: %w", err)
}
