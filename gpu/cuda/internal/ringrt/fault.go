package ringrt

import (
	"context"
	"errors"
	"time"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
	"github.com/ringactor/ringactor/gpu/ring"
)

// Fault reports a device fault of the kernel's launch (a trap, an illegal
// address, a failed assert: on a GPU such a fault is sticky for the whole
// context), or nil while none is known. It asks cuStreamQuery on the
// ring's own stream, which neither waits nor synchronises (safe beside
// the running loop): CUDA_SUCCESS (the launch returned: terminated or
// parked) and CUDA_ERROR_NOT_READY (still running) are no fault; any other
// answer is, as a *gpu.DeviceError (gpu.DeviceFailed) wrapping the
// *DriverError. The query runs on the context's thread, so it costs a hop
// there: poll it when idle or at a modest rate, not per message. A closed
// backend is no fault (nil). Consumer side.
func (k *Kernel) Fault() error {
	if k.mem == nil || (k.stream.IsDefault() && k.grid == nil) {
		return nil
	}
	var q error
	err := k.d.Do(func() error {
		s := k.stream
		if k.grid != nil { // a mailbox: its grid's launch
			s = k.grid.k.stream
		}
		if !s.IsDefault() {
			q = k.d.API.StreamQuery(s)
		}
		return nil
	})
	if err != nil {
		return nil
	}
	return launchFault(q, k.d.Ordinal)
}

// launchFault classifies the answer of cuStreamQuery on a ring's stream.
func launchFault(q error, ordinal int) error {
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
	if k.Fault() != nil { // the launch has ended: nothing uses the memory
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
