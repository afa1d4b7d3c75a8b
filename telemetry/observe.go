package telemetry

import (
	"context"
	"math"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// observe is the single callback registered for every observable
// instrument. It calls the Source once and reports each kernel.
func (i *Instruments) observe(_ context.Context, o metric.Observer) error {
	if i.src == nil {
		return nil
	}
	perDevice := map[string]int64{}
	for _, s := range i.src() {
		if s.Backend != "" && s.Backend != "cpu" {
			perDevice[s.Backend]++
		}
		k := attribute.String(AttrKernel, s.Kernel)
		kernel := metric.WithAttributeSet(attribute.NewSet(k))

		o.ObserveInt64(i.memAllocated, s.MemoryBytes, kernel)
		o.ObserveInt64(i.ringDepth, s.Depth, kernel)
		o.ObserveInt64(i.processed, clampInt64(s.Processed), kernel)
		o.ObserveInt64(i.dropped, clampInt64(s.Dropped), kernel)
		o.ObserveInt64(i.restarts, clampInt64(s.Restarts), kernel)
		o.ObserveInt64(i.errs, clampInt64(s.Errors), kernel)

		o.ObserveFloat64(i.latency, s.LatencyMin.Seconds(), statSet(k, StatMin))
		o.ObserveFloat64(i.latency, s.LatencyAvg.Seconds(), statSet(k, StatAvg))
		o.ObserveFloat64(i.latency, s.LatencyMax.Seconds(), statSet(k, StatMax))
	}
	for dev, n := range perDevice {
		o.ObserveInt64(i.devKernels, n, metric.WithAttributeSet(attribute.NewSet(attribute.String(AttrBackend, dev))))
	}
	return nil
}

// statSet returns the attributes of one latency statistic of a kernel.
func statSet(kernel attribute.KeyValue, stat string) metric.ObserveOption {
	return metric.WithAttributeSet(attribute.NewSet(kernel, attribute.String(AttrStat, stat)))
}

// clampInt64 converts a counter to int64, saturating at math.MaxInt64.
func clampInt64(v uint64) int64 {
	if v > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(v)
}
