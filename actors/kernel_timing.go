package actors

import (
	"time"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/telemetry"
)

// kernelHistograms are a kernel's latency histograms. The kernel's one
// consumer at a time (its loop, or the actor draining a kernel without a
// loop) is their only writer: a bucket bump is a plain load and store, and
// the OpenTelemetry Producer reads them at collection time, so nothing is
// recorded through the OpenTelemetry API per message.
type kernelHistograms struct {
	latency *telemetry.Histogram // admission → handler return
	queue   *telemetry.Histogram // admission → handler start
	handler *telemetry.Histogram // handler start → return
}

func newKernelHistograms() *kernelHistograms {
	return &kernelHistograms{latency: telemetry.NewHistogram(), queue: telemetry.NewHistogram(), handler: telemetry.NewHistogram()}
}

// invokeTimed runs the handler as invoke does and, when the runtime's
// telemetry is on, records the message's queueing delay, handler duration
// and latency (two clock reads per message).
func (k *kernel[Req, Resp]) invokeTimed(h Handler[Req, Resp], s *slot[Req, Resp]) (Resp, *gpu.ExecutionError) {
	t := k.hist
	if t == nil {
		return k.invoke(h, s)
	}
	start := monoNow()
	resp, ee := k.invoke(h, s)
	end := monoNow()
	t.queue.Observe(time.Duration(start - s.enq))
	t.handler.Observe(time.Duration(end - start))
	t.latency.Observe(time.Duration(end - s.enq))
	return resp, ee
}

// snapshot fills the histogram fields of st.
func (t *kernelHistograms) snapshot(st *telemetry.KernelStats) {
	if t == nil {
		return
	}
	st.Latency, st.QueueDelay, st.HandlerTime = t.latency.Snapshot(), t.queue.Snapshot(), t.handler.Snapshot()
}
