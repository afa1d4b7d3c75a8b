package stream

import (
	"context"
	"errors"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Instrument names of the per-stage telemetry, observed from the graph's
// counters on the runtime's meter (telemetry.ScopeName). Each has the
// attributes AttrStage and AttrInstance.
const (
	// StageIn is an Int64ObservableCounter of the elements admitted into
	// a stage instance (its rate is the input rate).
	StageIn = "ringactor.stream.stage.in"
	// StageOut is an Int64ObservableCounter of the elements a stage
	// instance (or source) emitted.
	StageOut = "ringactor.stream.stage.out"
	// StageFailed is an Int64ObservableCounter of elements whose outcome
	// is an error.
	StageFailed = "ringactor.stream.stage.failed"
	// StageLate is an Int64ObservableCounter of the elements a window
	// stage instance found late (sent to its side output).
	StageLate = "ringactor.stream.stage.late"
	// StageDepth is an Int64ObservableGauge of the packets queued in a
	// stage instance's ring kernel.
	StageDepth = "ringactor.stream.stage.depth"
	// StageWatermarkLag is an Int64ObservableGauge of how far a stage
	// instance's watermark is behind the wall clock, in milliseconds (for
	// event time in Unix milliseconds); absent before the first watermark.
	StageWatermarkLag = "ringactor.stream.stage.watermark_lag"

	// AttrStage names the stage; AttrInstance is the instance's index.
	AttrStage    = "stage"
	AttrInstance = "instance"
)

// telemetryReg is a graph's registered observation callback.
type telemetryReg struct {
	reg metric.Registration
}

// registerTelemetry observes g's counters on its runtime's meter; the
// registration ends at Stop. It returns nil when the instruments cannot be
// made (telemetry is then only Stats).
func registerTelemetry(g *Graph) *telemetryReg {
	m := g.rt.Telemetry().Meter()
	var errs []error
	mk := func(name, desc, unit string) metric.Int64ObservableCounter {
		c, err := m.Int64ObservableCounter(name, metric.WithDescription(desc), metric.WithUnit(unit))
		errs = append(errs, err)
		return c
	}
	in := mk(StageIn, "Elements admitted into a stream stage instance.", "{element}")
	out := mk(StageOut, "Elements emitted by a stream stage instance or source.", "{element}")
	failed := mk(StageFailed, "Elements whose outcome in a stream stage is an error.", "{element}")
	late := mk(StageLate, "Elements a stream window stage found late.", "{element}")
	depth, err := m.Int64ObservableGauge(StageDepth, metric.WithDescription("Packets queued in a stream stage instance's ring."), metric.WithUnit("{packet}"))
	errs = append(errs, err)
	lag, err := m.Int64ObservableGauge(StageWatermarkLag, metric.WithDescription("How far a stream stage instance's watermark is behind the wall clock."), metric.WithUnit("ms"))
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		g.cfg.log.Warn("stream: no stage telemetry", "err", err)
		return nil
	}
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		for _, s := range g.Stats() {
			set := metric.WithAttributes(attribute.String(AttrStage, s.Stage), attribute.String(AttrInstance, strconv.Itoa(s.Instance)))
			o.ObserveInt64(in, int64(s.In), set)
			o.ObserveInt64(out, int64(s.Out), set)
			o.ObserveInt64(failed, int64(s.Failed), set)
			o.ObserveInt64(late, int64(s.Late), set)
			o.ObserveInt64(depth, s.Depth, set)
			if s.WatermarkLag != 0 {
				o.ObserveInt64(lag, s.WatermarkLag, set)
			}
		}
		return nil
	}, in, out, failed, late, depth, lag)
	if err != nil {
		g.cfg.log.Warn("stream: no stage telemetry", "err", err)
		return nil
	}
	return &telemetryReg{reg: reg}
}

// unregister ends the observation; nil does nothing.
func (t *telemetryReg) unregister() {
	if t != nil {
		_ = t.reg.Unregister()
	}
}
