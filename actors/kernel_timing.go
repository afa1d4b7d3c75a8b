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
	latency *telemetry.Histogram // admission → handler return and reply hand-off
	queue   *telemetry.Histogram // admission → handler start
	handler *telemetry.Histogram // handler start → return and reply hand-off

	// the message whose handler started last and whose end is not yet
	// recorded (consumer-owned)
	open       bool
	start, enq int64
}

func newKernelHistograms() *kernelHistograms {
	return &kernelHistograms{latency: telemetry.NewHistogram(), queue: telemetry.NewHistogram(), handler: telemetry.NewHistogram()}
}

// invokeTimed runs the handler as invoke does and, when the runtime's
// telemetry is on, times the message with ONE clock read at its handler's
// start: its queueing delay is that start minus its admission; the
// previous message's handler duration and latency end there too (or at the
// batch's end, which endBatch reads anyway: finishTiming). So a message's
// handler duration covers its handler and the hand-off of its reply.
func (k *kernel[Req, Resp]) invokeTimed(h Handler[Req, Resp], s *slot[Req, Resp]) (Resp, *gpu.ExecutionError) {
	t := k.hist
	if t == nil {
		return k.invokeSpan(h, s)
	}
	now := monoNow()
	t.finish(now)
	t.queue.Observe(time.Duration(now - s.enq))
	t.start, t.enq, t.open = now, s.enq, true
	return k.invokeSpan(h, s)
}

// finish ends the open message's handler duration and latency at now.
func (t *kernelHistograms) finish(now int64) {
	if t == nil || !t.open {
		return
	}
	t.handler.Observe(time.Duration(now - t.start))
	t.latency.Observe(time.Duration(now - t.enq))
	t.open = false
}

// snapshot fills the histogram fields of st.
func (t *kernelHistograms) snapshot(st *telemetry.KernelStats) {
	if t == nil {
		return
	}
	st.Latency, st.QueueDelay, st.HandlerTime = t.latency.Snapshot(), t.queue.Snapshot(), t.handler.Snapshot()
}
