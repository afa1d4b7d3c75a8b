package ringrt

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
	"github.com/ringactor/ringactor/gpu/ring"
)

// Fault reports a device fault of the kernel's launch (a trap, an illegal
// address, a failed assert: on a GPU such a fault is sticky for the whole
// context), or nil while none is known. It asks cuStreamQuery on the
// launch's stream (a mailbox's: its grid's), which neither waits nor
// synchronises (safe beside the running loop): CUDA_SUCCESS (the launch
// returned: terminated or parked) and CUDA_ERROR_NOT_READY (still
// running) are no fault; any other answer is, as a *gpu.DeviceError
// (gpu.DeviceFailed) wrapping the *DriverError. The query runs on the
// context's thread, so it is shared: one query per launch per
// faultProbeInterval answers every mailbox of a grid (and every caller),
// and a fault once seen is returned from then on without asking. A
// closed backend is no fault (nil), but for a fault seen before it
// closed. Consumer side.
func (k *Kernel) Fault() error {
	if k.mem == nil {
		return nil
	}
	l := k // the launch: the kernel's own, or its grid's
	if k.grid != nil {
		l = k.grid.k
	} else if k.stream.IsDefault() {
		return nil
	}
	return l.probe.answer(l, false)
}

// faultProbeInterval is how long an answer of a launch's fault query
// stands: however many mailboxes of a grid ask, its stream is queried
// (a hop to the device's thread) at most once per interval.
const faultProbeInterval = time.Millisecond

// probeBase is the origin of the probes' default clock.
var probeBase = time.Now()

// faultProbe is the shared fault query of one launch (a grid's, or a
// kernel's from LaunchRingProgram): the last answer and when it was
// given, refreshed by one caller at a time when it is older than
// faultProbeInterval; a fault, once seen, stays.
type faultProbe struct {
	fault atomic.Pointer[gpu.DeviceError] // the launch's fault, once seen
	at    atomic.Int64                    // the clock at the last answer, plus 1 (0: none yet)
	busy  atomic.Bool                     // a caller is refreshing the answer
	now   func() time.Duration            // the clock (nil: monotonic time); tests set it
}

// clock reads the probe's clock.
func (p *faultProbe) clock() time.Duration {
	if p.now != nil {
		return p.now()
	}
	return time.Since(probeBase)
}

// known returns the fault seen, or nil.
func (p *faultProbe) known() error {
	if f := p.fault.Load(); f != nil {
		return f
	}
	return nil
}

// fresh reports whether the last answer is younger than the interval at
// now.
func (p *faultProbe) fresh(now time.Duration) bool {
	at := p.at.Load()
	return at != 0 && now-time.Duration(at-1) < faultProbeInterval
}

// answer returns the fault of launch l: the last answer while it is
// fresh (unless force), else the known fault, else a new query made on
// the device's thread by this caller. A caller that finds another one
// refreshing does not also hop: it returns the last answer. force (a
// caller that must know now) queries whatever the age of the answer.
func (p *faultProbe) answer(l *Kernel, force bool) error {
	now := p.clock()
	if !force {
		if p.fresh(now) {
			return p.known()
		}
		if !p.busy.CompareAndSwap(false, true) {
			return p.known()
		}
		defer p.busy.Store(false)
		if p.fresh(now) { // refreshed between the look and the claim
			return p.known()
		}
	}
	if f := p.known(); f != nil {
		return f
	}
	var f error
	if err := l.d.Do(func() error { f = p.query(l); return nil }); err != nil {
		return nil // a closed backend
	}
	p.at.Store(int64(now) + 1)
	return f
}

// query asks cuStreamQuery on l's stream and records a fault (inside Do).
func (p *faultProbe) query(l *Kernel) error {
	if f := p.known(); f != nil {
		return f
	}
	if l.stream.IsDefault() {
		return nil
	}
	f := launchFault(l.d.API.StreamQuery(l.stream), l.d.Ordinal)
	if f == nil {
		return nil
	}
	p.fault.CompareAndSwap(nil, f)
	return p.known()
}

// launchFault classifies the answer of cuStreamQuery on a ring's stream.
func launchFault(q error, ordinal int) *gpu.DeviceError {
	var de *driverapi.DriverError
	if q == nil || (errors.As(q, &de) && de.Result() == driverapi.ErrNotReady) {
		return nil
	}
	return &gpu.DeviceError{Kind: gpu.DeviceFailed, Backend: driverapi.BackendName, Device: ordinal,
		Reason: "a persistent ring kernel faulted; the context is unusable", Err: q}
}

// abandonWait bounds Abandon's wait for the terminated ack of a kernel
// whose context failed.
const abandonWait = 200 * time.Millisecond

// Abandon stops using the kernel after a device fault: it asks for an
// immediate terminate and waits briefly for the ack (a kernel still
// running acknowledges; its published replies stay readable with TryPoll).
// A kernel that does not acknowledge is released when its launch is known
// to have ended (Fault is not nil), and otherwise its memory is kept.
func (k *Kernel) Abandon() {
	if k.waited || k.mem == nil {
		return
	}
	if k.cb.Terminate.Load() == 0 {
		k.Terminate(ring.TerminateNow)
	}
	ctx, cancel := context.WithTimeout(context.Background(), abandonWait)
	defer cancel()
	if err := k.Wait(ctx); err == nil || !errors.Is(err, ErrRingTimeout) {
		return
	}
	l := k
	if k.grid != nil {
		l = k.grid.k
	}
	if l.probe.answer(l, true) != nil { // the launch has ended: nothing uses the memory
		for {
			h, p, ok := k.out.TryPop()
			if !ok {
				break
			}
			k.left = append(k.left, ringReply{h, p})
		}
		k.waited, k.leaked = true, false
		_ = k.d.Do(k.release)
	}
}
