package ringrt

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/internal/devcore"
	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
	"github.com/ringactor/ringactor/gpu/ring"
)

// terminateWait is how Kernel.Wait polls the terminated ack, which
// nobody notifies about: 64 yields, then sleeps from 1 µs doubling up to
// 1 ms.
var terminateWait = ring.WaitStrategy{Yields: 64, SleepMin: time.Microsecond, SleepMax: time.Millisecond}

// Config shapes a persistent ring kernel.
type Config struct {
	Capacity int // slots per ring, a power of two (default 64)
	SlotSize int // bytes per slot, a multiple of 16 (default 4096, RC_SLOT_SIZE_MIN)
	Threads  int // threads of the kernel's one block, 1 to 1024 (default 32; 4 on the simulated device)
}

// ErrRingTimeout is wrapped by the error of [Kernel.Wait] when the
// kernel did not acknowledge termination before the deadline.
var ErrRingTimeout = errors.New("cuda: ring kernel did not acknowledge termination")

// Kernel is the host side of one persistent ring kernel (a ring
// program launched by LaunchRingProgram) running on the device: its control block and its two rings
// live in one block of the backend's pinned arena, mapped into the device
// (cuMemHostAlloc PORTABLE|DEVICEMAP chunks reserved when the device
// opens), and the kernel runs on a non-blocking stream of its own, so the
// backend's one-shot work is not ordered behind it. A device epoch
// (epoch.go) may park and relaunch it on the same memory; its owner sees
// only added latency.
//
// The host writes the gate and terminate words, and is the only producer
// of the input ring and the only consumer of the output ring: Submit and
// Poll must each be called from one goroutine at a time. Go's atomic
// stores are sequentially consistent, hence release stores as the
// protocol requires; no read-modify-write is shared with the device.
type Kernel struct {
	d       *devcore.Device
	stream  driverapi.Stream
	mem     unsafe.Pointer // the pinned allocation
	cb      *ring.ControlBlock
	in, out *ring.SlotRing
	waited  bool
	leaked  bool           // the kernel never acknowledged: memory is kept
	left    []ringReply    // replies still in the output ring when it was released
	park    ringPark       // the device epoch's part (epoch.go)
	grid    *ringGrid      // a mailbox's grid (nil for a kernel with a loop of its own)
	box     uint32         // a mailbox's index in its grid's table
	serves  *ringGrid      // set on a grid's own launch
	claim   *devcore.Claim // the launch's blocks in the device's budget (budget.go); nil for a mailbox
	pinned  int            // a mailbox's bytes in its runtime's pinned bound
	probe   faultProbe     // the launch's fault query, shared by a grid's mailboxes (fault.go)

	laneOut     *Lane               // the device lane the mailbox's replies go to (lane.go)
	lanesIn     []*Lane             // the device lanes it reads
	laneSet     *ring.LaneSet       // their addresses (pinned), which its block reads
	laneSetBase driverapi.DevicePtr // laneSet's device address
}

type ringReply struct {
	h       ring.SlotHeader
	payload []byte
}

// ErrRingClosed is returned by TrySubmit once the kernel has terminated
// and its memory is released.
var ErrRingClosed = errors.New("cuda: ring kernel terminated")

func align64(n uintptr) uintptr { return (n + 63) &^ 63 }

// ringLayout returns the offsets of the rings in the allocation and its
// size.
func ringLayout(capacity, slotSize int) (in, out, size uintptr) {
	r := ring.SlotRingSize(capacity, slotSize)
	in = align64(unsafe.Sizeof(ring.ControlBlock{}))
	out = in + align64(r)
	return in, out, out + align64(r)
}

// PayloadMax is the payload room of one slot.
func (k *Kernel) PayloadMax() int { return k.in.PayloadMax() }

// Control returns the kernel's control block (in mapped memory), for
// observers: counters, heartbeat, latency.
func (k *Kernel) Control() *ring.ControlBlock { return k.cb }

// Activate opens the gate: the kernel consumes its input ring.
func (k *Kernel) Activate() {
	k.cb.Open()
	k.bell()
}

// bell rings a mailbox's doorbell (nothing for a kernel with a loop of its
// own).
func (k *Kernel) bell() {
	if k.grid != nil {
		k.grid.ring(k.box)
	}
}

// Deactivate closes the gate: messages queue, nothing is lost.
func (k *Kernel) Deactivate() { k.cb.Close() }

// TrySubmit writes one message into the input ring and publishes it; it
// reports false when the ring is full (backpressure). A payload larger
// than a slot is an error. Producer side: one goroutine at a time.
func (k *Kernel) TrySubmit(typeID uint32, correlationID uint64, payload []byte) (bool, error) {
	if k.mem == nil {
		return false, ErrRingClosed
	}
	if len(payload) > k.PayloadMax() {
		return false, fmt.Errorf("cuda: payload of %d bytes exceeds the slot's %d: %w", len(payload), k.PayloadMax(), gpu.ErrArgument)
	}
	if k.grid == nil {
		ok := k.in.TryPushRaw(ring.SlotHeader{TypeID: typeID, CorrelationID: correlationID,
			TimestampNS: uint64(time.Now().UnixNano())}, payload)
		return ok, nil
	}
	// A mailbox: ring when the ring was empty before this request (the
	// block serving it otherwise sees the request when it looks at the
	// tail after storing the previous one's head: grid_loop.cuh).
	hdr := k.in.Header()
	tail := hdr.Tail.Load()
	ok := k.in.TryPushRaw(ring.SlotHeader{TypeID: typeID, CorrelationID: correlationID,
		TimestampNS: uint64(time.Now().UnixNano())}, payload)
	if ok && hdr.Head.Load() == tail {
		k.grid.ring(k.box)
	}
	return ok, nil
}

// TryPoll copies out the oldest reply and hands its slot back; ok is false
// when there is none. Replies left in the ring when the kernel terminated
// stay readable after Wait. An empty poll also relaunches a ring whose
// loop stopped for a device epoch that gave up waiting for it (epoch.go).
// Consumer side: one goroutine at a time.
func (k *Kernel) TryPoll() (h ring.SlotHeader, payload []byte, ok bool) {
	h, payload, ok = k.tryPoll()
	if !ok {
		k.reviveLaunch()
	}
	return h, payload, ok
}

// reviveLaunch relaunches the loop serving the kernel (its own, or its
// grid's) if it exited for an abandoned device epoch (epoch.go).
func (k *Kernel) reviveLaunch() {
	if k.grid != nil {
		k.grid.k.revive()
		return
	}
	if k.mem != nil {
		k.revive()
	}
}

// tryPoll is TryPoll without reviveLaunch (inside Do, and Wait).
func (k *Kernel) tryPoll() (h ring.SlotHeader, payload []byte, ok bool) {
	if k.mem == nil {
		if len(k.left) == 0 {
			return h, nil, false
		}
		r := k.left[0]
		k.left = k.left[1:]
		return r.h, r.payload, true
	}
	h, p, ok := k.out.TryPop()
	if ok {
		k.freed()
	}
	return h, p, ok
}

// freed rings a mailbox whose block let it go for want of room in its
// output ring, after the host freed a slot there.
func (k *Kernel) freed() {
	if k.grid != nil && k.grid.outWaited(k.box) {
		k.grid.ring(k.box)
	}
}

// TryPollInto is TryPoll copying the payload into dst (of at least
// PayloadMax bytes) instead of a new slice; n is the payload's length.
// Consumer side: one goroutine at a time.
func (k *Kernel) TryPollInto(dst []byte) (h ring.SlotHeader, n int, ok bool) {
	if k.mem == nil {
		h, p, ok := k.TryPoll()
		return h, copy(dst, p), ok
	}
	h, n, ok = k.out.TryPopInto(dst)
	if ok {
		k.freed()
	} else {
		k.reviveLaunch()
	}
	return h, n, ok
}

// Terminate asks the kernel to exit: ring.TerminateDrain handles what is
// queued first, ring.TerminateNow stops after the message in hand.
// During a device epoch the request is kept and applied when the ring is
// relaunched.
func (k *Kernel) Terminate(mode ring.TerminateMode) {
	k.terminate(mode)
	k.bell()
}

// Wait waits until the kernel acknowledges termination (call Terminate
// first), then synchronises its stream and frees its stream and memory.
// It polls the ack with terminateWait (yields, then sleeps doubling up to
// 1 ms). When ctx ends first the
// error wraps ErrRingTimeout and ctx's error, and the memory is kept (the
// kernel may still use it). A bad launch shape reported by the kernel is
// an error too. Replies still in the output ring are kept for TryPoll.
// After success further calls return nil.
func (k *Kernel) Wait(ctx context.Context) error {
	if k.waited {
		return nil
	}
	w := ring.Waiter{Strategy: terminateWait, Done: ctx.Done()}
	for {
		k.reviveLaunch()
		ack, lerr := k.ack()
		if ack != 0 {
			k.waited = true
			for {
				h, p, ok := k.tryPoll()
				if !ok {
					break
				}
				k.left = append(k.left, ringReply{h, p})
			}
			err := k.d.Do(k.release)
			if ack == ring.TerminatedBadLaunch {
				err = errors.Join(fmt.Errorf("cuda: ring kernel rejected its launch shape: %w", gpu.ErrArgument), err)
			}
			err = errors.Join(lerr, err)
			return devcore.DeviceErr(k.d.Ordinal, err)
		}
		if err := ctx.Err(); err != nil {
			k.leaked = true
			return fmt.Errorf("%w (terminate = %d): %w", ErrRingTimeout, k.cb.Terminate.Load(), err)
		}
		w.Wait(nil, nil)
	}
}

// Close terminates the kernel (TerminateNow unless a mode is set) and
// waits for it as Wait does.
func (k *Kernel) Close(ctx context.Context) error {
	if k.waited {
		return nil
	}
	k.park.mu.Lock()
	asked := k.park.want != 0
	k.park.mu.Unlock()
	if !asked {
		k.Terminate(ring.TerminateNow)
	}
	return k.Wait(ctx)
}

// release synchronises and destroys the stream and gives the memory back
// to the pinned arena (inside Do; the loop has exited, so the stream's
// synchronisation waits for nothing that runs on).
func (k *Kernel) release() error {
	var errs []error
	if !k.stream.IsDefault() {
		errs = append(errs, k.d.API.StreamSynchronize(k.stream), k.d.API.StreamDestroy(k.stream))
		k.stream = driverapi.Stream{}
	}
	k.d.Epochs.Remove((*parkedRing)(k))
	if k.serves != nil {
		errs = append(errs, k.serves.close())
	}
	if k.grid != nil {
		k.grid.remove(k)
		errs = append(errs, k.releaseLanes())
		k.grid.rt.pinned -= k.pinned
		k.pinned = 0
	}
	k.claim.Release()
	if k.mem != nil {
		errs = append(errs, k.d.Unpinned(k.mem))
		k.park.mu.Lock()
		k.mem, k.cb = nil, nil
		k.park.mu.Unlock()
	}
	return errors.Join(errs...)
}
