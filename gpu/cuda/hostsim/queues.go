//go:build linux && cgo

package hostsim

import (
	"slices"
	"time"
)

// Hardware work queues. A GPU multiplexes its streams onto a few hardware
// queues (CUDA_DEVICE_MAX_CONNECTIONS, 8 by default), the i-th stream
// created onto queue i mod n. A queue starts its commands in the order
// they were enqueued, whatever their stream: a command that cannot start
// — the next command on the stream of a kernel still running, a launch
// that cannot become resident — holds back every later command of its
// queue, the other streams' too. Beside a persistent kernel that is a
// false dependency that lasts forever. A kernel that runs does not hold
// its queue: independent kernels behind it, on its queue or another,
// still start.
//
// The simulated device takes a Ticket for every command it enqueues on a
// stream (Hazards.Ticket) and, when the stream's goroutine reaches the
// command, dispatches it (Hazards.Dispatch): it waits until every earlier
// command of its queue has started and, for a launch, until the grid can
// become resident.

// Ticket is a command's place in its hardware queue, from Hazards.Ticket
// to Hazards.Dispatch.
type Ticket struct {
	id     uint64
	queue  int
	stream uint64
	call   string
	launch *Tracked // the launch the command is, or nil
	behind *Tracked // a persistent launch in flight on the same stream when it was enqueued, or nil
}

// StreamCreated maps a new stream onto the next hardware queue, round
// robin (stream 0, the legacy NULL stream, is never mapped).
func (h *Hazards) StreamCreated(stream uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.queueOf(stream)
}

// StreamDestroyed forgets a destroyed stream: its queue is no longer
// shared with it (the round robin goes on where it was, as CUDA's does).
func (h *Hazards) StreamDestroyed(stream uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.queues, stream)
}

// Queue returns the hardware queue of stream and how many queues the
// device has (0: one per stream).
func (h *Hazards) Queue(stream uint64) (queue, queues int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.queueOf(stream), h.limits.HardwareQueues
}

// queueOf returns stream's queue, mapping a stream seen for the first
// time (h.mu held).
func (h *Hazards) queueOf(stream uint64) int {
	if q, ok := h.queues[stream]; ok {
		return q
	}
	q := h.nstream
	if n := h.limits.HardwareQueues; n > 0 {
		q %= n
	}
	h.nstream++
	h.queues[stream] = q
	return q
}

// sharing returns how many live streams other than stream are mapped to
// queue q (h.mu held).
func (h *Hazards) sharing(q int, stream uint64) int {
	n := 0
	for s, sq := range h.queues {
		if sq == q && s != stream {
			n++
		}
	}
	return n
}

// stuck returns the persistent kernel that never exits which command t
// waits for, if any: the one on its own stream (behind), else the one an
// earlier command of its queue waits for (h.mu held).
func (h *Hazards) stuck(t *Ticket) *Tracked {
	if b := t.behind; b != nil && h.inflight[b.id] == b && !b.exiting() {
		return b
	}
	return nil
}

func (h *Hazards) queueHazard(t *Ticket, l *Tracked, waited time.Duration) *HazardError {
	e := &HazardError{Call: t.call, Class: CallFree, Kernel: l.entry, Launch: l.id, Stream: l.stream, Control: l.control,
		Waited: waited, Limit: LimitHardwareQueue, LimitValue: h.limits.HardwareQueues, Queue: t.queue, OnStream: t.stream}
	h.raised = append(h.raised, e)
	return e
}

// Ticket takes the place in its hardware queue of a command call about to
// be enqueued on stream (launch: the launch it is, from BeginGrid; else
// nil). In strict mode a command that would wait for a persistent kernel
// that never exits, on a queue other streams share, fails at once with a
// hazard of LimitHardwareQueue: a command behind such a kernel on its own
// stream, or any command behind such a waiting command on its queue.
// Dispatch the ticket when the stream reaches the command.
func (h *Hazards) Ticket(call string, stream uint64, launch *Tracked) (*Ticket, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := &Ticket{id: h.tseq + 1, queue: h.queueOf(stream), stream: stream, call: call, launch: launch}
	for _, l := range h.inflight {
		if l != launch && l.stream == stream && l.persistent && !l.superseded && (t.behind == nil || l.id > t.behind.id) {
			t.behind = l
		}
	}
	if h.mode == HazardStrict {
		if b := h.stuck(t); b != nil && h.sharing(t.queue, stream) > 0 {
			return nil, h.queueHazard(t, b, 0)
		}
		for _, p := range h.pending[t.queue] {
			if b := h.stuck(p); b != nil {
				return nil, h.queueHazard(t, b, 0)
			}
		}
	}
	h.tseq++
	h.pending[t.queue] = append(h.pending[t.queue], t)
	return t, nil
}

// Dispatch waits until command t may start: every earlier command of its
// hardware queue has started and, for a launch, its grid has become
// resident (a persistent grid all of its blocks, a one-shot grid at least
// one). A wait for work that finishes is plain waiting. A wait for a
// persistent kernel that never exits fails at once in strict mode — with
// a residency hazard for a launch that cannot become resident, a
// LimitHardwareQueue hazard for a command held by an earlier one — and in
// blocking mode waits until that kernel exits or the watchdog fires. On
// failure the command is dropped from its queue.
func (h *Hazards) Dispatch(t *Ticket) error {
	if t == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	defer h.retire(t)
	start := time.Now()
	var timer *time.Timer
	var fired <-chan time.Time
	expired := false
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		var fail func(time.Duration) error
		if i := slices.Index(h.pending[t.queue], t); i > 0 {
			if b := h.stuck(h.pending[t.queue][0]); b != nil {
				fail = func(w time.Duration) error { return h.queueHazard(t, b, w) }
			}
		} else if l := t.launch; l != nil {
			placed, limit := h.res.place(l.grid, l.persistent)
			if limit == LimitNone {
				l.resident, l.placed = true, placed
				return nil
			}
			if limit, holders := h.neverFits(l.grid, l.persistent, true, l); limit != LimitNone {
				fail = func(w time.Duration) error { return h.residencyHazard(t.call, l, limit, holders, w) }
			}
		} else {
			return nil
		}
		switch {
		case fail != nil && h.mode == HazardStrict:
			return fail(0)
		case fail != nil && expired:
			return fail(time.Since(start))
		case fail != nil && timer == nil:
			timer = time.NewTimer(h.watchdog)
			fired = timer.C
		case fail == nil && timer != nil:
			timer.Stop()
			timer, fired, expired = nil, nil, false
		}
		changed := h.changed
		h.mu.Unlock()
		select {
		case <-changed:
		case <-fired:
			expired = true
		}
		h.mu.Lock()
	}
}

// retire drops t from its queue and wakes the waits (h.mu held).
func (h *Hazards) retire(t *Ticket) {
	q := h.pending[t.queue]
	if i := slices.Index(q, t); i >= 0 {
		h.pending[t.queue] = slices.Delete(q, i, i+1)
		if len(h.pending[t.queue]) == 0 {
			delete(h.pending, t.queue)
		}
	}
	h.notify()
}

// QueueWaiting returns how many commands wait in hardware queues behind an
// earlier command (blocking mode: a false dependency being waited out).
func (h *Hazards) QueueWaiting() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, q := range h.pending {
		if len(q) > 1 && h.stuck(q[0]) != nil {
			n += len(q) - 1
		}
	}
	return n
}
