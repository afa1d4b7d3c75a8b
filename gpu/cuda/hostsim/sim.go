//go:build linux && cgo

package hostsim

/*
#cgo CXXFLAGS: -std=c++20 -O2
#cgo LDFLAGS: -lstdc++ -lpthread
#include "hostsim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/ringactor/ringactor/gpu/ring"
)

// Config shapes a [Kernel].
type Config struct {
	Capacity int // slots per ring, a power of two (default 64)
	SlotSize int // bytes per slot, a multiple of 16 (default SlotSizeMin)
	Threads  int // threads of the loop's block (default 4); the kernel rejects non-powers of two
}

// ErrBusy was returned by [Launch] while another persistent loop ran in
// this process. Each loop now has __shared__ state of its own and any
// number run at once, so it is no longer returned; it stays for code that
// tests for it.
var ErrBusy = errors.New("hostsim: another persistent loop is running")

// Kernel is the persistent ring kernel running on host threads, with its
// control block and rings in C memory.
type Kernel struct {
	cb      *ring.ControlBlock
	in, out *ring.SlotRing
	loop    *C.rc_hs_loop
	mem     []unsafe.Pointer
}

// Launch allocates the control block (gate closed) and both rings and
// starts the loop.
func Launch(cfg Config) (*Kernel, error) {
	if cfg.Capacity == 0 {
		cfg.Capacity = 64
	}
	if cfg.SlotSize == 0 {
		cfg.SlotSize = SlotSizeMin
	}
	if cfg.Threads == 0 {
		cfg.Threads = 4
	}
	if !ring.ValidCapacity(cfg.Capacity) {
		return nil, &ring.CapacityError{Capacity: cfg.Capacity}
	}
	if !ring.ValidSlotSize(cfg.SlotSize) {
		return nil, fmt.Errorf("hostsim: slot size %d is not a multiple of 16 holding a slot header", cfg.SlotSize)
	}
	if cfg.Threads < 1 || cfg.Threads > 1024 {
		return nil, fmt.Errorf("hostsim: %d threads out of range", cfg.Threads)
	}
	k := &Kernel{}
	cbMem, err := k.alloc(unsafe.Sizeof(ring.ControlBlock{}))
	if err != nil {
		return nil, err
	}
	k.cb = (*ring.ControlBlock)(cbMem)
	k.cb.LatencyMin.Store(^uint64(0))
	k.cb.Close()
	for _, r := range []**ring.SlotRing{&k.in, &k.out} {
		mem, err := k.alloc(ring.SlotRingSize(cfg.Capacity, cfg.SlotSize))
		if err != nil {
			k.free()
			return nil, err
		}
		*r = ring.NewSlotRing(mem, cfg.Capacity, cfg.SlotSize)
	}
	k.loop = C.rc_hs_loop_start((*C.rc_control_block)(cbMem), (*C.rc_ring_header)(unsafe.Pointer(k.in.Header())),
		(*C.rc_ring_header)(unsafe.Pointer(k.out.Header())), C.uint(cfg.Threads))
	if k.loop == nil {
		k.free()
		return nil, errors.New("hostsim: out of memory starting the loop")
	}
	return k, nil
}

func (k *Kernel) alloc(size uintptr) (unsafe.Pointer, error) {
	p := C.rc_hs_alloc(C.size_t(size))
	if p == nil {
		return nil, errors.New("hostsim: out of memory")
	}
	k.mem = append(k.mem, p)
	return p, nil
}

func (k *Kernel) free() {
	for _, p := range k.mem {
		C.rc_hs_free(p)
	}
	k.mem = nil
}

// Control returns the kernel's control block (in C memory).
func (k *Kernel) Control() *ring.ControlBlock { return k.cb }

// Input returns the host → kernel ring; the caller is its only producer.
func (k *Kernel) Input() *ring.SlotRing { return k.in }

// Output returns the kernel → host ring; the caller is its only consumer.
func (k *Kernel) Output() *ring.SlotRing { return k.out }

// Terminate asks the loop to exit (ring.TerminateDrain or
// ring.TerminateNow).
func (k *Kernel) Terminate(mode ring.TerminateMode) { k.cb.Terminate.Store(uint64(mode)) }

// Wait blocks until the loop has exited and returns its terminated ack.
// With TerminateDrain the caller must keep popping replies meanwhile if
// the output ring may fill. Wait may be called once.
func (k *Kernel) Wait() uint64 {
	if k.loop != nil {
		C.rc_hs_loop_join(k.loop)
		k.loop = nil
	}
	return k.cb.TerminatedAck.Load()
}

// Close stops the loop (TerminateNow unless a terminate is already set),
// waits for it and frees the memory.
func (k *Kernel) Close() {
	if k.loop != nil && k.cb.Terminate.Load() == 0 {
		k.Terminate(ring.TerminateNow)
	}
	k.Wait()
	k.free()
}

// TryPush pushes msg as a message of the given type, stamped with the
// admission time. Producer side only.
func TryPush[T any](r *ring.SlotRing, typeID uint32, correlationID uint64, msg *T) bool {
	b := unsafe.Slice((*byte)(unsafe.Pointer(msg)), unsafe.Sizeof(*msg))
	return r.TryPushRaw(ring.SlotHeader{TypeID: typeID, CorrelationID: correlationID, TimestampNS: uint64(time.Now().UnixNano())}, b)
}

// Decode copies a payload into a T; the length must be exactly T's size.
func Decode[T any](b []byte) (T, error) {
	var v T
	if uintptr(len(b)) != unsafe.Sizeof(v) {
		return v, fmt.Errorf("hostsim: payload of %d bytes, %T needs %d", len(b), v, unsafe.Sizeof(v))
	}
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&v)), len(b)), b)
	return v, nil
}

// KernelsStamp is the kernel-source hash this package was compiled with.
func KernelsStamp() string { return C.GoString(C.rc_hs_kernels_stamp()) }
