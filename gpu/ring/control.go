package ring

import (
	"math"
	"time"
)

// Gate values of a control block.
const (
	GateClosed uint64 = 0
	GateOpen   uint64 = 1
)

// ControlBlock is the shared state of one ring kernel: the words the host
// writes (gate, terminate) and the words the kernel's consumer writes
// (terminated ack, counters, heartbeat, latency). Every word sits on its own
// cache line.
//
// Who writes what (observers read any word at any time):
//   - Gate, Terminate: the host (the kernel actor), with plain stores.
//   - TerminatedAck, Processed, Errors, Heartbeat, Latency*: the kernel's one
//     consumer at a time (the loop goroutine, the device pump, or the actor
//     draining a kernel that has no loop), with plain stores of values it
//     computes itself; Processed and Errors per message, before its reply
//     leaves, the latency words and Heartbeat once per batch (RecordBatch).
//   - Restarts: the kernel actor, when its supervisor restarts it.
//   - Dropped: the host side only, but from several goroutines (admission
//     under the producer lock, and the reply pump when an aborted kernel
//     gives up an output), so with atomic adds.
//
// The words shared with a device (gate, terminate, ack) never take a
// read-modify-write from both sides, so the same layout works in mapped
// pinned memory.
type ControlBlock struct {
	Gate          Word // GateOpen or GateClosed; host → kernel
	Terminate     Word // non-zero asks the loop to exit; host → kernel
	TerminatedAck Word // non-zero once the loop has exited; kernel → host
	Processed     Word // messages handled (successfully or not); consumer
	Errors        Word // messages whose handler failed; consumer
	Dropped       Word // messages rejected or evicted by admission policy, outputs given up; host, atomic adds
	Heartbeat     Word // unix nanoseconds of the consumer's last batch; consumer
	LatencyMin    Word // nanoseconds, admission → reply; MaxUint64 until the first message
	LatencyMax    Word
	LatencySum    Word
	LatencyCount  Word
	Restarts      Word // supervisor restarts of the kernel; kernel actor
}

// NewControlBlock returns a control block with the gate closed.
func NewControlBlock() *ControlBlock {
	cb := &ControlBlock{}
	cb.LatencyMin.Store(math.MaxUint64)
	return cb
}

// Open opens the gate: the loop consumes its input ring.
func (cb *ControlBlock) Open() { cb.Gate.Store(GateOpen) }

// Close closes the gate: messages queue, nothing is lost.
func (cb *ControlBlock) Close() { cb.Gate.Store(GateClosed) }

// IsOpen reports whether the gate is open.
func (cb *ControlBlock) IsOpen() bool { return cb.Gate.Load() == GateOpen }

// RecordMessage is called by the kernel loop (the only writer of these words)
// after handling one message that waited latency since its admission.
func (cb *ControlBlock) RecordMessage(latency time.Duration, failed bool, now int64) {
	ns := uint64(max(latency, 0))
	cb.Processed.Store(cb.Processed.Load() + 1)
	if failed {
		cb.Errors.Store(cb.Errors.Load() + 1)
	}
	if ns < cb.LatencyMin.Load() {
		cb.LatencyMin.Store(ns)
	}
	if ns > cb.LatencyMax.Load() {
		cb.LatencyMax.Store(ns)
	}
	cb.LatencySum.Store(cb.LatencySum.Load() + ns)
	cb.LatencyCount.Store(cb.LatencyCount.Load() + 1)
	cb.Heartbeat.Store(uint64(now))
}

// Batch accumulates the latencies of a batch of handled messages, so the
// loop writes the latency words once per batch instead of once per message.
// Latencies are kept as admission times: at the end of the batch, each
// message's latency is the batch's end minus its admission.
type Batch struct {
	n              uint64
	enqMin, enqMax int64
	enqSum         int64
}

// Add records one handled message admitted at enq (monotonic nanoseconds).
func (b *Batch) Add(enq int64) {
	if b.n == 0 || enq < b.enqMin {
		b.enqMin = enq
	}
	if b.n == 0 || enq > b.enqMax {
		b.enqMax = enq
	}
	b.enqSum += enq
	b.n++
}

// Len returns how many messages the batch holds.
func (b *Batch) Len() int { return int(b.n) }

// RecordBatch records the latencies of a batch (Processed and Errors are
// counted per message by the loop, before each reply leaves): end is the
// monotonic time the batch ended (the clock of the admission times; the
// actors loop takes its last recorded message's end, just after that reply
// was delivered), unix its wall-clock equivalent for the heartbeat. A
// message's latency is measured to that end, so it is an upper bound by at
// most the time the rest of the batch took. b is reset.
func (cb *ControlBlock) RecordBatch(b *Batch, end, unix int64) {
	if b.n == 0 {
		return
	}
	if ns := uint64(max(end-b.enqMax, 0)); ns < cb.LatencyMin.Load() {
		cb.LatencyMin.Store(ns)
	}
	if ns := uint64(max(end-b.enqMin, 0)); ns > cb.LatencyMax.Load() {
		cb.LatencyMax.Store(ns)
	}
	cb.LatencySum.Store(cb.LatencySum.Load() + uint64(max(int64(b.n)*end-b.enqSum, 0)))
	cb.LatencyCount.Store(cb.LatencyCount.Load() + b.n)
	cb.Heartbeat.Store(uint64(unix))
	*b = Batch{}
}

// Beat records loop activity without a message (start, restart, exit).
func (cb *ControlBlock) Beat(now int64) { cb.Heartbeat.Store(uint64(now)) }

// Stats is a consistent-enough copy of a control block for observers.
type Stats struct {
	Open         bool
	Terminated   bool
	Processed    uint64
	Errors       uint64
	Dropped      uint64
	Restarts     uint64
	LatencyMin   time.Duration
	LatencyAvg   time.Duration
	LatencyMax   time.Duration
	LastActivity time.Time
}

// Snapshot reads every word once.
func (cb *ControlBlock) Snapshot() Stats {
	s := Stats{
		Open:       cb.IsOpen(),
		Terminated: cb.TerminatedAck.Load() != 0,
		Processed:  cb.Processed.Load(),
		Errors:     cb.Errors.Load(),
		Dropped:    cb.Dropped.Load(),
		Restarts:   cb.Restarts.Load(),
		LatencyMax: time.Duration(cb.LatencyMax.Load()),
	}
	if n := cb.LatencyCount.Load(); n > 0 {
		s.LatencyMin = time.Duration(cb.LatencyMin.Load())
		s.LatencyAvg = time.Duration(cb.LatencySum.Load() / n)
	}
	if hb := cb.Heartbeat.Load(); hb != 0 {
		s.LastActivity = time.Unix(0, int64(hb))
	}
	return s
}
