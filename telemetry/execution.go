package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// execKey identifies the attribute sets of one (kernel, backend) pair.
type execKey struct {
	kernel, backend string
}

// execAttrs holds the prebuilt measurement options of one (kernel, backend)
// pair, so that RecordExecution builds neither attribute sets nor option
// slices per call.
type execAttrs struct {
	add, hostToDevice, deviceToHost []metric.AddOption
	record                          []metric.RecordOption
}

// newExecAttrs builds the options for kernel and backend.
func newExecAttrs(kernel, backend string) *execAttrs {
	k := attribute.String(AttrKernel, kernel)
	b := attribute.String(AttrBackend, backend)
	base := metric.WithAttributeSet(attribute.NewSet(k, b))
	return &execAttrs{
		add:    []metric.AddOption{base},
		record: []metric.RecordOption{base},
		hostToDevice: []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(
			k, b, attribute.String(AttrDirection, DirectionHostToDevice)))},
		deviceToHost: []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(
			k, b, attribute.String(AttrDirection, DirectionDeviceToHost)))},
	}
}

// attrsFor returns the cached options of (kernel, backend), building them on
// first use.
func (i *Instruments) attrsFor(kernel, backend string) *execAttrs {
	key := execKey{kernel, backend}
	if v, ok := i.execAttrs.Load(key); ok {
		return v.(*execAttrs)
	}
	v, _ := i.execAttrs.LoadOrStore(key, newExecAttrs(kernel, backend))
	return v.(*execAttrs)
}

// RecordExecution records one kernel execution of duration d: it adds one to
// KernelExecutions, records d in seconds in KernelDuration, and adds bytesIn
// (host to device) and bytesOut (device to host) to MemoryTransferred when
// they are positive.
func (i *Instruments) RecordExecution(ctx context.Context, kernel, backend string, d time.Duration, bytesIn, bytesOut int64) {
	if i == nil || i.disabled {
		return
	}
	a := i.attrsFor(kernel, backend)
	i.executions.Add(ctx, 1, a.add...)
	i.duration.Record(ctx, d.Seconds(), a.record...)
	if bytesIn > 0 {
		i.transferred.Add(ctx, bytesIn, a.hostToDevice...)
	}
	if bytesOut > 0 {
		i.transferred.Add(ctx, bytesOut, a.deviceToHost...)
	}
}
