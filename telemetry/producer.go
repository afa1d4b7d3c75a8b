package telemetry

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// Producer is an OpenTelemetry sdk/metric Producer of ring kernels' latency
// histograms. Ring kernel loops bump log-linear bucket counters (Histogram)
// with plain stores; nothing is recorded through the OpenTelemetry API per
// message. At collection time the reader calls Produce, which reads every
// registered Source once and turns each kernel's histograms into cumulative
// OpenTelemetry histograms (MessageLatency, QueueDelay, HandlerDuration).
//
// Give a Producer to every metric reader (sdkmetric.WithProducer,
// prometheus.WithProducer; Setup does it) and to the Instruments whose
// kernels it reports (WithProducer). Its methods are safe for concurrent use.
type Producer struct {
	mu   sync.Mutex
	srcs map[*Instruments]Source
}

// NewProducer returns a Producer with no sources.
func NewProducer() *Producer { return &Producer{srcs: map[*Instruments]Source{}} }

// add registers the source of i.
func (p *Producer) add(i *Instruments, src Source) {
	p.mu.Lock()
	p.srcs[i] = src
	p.mu.Unlock()
}

// remove unregisters the source of i.
func (p *Producer) remove(i *Instruments) {
	p.mu.Lock()
	delete(p.srcs, i)
	p.mu.Unlock()
}

// exportBounds are the exported bucket bounds in seconds: two per octave
// (each exported bucket merges histMergeFactor adjacent Histogram buckets).
var exportBounds = func() []float64 {
	b := []float64{BucketUpper(0)}
	for i := histMerge; i <= HistogramBuckets-2; i += histMerge {
		b = append(b, BucketUpper(i))
	}
	return b
}()

// histMerge is how many Histogram buckets one exported bucket merges.
const histMerge = 2

// exportCounts merges a snapshot's counts into the exported buckets.
func exportCounts(s HistogramSnapshot) []uint64 {
	out := make([]uint64, len(exportBounds)+1)
	for i, c := range s.Counts {
		switch {
		case i == 0:
			out[0] += c
		case i == HistogramBuckets-1:
			out[len(out)-1] += c
		default:
			out[1+(i-1)/histMerge] += c
		}
	}
	return out
}

// ExportBounds returns a copy of the upper bounds, in seconds, of the
// buckets the Producer exports (the last bucket, up to +Inf, is implied).
func ExportBounds() []float64 { return append([]float64(nil), exportBounds...) }

// Produce implements sdk/metric's Producer: one cumulative histogram data
// point per kernel for each of MessageLatency, QueueDelay and
// HandlerDuration. Kernels with no recorded durations are left out.
func (p *Producer) Produce(context.Context) ([]metricdata.ScopeMetrics, error) {
	p.mu.Lock()
	srcs := make([]Source, 0, len(p.srcs))
	for _, s := range p.srcs {
		if s != nil {
			srcs = append(srcs, s)
		}
	}
	p.mu.Unlock()
	now := time.Now()
	var lat, queue, handler []metricdata.HistogramDataPoint[float64]
	for _, src := range srcs {
		for _, ks := range src() {
			attrs := attribute.NewSet(attribute.String(AttrKernel, ks.Kernel))
			lat = appendPoint(lat, ks.Latency, attrs, now)
			queue = appendPoint(queue, ks.QueueDelay, attrs, now)
			handler = appendPoint(handler, ks.HandlerTime, attrs, now)
		}
	}
	var ms []metricdata.Metrics
	add := func(name, desc string, pts []metricdata.HistogramDataPoint[float64]) {
		if len(pts) == 0 {
			return
		}
		ms = append(ms, metricdata.Metrics{Name: name, Description: desc, Unit: unitSeconds,
			Data: metricdata.Histogram[float64]{DataPoints: pts, Temporality: metricdata.CumulativeTemporality}})
	}
	add(MessageLatency, "Time from a message's admission to the end of its handling (handler and reply hand-off).", lat)
	add(QueueDelay, "Time a message waited in a kernel's ring before its handler started.", queue)
	add(HandlerDuration, "Time a kernel took to handle one message: its handler and its reply's hand-off.", handler)
	if len(ms) == 0 {
		return nil, nil
	}
	return []metricdata.ScopeMetrics{{Scope: instrumentation.Scope{Name: ScopeName}, Metrics: ms}}, nil
}

// appendPoint appends the data point of s unless it is empty.
func appendPoint(pts []metricdata.HistogramDataPoint[float64], s HistogramSnapshot, attrs attribute.Set, now time.Time) []metricdata.HistogramDataPoint[float64] {
	if s.Count == 0 {
		return pts
	}
	return append(pts, metricdata.HistogramDataPoint[float64]{
		Attributes: attrs, StartTime: s.Start, Time: now,
		Count: s.Count, Sum: s.Sum.Seconds(),
		Bounds: exportBounds, BucketCounts: exportCounts(s),
	})
}
