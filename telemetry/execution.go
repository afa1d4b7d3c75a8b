package telemetry

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// kernelAttrs are one kernel's prebuilt options by backend: an immutable
// list replaced on the first sight of a backend, so that a lookup hashes
// only the kernel's name (hashing a struct of two strings on every
// execution cost more than the rest of RecordExecution).
type kernelAttrs struct {
	mu   sync.Mutex // serialises adding backends
	list atomic.Pointer[[]backendAttrs]
}

// backendAttrs are the options of one backend.
type backendAttrs struct {
	backend string
	attrs   *execAttrs
}

// find returns backend's options, or nil.
func (k *kernelAttrs) find(backend string) *execAttrs {
	if p := k.list.Load(); p != nil {
		for i := range *p {
			if (*p)[i].backend == backend {
				return (*p)[i].attrs
			}
		}
	}
	return nil
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
	v, ok := i.execAttrs.Load(kernel)
	if !ok {
		v, _ = i.execAttrs.LoadOrStore(kernel, new(kernelAttrs))
	}
	k := v.(*kernelAttrs)
	if a := k.find(backend); a != nil {
		return a
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if a := k.find(backend); a != nil {
		return a
	}
	var list []backendAttrs
	if p := k.list.Load(); p != nil {
		list = *p
	}
	a := newExecAttrs(kernel, backend)
	list = append(list[:len(list):len(list)], backendAttrs{backend: backend, attrs: a})
	k.list.Store(&list)
	return a
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
