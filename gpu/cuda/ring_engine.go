package cuda

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/ring"
)

// SlotHeader starts every ring slot.
//
// Deprecated: use ring.SlotHeader.
type SlotHeader = ring.SlotHeader

// Terminate modes of [RingKernel.Terminate].
const (
	// Deprecated: use ring.TerminateDrain.
	TerminateDrain = ring.TerminateDrain
	// Deprecated: use ring.TerminateNow.
	TerminateNow = ring.TerminateNow
)

// terminateWait is how RingKernel.Wait polls the terminated ack, which
// nobody notifies about: 64 yields, then sleeps from 1 µs doubling up to
// 1 ms.
var terminateWait = ring.WaitStrategy{Yields: 64, SleepMin: time.Microsecond, SleepMax: time.Millisecond}

// RingConfig shapes a persistent ring kernel.
type RingConfig struct {
	Capacity int // slots per ring, a power of two (default 64)
	SlotSize int // bytes per slot, a multiple of 16 (default 4096, RC_SLOT_SIZE_MIN)
	Threads  int // threads of the kernel's one block, a power of two ≤ 256 (default 32)
}

// ErrRingTimeout is wrapped by the error of [RingKernel.Wait] when the
// kernel did not acknowledge termination before the deadline.
var ErrRingTimeout = errors.New("cuda: ring kernel did not acknowledge termination")

// RingKernel is the host side of one persistent ring kernel (rc_ring_kernel
// of RingPTX) running on the device: its control block and its two rings
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
type RingKernel struct {
	d       *device
	stream  Stream
	mem     unsafe.Pointer // the pinned allocation
	cb      *ring.ControlBlock
	in, out *ring.SlotRing
	waited  bool
	leaked  bool        // the kernel never acknowledged: memory is kept
	left    []ringReply // replies still in the output ring when it was released
	park    ringPark    // the device epoch's part (epoch.go)
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

// LaunchRing starts a persistent ring kernel with its gate closed (open
// it with Activate). It refuses a device with a kernel execution timeout
// (*WatchdogError) or without mapped host memory. RingPTX is loaded when
// the device opens, before any ring runs; its control block and rings come
// from the pinned arena (arena.go), so launching makes no synchronising
// driver call beside the rings already running (growing the arena runs in
// a device epoch).
func (b *Backend) LaunchRing(cfg RingConfig) (*RingKernel, error) {
	if err := b.CheckPersistent(); err != nil {
		return nil, err
	}
	d, err := b.device()
	if err != nil {
		return nil, err
	}
	if cfg.Capacity == 0 {
		cfg.Capacity = 64
	}
	if cfg.SlotSize == 0 {
		cfg.SlotSize = 4096
	}
	if cfg.Threads == 0 {
		cfg.Threads = 32
	}
	switch {
	case !ring.ValidCapacity(cfg.Capacity):
		return nil, &ring.CapacityError{Capacity: cfg.Capacity}
	case !ring.ValidSlotSize(cfg.SlotSize):
		return nil, fmt.Errorf("cuda: slot size %d is not a multiple of 16 holding a slot header: %w", cfg.SlotSize, gpu.ErrArgument)
	case cfg.Threads < 1 || cfg.Threads > 256 || cfg.Threads&(cfg.Threads-1) != 0 || cfg.Threads > d.attrs.MaxThreadsPerBlock:
		return nil, fmt.Errorf("cuda: %d ring kernel threads: want a power of two up to 256: %w", cfg.Threads, gpu.ErrArgument)
	}
	inOff, outOff, size := ringLayout(cfg.Capacity, cfg.SlotSize)
	k := &RingKernel{d: d}
	err = d.do(func() error {
		fn, err := d.ringFunction()
		if err != nil {
			return err
		}
		mem, base, err := d.pinned(size)
		if err != nil {
			return err
		}
		k.mem = mem
		clear(unsafe.Slice((*byte)(mem), size))
		k.cb = (*ring.ControlBlock)(mem)
		k.cb.LatencyMin.Store(^uint64(0))
		k.cb.Close()
		k.in = ring.NewSlotRing(unsafe.Add(mem, inOff), cfg.Capacity, cfg.SlotSize)
		k.out = ring.NewSlotRing(unsafe.Add(mem, outOff), cfg.Capacity, cfg.SlotSize)
		if k.stream, err = d.api.StreamCreate(StreamNonBlocking); err != nil {
			return err
		}
		k.park.fn, k.park.threads = fn, uint32(cfg.Threads)
		k.park.args = []uint64{ArgPtr(base), ArgPtr(base + DevicePtr(inOff)), ArgPtr(base + DevicePtr(outOff))}
		if err := d.api.LaunchKernel(fn, Dim3{X: 1}, Dim3{X: k.park.threads}, 0, k.stream, k.park.args...); err != nil {
			return err
		}
		d.addLive(k)
		return nil
	})
	if err != nil {
		_ = d.do(k.release)
		return nil, deviceErr(d.ordinal, err)
	}
	return k, nil
}

// ringFunction loads RingPTX once and returns rc_ring_kernel (inside Do);
// openDevice calls it first, before any ring runs.
func (d *device) ringFunction() (Function, error) {
	if f, ok := d.fns["rc_ring_kernel"]; ok {
		return f, nil
	}
	var mod Module
	var log JITLog
	err := d.epoch(context.Background(), "cuModuleLoadDataEx", func() error {
		var err error
		mod, log, err = d.api.ModuleLoadData(RingPTX, true)
		return err
	})
	if err != nil {
		return Function{}, &ModuleLoadError{Image: "ring", Log: log, Err: err}
	}
	f, err := d.api.ModuleGetFunction(mod, "rc_ring_kernel")
	if err != nil {
		return Function{}, errors.Join(err, d.api.ModuleUnload(mod))
	}
	var key [32]byte // the ring module sits in the PTX cache under the zero key, unloaded on close
	d.ptx[key] = &ptxModule{mod: mod, log: log, fns: map[string]Function{"rc_ring_kernel": f}}
	d.fns["rc_ring_kernel"] = f
	return f, nil
}

// PayloadMax is the payload room of one slot.
func (k *RingKernel) PayloadMax() int { return k.in.PayloadMax() }

// Control returns the kernel's control block (in mapped memory), for
// observers: counters, heartbeat, latency.
func (k *RingKernel) Control() *ring.ControlBlock { return k.cb }

// Activate opens the gate: the kernel consumes its input ring.
func (k *RingKernel) Activate() { k.cb.Open() }

// Deactivate closes the gate: messages queue, nothing is lost.
func (k *RingKernel) Deactivate() { k.cb.Close() }

// TrySubmit writes one message into the input ring and publishes it; it
// reports false when the ring is full (backpressure). A payload larger
// than a slot is an error. Producer side: one goroutine at a time.
func (k *RingKernel) TrySubmit(typeID uint32, correlationID uint64, payload []byte) (bool, error) {
	if k.mem == nil {
		return false, ErrRingClosed
	}
	if len(payload) > k.PayloadMax() {
		return false, fmt.Errorf("cuda: payload of %d bytes exceeds the slot's %d: %w", len(payload), k.PayloadMax(), gpu.ErrArgument)
	}
	ok := k.in.TryPushRaw(ring.SlotHeader{TypeID: typeID, CorrelationID: correlationID,
		TimestampNS: uint64(time.Now().UnixNano())}, payload)
	return ok, nil
}

// TryPoll copies out the oldest reply and hands its slot back; ok is false
// when there is none. Replies left in the ring when the kernel terminated
// stay readable after Wait. Consumer side: one goroutine at a time.
func (k *RingKernel) TryPoll() (h ring.SlotHeader, payload []byte, ok bool) {
	if k.mem == nil {
		if len(k.left) == 0 {
			return h, nil, false
		}
		r := k.left[0]
		k.left = k.left[1:]
		return r.h, r.payload, true
	}
	return k.out.TryPop()
}

// TryPollInto is TryPoll copying the payload into dst (of at least
// PayloadMax bytes) instead of a new slice; n is the payload's length.
// Consumer side: one goroutine at a time.
func (k *RingKernel) TryPollInto(dst []byte) (h ring.SlotHeader, n int, ok bool) {
	if k.mem == nil {
		h, p, ok := k.TryPoll()
		return h, copy(dst, p), ok
	}
	return k.out.TryPopInto(dst)
}

// Terminate asks the kernel to exit: ring.TerminateDrain handles what is
// queued first, ring.TerminateNow stops after the message in hand.
// During a device epoch the request is kept and applied when the ring is
// relaunched.
func (k *RingKernel) Terminate(mode ring.TerminateMode) { k.terminate(mode) }

// Wait waits until the kernel acknowledges termination (call Terminate
// first), then synchronises its stream and frees its stream and memory.
// It polls the ack with terminateWait (yields, then sleeps doubling up to
// 1 ms). When ctx ends first the
// error wraps ErrRingTimeout and ctx's error, and the memory is kept (the
// kernel may still use it). A bad launch shape reported by the kernel is
// an error too. Replies still in the output ring are kept for TryPoll.
// After success further calls return nil.
func (k *RingKernel) Wait(ctx context.Context) error {
	if k.waited {
		return nil
	}
	w := ring.Waiter{Strategy: terminateWait, Done: ctx.Done()}
	for {
		ack, lerr := k.ack()
		if ack != 0 {
			k.waited = true
			for {
				h, p, ok := k.TryPoll()
				if !ok {
					break
				}
				k.left = append(k.left, ringReply{h, p})
			}
			err := k.d.do(k.release)
			if ack == ring.TerminatedBadLaunch {
				err = errors.Join(fmt.Errorf("cuda: ring kernel rejected its launch shape: %w", gpu.ErrArgument), err)
			}
			err = errors.Join(lerr, err)
			return deviceErr(k.d.ordinal, err)
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
func (k *RingKernel) Close(ctx context.Context) error {
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
func (k *RingKernel) release() error {
	var errs []error
	if !k.stream.IsDefault() {
		errs = append(errs, k.d.api.StreamSynchronize(k.stream), k.d.api.StreamDestroy(k.stream))
		k.stream = Stream{}
	}
	delete(k.d.ep.live, k)
	if k.mem != nil {
		errs = append(errs, k.d.unpinned(k.mem))
		k.park.mu.Lock()
		k.mem, k.cb = nil, nil
		k.park.mu.Unlock()
	}
	return errors.Join(errs...)
}
