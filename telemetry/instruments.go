package telemetry

import (
	"errors"
	"sync"

	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// Instruments holds ringactor's meter, tracer and instruments. Its methods
// are safe for concurrent use; a nil *Instruments behaves like Disabled().
type Instruments struct {
	meter  metric.Meter
	tracer trace.Tracer

	disabled bool

	executions  metric.Int64Counter
	duration    metric.Float64Histogram
	transferred metric.Int64Counter

	memAllocated metric.Int64ObservableGauge
	ringDepth    metric.Int64ObservableGauge
	processed    metric.Int64ObservableCounter
	dropped      metric.Int64ObservableCounter
	restarts     metric.Int64ObservableCounter
	errs         metric.Int64ObservableCounter
	latency      metric.Float64ObservableGauge
	devKernels   metric.Int64ObservableGauge

	src      Source
	producer *Producer

	// execAttrs maps a kernel's name to its *kernelAttrs.
	execAttrs sync.Map

	closeOnce sync.Once
	closeErr  error
	reg       metric.Registration
}

// New creates every instrument on a meter and tracer named ScopeName and
// registers one callback that calls src once per collection to observe all
// observable instruments. src may be nil, in which case the observable
// instruments report nothing. Call Close to unregister the callback.
func New(src Source, opts ...Option) (*Instruments, error) {
	c := newConfig(opts)
	i := &Instruments{
		meter:  c.mp.Meter(ScopeName),
		tracer: c.tp.Tracer(ScopeName),
		src:    src,
	}
	if err := i.createSync(); err != nil {
		return nil, err
	}
	if err := i.createObservable(); err != nil {
		return nil, err
	}
	reg, err := i.meter.RegisterCallback(i.observe,
		i.memAllocated, i.ringDepth, i.processed, i.dropped,
		i.restarts, i.errs, i.latency, i.devKernels)
	if err != nil {
		return nil, err
	}
	i.reg = reg
	if c.producer != nil && src != nil {
		i.producer = c.producer
		c.producer.add(i, src)
	}
	return i, nil
}

// Disabled returns Instruments backed by no-op providers whose methods do
// nothing; use it when telemetry is off.
func Disabled() *Instruments {
	i, err := New(nil,
		WithMeterProvider(metricnoop.NewMeterProvider()),
		WithTracerProvider(tracenoop.NewTracerProvider()))
	if err != nil {
		// The no-op providers never fail.
		panic(err)
	}
	i.disabled = true
	return i
}

// createSync creates the instruments recorded by RecordExecution.
func (i *Instruments) createSync() error {
	var err, e error
	i.executions, e = i.meter.Int64Counter(KernelExecutions,
		metric.WithDescription("One-shot kernel executions run by the orchestrator."),
		metric.WithUnit("{execution}"))
	err = errors.Join(err, e)
	i.duration, e = i.meter.Float64Histogram(KernelDuration,
		metric.WithDescription("Duration of one kernel execution."),
		metric.WithUnit(unitSeconds),
		metric.WithExplicitBucketBoundaries(DurationBounds()...))
	err = errors.Join(err, e)
	i.transferred, e = i.meter.Int64Counter(MemoryTransferred,
		metric.WithDescription("Bytes moved between host and device."),
		metric.WithUnit(unitBytes))
	return errors.Join(err, e)
}

// createObservable creates the instruments observed from the Source.
func (i *Instruments) createObservable() error {
	var err, e error
	i.memAllocated, e = i.meter.Int64ObservableGauge(MemoryAllocated,
		metric.WithDescription("Bytes held by a ring kernel (rings, control blocks)."),
		metric.WithUnit(unitBytes))
	err = errors.Join(err, e)
	i.devKernels, e = i.meter.Int64ObservableGauge(DeviceKernels,
		metric.WithDescription("Ring kernels placed on a device, per device."),
		metric.WithUnit("{kernel}"))
	err = errors.Join(err, e)
	i.ringDepth, e = i.meter.Int64ObservableGauge(RingDepth,
		metric.WithDescription("Messages waiting in a kernel's input ring, overflow included."),
		metric.WithUnit(unitMessage))
	err = errors.Join(err, e)
	i.processed, e = i.meter.Int64ObservableCounter(MessagesProcessed,
		metric.WithDescription("Messages processed by a ring kernel."),
		metric.WithUnit(unitMessage))
	err = errors.Join(err, e)
	i.dropped, e = i.meter.Int64ObservableCounter(MessagesDropped,
		metric.WithDescription("Messages dropped by a ring kernel."),
		metric.WithUnit(unitMessage))
	err = errors.Join(err, e)
	i.restarts, e = i.meter.Int64ObservableCounter(KernelRestarts,
		metric.WithDescription("Restarts of a ring kernel."),
		metric.WithUnit("{restart}"))
	err = errors.Join(err, e)
	i.errs, e = i.meter.Int64ObservableCounter(KernelErrors,
		metric.WithDescription("Errors of a ring kernel."),
		metric.WithUnit("{error}"))
	err = errors.Join(err, e)
	i.latency, e = i.meter.Float64ObservableGauge(KernelLatency,
		metric.WithDescription("Per-message latency of a ring kernel."),
		metric.WithUnit(unitSeconds))
	return errors.Join(err, e)
}

// DurationBounds returns the bucket bounds, in seconds, of ringactor's
// duration histograms recorded through the OpenTelemetry API (Execute,
// cluster requests): two per octave from 64 ns to about 68.7 s, the same
// bounds the Producer exports, so that sub-microsecond and multi-second
// durations both resolve.
func DurationBounds() []float64 { return ExportBounds() }

// Tracer returns the tracer named ScopeName.
func (i *Instruments) Tracer() trace.Tracer {
	if i == nil {
		return tracenoop.NewTracerProvider().Tracer(ScopeName)
	}
	return i.tracer
}

// Meter returns the meter named ScopeName.
func (i *Instruments) Meter() metric.Meter {
	if i == nil {
		return metricnoop.NewMeterProvider().Meter(ScopeName)
	}
	return i.meter
}

// Close unregisters the observation callback, after which the Source is no
// longer called. It is idempotent: later calls return the first call's error.
func (i *Instruments) Close() error {
	if i == nil {
		return nil
	}
	i.closeOnce.Do(func() {
		if i.producer != nil {
			i.producer.remove(i)
		}
		if i.reg != nil {
			i.closeErr = i.reg.Unregister()
		}
	})
	return i.closeErr
}
