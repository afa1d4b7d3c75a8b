package actors

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/gpu/ringmsg"
	"github.com/ringactor/ringactor/messages"
	"github.com/ringactor/ringactor/supervision"
)

// PlacementCPU is the placement of a kernel that runs on the CPU.
const PlacementCPU = "cpu"

// devicePollMin and devicePollMax bound the pauses between two looks at a
// device ring kernel's replies while it holds messages: the pump's wait
// strategy sleeps from the first, doubling, up to the second.
const (
	devicePollMin = 10 * time.Microsecond
	devicePollMax = 200 * time.Microsecond
)

// devicePumpWait is the pump's wait strategy: the kernel's spins and
// yields, then (unless the kernel's strategy has a sleep phase of its own)
// sleeps from devicePollMin up to devicePollMax. While the device holds
// messages nobody notifies the pump about its replies, so it stays in the
// sleep phase; otherwise the sleeps end at a Notify and it then parks.
func devicePumpWait(w ring.WaitStrategy) ring.WaitStrategy {
	if w.SleepMax == 0 {
		w.SleepMin, w.SleepMax = devicePollMin, devicePollMax
	}
	return w
}

// deviceTerminateTimeout bounds waiting for a device ring kernel's
// terminated acknowledgement.
const deviceTerminateTimeout = 5 * time.Second

// NewDeviceKernel declares a ring kernel that runs the built-in device ring
// handler op (gpu/ringmsg): Req and Resp must be op's fixed-layout request
// and reply types (ringmsg.VecMsg and ringmsg.VecReply for ringmsg.Add, …).
// At each (re)start the kernel runs as a persistent CUDA ring kernel when
// the runtime has a usable CUDA backend that allows persistent kernels
// (no display watchdog), and otherwise on the CPU with ringmsg's
// implementation of the same handler; Kernel.Placement says which, and
// the runtime logs the choice and the reason for a CPU fallback. Either
// way the kernel keeps the ordinary semantics: the Go-side ring, overflow
// and backpressure, the gate, drain on terminate, one outcome per message.
// A bad message (sizes out of range, malformed CSR) is an ExecutionError
// wrapping a *gpu.ArgumentError on both paths.
func NewDeviceKernel[Req, Resp any](id string, op ringmsg.Op, opts ...KernelOption) (*KernelDef[Req, Resp], error) {
	h, err := ringmsg.Handler[Req, Resp](op)
	if err != nil {
		return nil, fmt.Errorf("%w: kernel %q: %w", ErrInvalidKernel, id, err)
	}
	fallback := func() Handler[Req, Resp] { return func(_ context.Context, r Req) (Resp, error) { return h(r) } }
	def, err := NewDeviceRingKernel(id, DeviceSource{Code: ringmsg.DeviceCode, Entry: op.DeviceEntry(), Types: ringmsg.DeviceTypes}, fallback, opts...)
	if err != nil {
		return nil, err
	}
	def.device = op
	return def, nil
}

// Placement returns where the kernel's current incarnation runs:
// PlacementCPU, or the name of the device backend ("cuda:0", "cuda:sim").
// From Launch on, before its first incarnation has started, a device
// kernel reports where it is to run: the device its program is loaded on,
// or PlacementCPU when there is none. Should the device launch fail at a
// start, the kernel falls back and Placement becomes PlacementCPU (logged
// with the reason).
func (h *Kernel[Req, Resp]) Placement() string {
	if p := h.k.placement.Load(); p != nil {
		return *p
	}
	return PlacementCPU
}

// PlacementReason returns why a device ring kernel runs on its fallback
// (PlacementCPU): the device's refusal, e.g. a *gpu.DeviceError matching
// gpu.ErrDeviceCapacity that says which budget was full; nil while it
// runs on a device.
func (h *Kernel[Req, Resp]) PlacementReason() error {
	if p := h.k.placementWhy.Load(); p != nil {
		return *p
	}
	return nil
}

// setPlacement records where the kernel runs and logs a change (with the
// reason for a CPU fallback).
func (k *kernel[Req, Resp]) setPlacement(where string, why error) {
	if why != nil {
		k.placementWhy.Store(&why)
	} else {
		k.placementWhy.Store(nil)
	}
	old := k.placement.Swap(&where)
	if first := !k.placed.Swap(true); !first && old != nil && *old == where {
		return
	}
	if why != nil {
		k.rt.logger.Info("ringactor: device kernel runs on the CPU", "kernel", k.def.id, "handler", k.def.deviceName(), "placement", where, "error", why)
		return
	}
	k.rt.logger.Info("ringactor: device kernel runs on the device", "kernel", k.def.id, "handler", k.def.deviceName(), "placement", where,
		"reason", "the backend runs persistent kernels and the handler is loaded")
}

// startDeviceLoop runs this incarnation on a launched device ring kernel:
// a pump goroutine forwards admitted messages into the device's input ring
// and delivers the replies of its output ring.
func (k *kernel[Req, Resp]) startDeviceLoop(c actor.Context, ring *cuda.RingKernel, backend *cuda.Backend) {
	k.setPlacement(backend.Name(), nil)
	ring.Activate() // the Go side's gate is the kernel's gate
	p := &devicePump[Req, Resp]{k: k, ring: ring, backend: backend, pending: map[uint64]*slot[Req, Resp]{}, buf: make([]byte, ring.PayloadMax())}
	if k.hist != nil {
		p.timing = map[uint64]deviceTiming{}
	}
	k.spawnLoop(c, p.run)
}

// devicePump moves one kernel's messages through a device ring kernel.
type devicePump[Req, Resp any] struct {
	k       *kernel[Req, Resp]
	ring    *cuda.RingKernel
	backend *cuda.Backend
	pending map[uint64]*slot[Req, Resp] // on the device, by message id
	timing  map[uint64]deviceTiming     // the timed messages of pending (nil with telemetry off)
	free    []*slot[Req, Resp]          // slots of answered messages, for reuse (no allocation per message)
	buf     []byte                      // a reply's payload, copied out of the output ring
	faulted error                       // this kernel's own device fault, once seen
	wait    *slot[Req, Resp]            // taken but not submitted (the device's input ring was full); older than k.devHeld
	rounds  uint32                      // poll rounds, for the rate of fault queries
	active  bool                        // the last round moved or answered messages
}

// deviceTiming is what the pump keeps of a timed message on the device:
// when it went into the device's input ring and its weight (itself and the
// untimed messages submitted since the previous timed one).
type deviceTiming struct {
	submitted int64
	weight    uint64
}

// submitted starts a message's device time: the pump has just put it into
// the device's input ring. A timed message's queueing delay is its
// admission → now, and its handler time now → its reply's hand-off (the
// device's input ring, its handler, its output ring and the pump's look at
// it); both are recorded with its latency when it is answered (done). An
// untimed message adds to the next timed one's weight, as a CPU handler's
// does.
func (p *devicePump[Req, Resp]) submitted(s *slot[Req, Resp]) {
	t := p.k.hist
	if t == nil {
		return
	}
	if s.enq <= 0 {
		t.skipped++
		return
	}
	p.timing[s.id] = deviceTiming{submitted: monoNow(), weight: t.skipped + 1}
	t.skipped = 0
}

// unsubmit undoes the timing of submitted messages handed back to the
// kernel (abandon), which their next incarnation counts again: newest
// first, an untimed one leaves the count of untimed messages, and a timed
// one gives back the weight it took. The count is then what it was before
// the oldest of them was submitted.
func (p *devicePump[Req, Resp]) unsubmit(back []*slot[Req, Resp]) {
	t := p.k.hist
	if t == nil {
		return
	}
	for i := len(back) - 1; i >= 0; i-- {
		s := back[i]
		if tm, ok := p.timing[s.id]; ok {
			delete(p.timing, s.id)
			t.skipped += tm.weight - 1
		} else if s.enq <= 0 && t.skipped > 0 {
			t.skipped--
		}
	}
}

// faultQueryEvery is how often (in poll rounds) the pump asks the device
// whether its launch faulted while messages keep moving; an idle round
// asks (a faulted kernel stops answering, so its pump soon idles). The
// answer is shared: RingKernel.Fault queries the launch's stream
// (cuStreamQuery, a hop to the context's thread) at most once per
// millisecond for all the mailboxes of a grid, and answers from the last
// query in between.
const faultQueryEvery = 64

// leave hands the message taken but not submitted back to the kernel, for
// the next incarnation.
func (p *devicePump[Req, Resp]) leave() {
	if p.wait != nil {
		p.k.devHeld = append([]*slot[Req, Resp]{p.wait}, p.k.devHeld...)
		p.wait = nil
	}
}

// deviceMoved is the fault a device pump stops with when the device
// failed (its own kernel faulted, or another ring kernel of the same
// backend did): the kernel's next incarnation runs its fallback with the
// queued messages; it is not a failure of the kernel itself.
type deviceMoved struct{ err error }

func (e *deviceMoved) Error() string {
	return "device failed, moving to the fallback: " + e.err.Error()
}
func (e *deviceMoved) Unwrap() error { return e.err }

// deviceFault checks whether this kernel's device launch faulted (then
// the backend is marked failed for every kernel of its context) or the
// backend failed under another kernel. The launch is asked (RingKernel.Fault:
// the grid's shared answer, from a cuStreamQuery that waits for no device
// work) after an idle round and every faultQueryEvery rounds otherwise;
// the backend's recorded failure is read every round.
func (p *devicePump[Req, Resp]) deviceFault() error {
	p.rounds++
	if p.active && p.rounds%faultQueryEvery != 0 {
		return p.backendFailed()
	}
	if err := p.ring.Fault(); err != nil {
		p.faulted = err
		p.backend.MarkFailed(err)
		p.k.rt.logger.Warn("ringactor: device fault: every device ring kernel of the backend moves to its fallback",
			"kernel", p.k.def.id, "backend", p.backend.Name(), "error", err)
		return &deviceMoved{err}
	}
	return p.backendFailed()
}

// backendFailed reports a fault another kernel of the backend saw.
func (p *devicePump[Req, Resp]) backendFailed() error {
	if err := p.backend.Failed(); err != nil {
		return &deviceMoved{err}
	}
	return nil
}

// takeHeld returns the oldest message an earlier incarnation left, or nil.
func (k *kernel[Req, Resp]) takeHeld() *slot[Req, Resp] {
	if len(k.devHeld) == 0 {
		return nil
	}
	s := k.devHeld[0]
	k.devHeld = k.devHeld[1:]
	return s
}

// take returns a slot holding s's message, reusing an answered one.
func (p *devicePump[Req, Resp]) take(s *slot[Req, Resp]) *slot[Req, Resp] {
	var t *slot[Req, Resp]
	if n := len(p.free); n > 0 {
		t, p.free = p.free[n-1], p.free[:n-1]
	} else {
		t = new(slot[Req, Resp])
	}
	*t = *s
	return t
}

// done finishes an answered message and keeps its slot for reuse. A timed
// message that went to the device gets its queueing delay here, and its
// handler time and latency in finish, as invokeTimed and finish give a CPU
// handler's.
func (p *devicePump[Req, Resp]) done(s *slot[Req, Resp], resp Resp, err error, failed bool) {
	if tm, ok := p.timing[s.id]; ok {
		delete(p.timing, s.id)
		t := p.k.hist
		t.queue.ObserveN(time.Duration(tm.submitted-s.enq), tm.weight)
		t.start, t.weight = tm.submitted, tm.weight
	}
	p.k.finish(s, resp, err, failed)
	*s = slot[Req, Resp]{}
	p.free = append(p.free, s)
}

// run is the pump's loop: a ring.Loop whose poll collects the device's
// replies and forwards admitted messages, busy while the device holds
// messages. It returns nil after a terminate (the device kernel terminated,
// every message answered) or a fault.
func (p *devicePump[Req, Resp]) run() error {
	k := p.k
	loop := &ring.Loop{
		Control: k.cb, Wake: k.wake, Wait: devicePumpWait(k.def.wait),
		Poll:  p.poll,
		Ready: func() bool { return k.ready() || len(k.devHeld) > 0 || p.wait != nil },
		Busy:  func() bool { return len(p.pending) > 0 || len(k.devHeld) > 0 || p.wait != nil },
		Stop: func(fault error) error {
			err := p.stop(fault)
			if fault == nil && err != nil {
				k.rt.logger.Warn("ringactor: device ring kernel did not terminate cleanly", "kernel", k.def.id, "error", err)
			}
			return err
		},
	}
	return loop.Run()
}

// poll is one round of the pump: deliver the replies the device produced,
// then (gate open, or draining) move admitted messages to the device.
func (p *devicePump[Req, Resp]) poll(draining bool) (bool, error) {
	k := p.k
	if err := p.deviceFault(); err != nil {
		return false, err
	}
	progressed, err := p.collect(draining)
	if err == nil && (draining || k.cb.IsOpen()) {
		var fwd bool
		fwd, err = p.forward(draining)
		progressed = progressed || fwd
	}
	k.endBatch()
	p.active = progressed
	return progressed, err
}

// forward moves admitted messages into the device's input ring until it is
// full or nothing is left; it reports whether it moved or answered any.
func (p *devicePump[Req, Resp]) forward(draining bool) (bool, error) {
	k := p.k
	moved := false
	for {
		s := p.wait
		p.wait = nil
		if s == nil {
			s = k.takeHeld()
		}
		if s == nil {
			next, ok := k.next()
			if !ok {
				return moved, nil
			}
			s = p.take(&next)
		}
		var zero Resp
		if err := k.screen(s, draining); err != nil {
			p.done(s, zero, err, false)
			moved = true
			continue
		}
		ok, err := p.ring.TrySubmit(k.def.deviceTypeID(), s.id, messages.FixedBytes(&s.msg))
		if err != nil { // the message cannot go to the device at all
			p.done(s, zero, &gpu.ExecutionError{Kernel: k.def.id, MessageID: s.id, Err: err}, true)
			moved = true
			continue
		}
		if !ok { // the device's input ring is full: try again later (no allocation)
			p.wait = s
			return moved, nil
		}
		p.pending[s.id] = s
		p.submitted(s)
		moved = true
	}
}

// collect delivers the replies the device has produced; it reports whether
// there were any, and a fault when the decider wants a restart.
func (p *devicePump[Req, Resp]) collect(draining bool) (bool, error) {
	k := p.k
	got := false
	var fault error
	for {
		h, n, ok := p.ring.TryPollInto(p.buf)
		if !ok {
			return got, fault
		}
		payload := p.buf[:min(n, len(p.buf))]
		got = true
		s := p.pending[h.CorrelationID]
		if s == nil {
			k.rt.logger.Warn("ringactor: device reply for no pending message", "kernel", k.def.id, "correlation", h.CorrelationID)
			continue
		}
		delete(p.pending, h.CorrelationID)
		var zero Resp
		if h.Status != ringmsg.StatusOK {
			ee := &gpu.ExecutionError{Kernel: k.def.id, MessageID: s.id, Err: k.def.deviceStatusError(h.Status)}
			p.done(s, zero, ee, true)
			if fault == nil && !draining && k.def.decider(ee) != supervision.Resume {
				fault = ee
			}
			continue
		}
		resp, err := messages.DecodeFixed[Resp](payload)
		if err != nil {
			p.done(s, zero, &gpu.ExecutionError{Kernel: k.def.id, MessageID: s.id, Err: err}, true)
			continue
		}
		p.done(s, resp, nil, false)
	}
}

// stop ends the device incarnation: the device handles what it was given
// (their replies are delivered), acknowledges termination and is released.
// Messages not yet forwarded stay queued for the next incarnation. It
// returns fault, or the failure to stop the device kernel.
func (p *devicePump[Req, Resp]) stop(fault error) error {
	p.leave()
	var moved *deviceMoved
	if errors.As(fault, &moved) {
		p.abandon()
		return fault
	}
	p.ring.Terminate(ring.TerminateDrain)
	ctx, cancel := context.WithTimeout(context.Background(), deviceTerminateTimeout)
	defer cancel()
	werr := p.ring.Wait(ctx)
	_, _ = p.collect(true) // replies left after the ack (draining: no fault)
	var zero Resp
	for id, s := range p.pending { // the device never answered these
		p.done(s, zero, &gpu.ExecutionError{Kernel: p.k.def.id, MessageID: s.id,
			Err: fmt.Errorf("device ring kernel stopped without answering: %w", errors.Join(werr, fault))}, true)
		delete(p.pending, id)
	}
	p.k.endBatch()
	cerr := p.ring.Close(ctx)
	if fault != nil {
		return fault
	}
	return errors.Join(werr, cerr)
}

// abandon leaves a failed device: replies it published are delivered; the
// message it was handling when it faulted (the oldest it held, if this
// kernel's launch faulted) gets an ExecutionError wrapping the fault; the
// others it held go back to the kernel, oldest first, for the fallback.
// (The device State is lost; the fallback starts from a fresh state.)
func (p *devicePump[Req, Resp]) abandon() {
	p.ring.Abandon()
	_, _ = p.collect(true) // replies published before the fault (draining: no fault)
	ids := make([]uint64, 0, len(p.pending))
	for id := range p.pending {
		ids = append(ids, id)
	}
	slices.Sort(ids) // message ids grow in admission order
	var zero Resp
	requeue := make([]*slot[Req, Resp], 0, len(ids))
	for i, id := range ids {
		s := p.pending[id]
		delete(p.pending, id)
		if i == 0 && p.faulted != nil {
			p.done(s, zero, &gpu.ExecutionError{Kernel: p.k.def.id, MessageID: s.id, Err: p.faulted}, true)
			continue
		}
		requeue = append(requeue, s)
	}
	p.unsubmit(requeue)
	p.k.devHeld = append(requeue, p.k.devHeld...)
	p.k.endBatch()
}

// deviceName names the kernel's device handler in logs: the built-in op,
// or the user program's entry.
func (d *KernelDef[Req, Resp]) deviceName() string {
	if d.device != 0 || d.prog == nil {
		return d.device.String()
	}
	return d.prog.src.Entry
}

// deviceTypeID is the slot type id of the kernel's messages on the device.
func (d *KernelDef[Req, Resp]) deviceTypeID() uint32 {
	if d.device != 0 || d.prog == nil {
		return d.device.TypeID()
	}
	return d.prog.typeID
}

// deviceStatusError is the cause of the ExecutionError of a device reply
// with a status other than OK: for a built-in handler the error its CPU
// implementation gives; for a user's handler a *DeviceStatusError (a
// length the loop refused, which typed messages cannot cause, is one too).
func (d *KernelDef[Req, Resp]) deviceStatusError(status uint32) error {
	if d.device != 0 || d.prog == nil {
		return ringmsg.StatusError(d.device, status)
	}
	return &DeviceStatusError{Kernel: d.id, Status: status}
}
