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

	"github.com/ringactor/ringactor/gpu"
)

// Config shapes a [Kernel].
type Config struct {
	Capacity int // slots per ring, a power of two (default 64)
	SlotSize int // bytes per slot, a multiple of 16 (default SlotSizeMin)
	Threads  int // threads of the loop's block (default 4); the kernel rejects non-powers of two
}

// ErrBusy is returned by [Launch] while another persistent loop runs in
// this process (the host build keeps __shared__ state in statics).
var ErrBusy = errors.New("hostsim: another persistent loop is running")

// Kernel is the persistent ring kernel running on host threads, with its
// control block and rings in C memory.
type Kernel struct {
	cb      *gpu.ControlBlock
	in, out *Ring
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
	if !gpu.ValidCapacity(cfg.Capacity) {
		return nil, &gpu.CapacityError{Capacity: cfg.Capacity}
	}
	if cfg.SlotSize < int(unsafe.Sizeof(SlotHeader{})) || cfg.SlotSize%16 != 0 {
		return nil, fmt.Errorf("hostsim: slot size %d is not a multiple of 16 holding a slot header", cfg.SlotSize)
	}
	if cfg.Threads < 1 || cfg.Threads > 1024 {
		return nil, fmt.Errorf("hostsim: %d threads out of range", cfg.Threads)
	}
	k := &Kernel{}
	cbMem, err := k.alloc(unsafe.Sizeof(gpu.ControlBlock{}))
	if err != nil {
		return nil, err
	}
	k.cb = (*gpu.ControlBlock)(cbMem)
	k.cb.LatencyMin.Store(^uint64(0))
	k.cb.Close()
	for _, r := range []**Ring{&k.in, &k.out} {
		mem, err := k.alloc(unsafe.Sizeof(RingHeader{}) + uintptr(cfg.Capacity)*uintptr(cfg.SlotSize))
		if err != nil {
			k.free()
			return nil, err
		}
		*r = newRing(mem, cfg.Capacity, cfg.SlotSize)
	}
	k.loop = C.rc_hs_loop_start((*C.rc_control_block)(cbMem), (*C.rc_ring_header)(unsafe.Pointer(k.in.hdr)),
		(*C.rc_ring_header)(unsafe.Pointer(k.out.hdr)), C.uint(cfg.Threads))
	if k.loop == nil {
		k.free()
		return nil, ErrBusy
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
func (k *Kernel) Control() *gpu.ControlBlock { return k.cb }

// Input returns the host → kernel ring; the caller is its only producer.
func (k *Kernel) Input() *Ring { return k.in }

// Output returns the kernel → host ring; the caller is its only consumer.
func (k *Kernel) Output() *Ring { return k.out }

// Terminate asks the loop to exit (TerminateDrain or TerminateNow).
func (k *Kernel) Terminate(mode uint64) { k.cb.Terminate.Store(mode) }

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
		k.Terminate(TerminateNow)
	}
	k.Wait()
	k.free()
}

// Ring is one single-producer/single-consumer slot ring in C memory: a
// RingHeader followed by Capacity slots of SlotSize bytes.
type Ring struct {
	hdr        *RingHeader
	slots      unsafe.Pointer
	mask       uint64
	slotSize   uint64
	cachedHead uint64 // producer-local
	cachedTail uint64 // consumer-local
}

func newRing(mem unsafe.Pointer, capacity, slotSize int) *Ring {
	hdr := (*RingHeader)(mem)
	hdr.Capacity = uint64(capacity)
	hdr.SlotSize = uint64(slotSize)
	return &Ring{
		hdr:      hdr,
		slots:    unsafe.Add(mem, unsafe.Sizeof(RingHeader{})),
		mask:     uint64(capacity - 1),
		slotSize: uint64(slotSize),
	}
}

func (r *Ring) slot(index uint64) unsafe.Pointer {
	return unsafe.Add(r.slots, (index&r.mask)*r.slotSize)
}

// Header returns the ring's header (indices and geometry).
func (r *Ring) Header() *RingHeader { return r.hdr }

// PayloadMax is the payload room of one slot.
func (r *Ring) PayloadMax() int { return int(r.slotSize) - int(unsafe.Sizeof(SlotHeader{})) }

// TryPushRaw writes h and payload into the next slot and publishes it; it
// reports false when the ring is full. h.Length is set to len(payload).
// Producer side only.
func (r *Ring) TryPushRaw(h SlotHeader, payload []byte) bool {
	if len(payload) > r.PayloadMax() {
		panic(fmt.Sprintf("hostsim: payload of %d bytes exceeds the slot's %d", len(payload), r.PayloadMax()))
	}
	tail := r.hdr.Tail.Load()
	if tail-r.cachedHead > r.mask {
		r.cachedHead = r.hdr.Head.Load() // acquire the consumer's progress
		if tail-r.cachedHead > r.mask {
			return false
		}
	}
	s := r.slot(tail)
	h.Length = uint32(len(payload))
	*(*SlotHeader)(s) = h
	copy(unsafe.Slice((*byte)(unsafe.Add(s, unsafe.Sizeof(SlotHeader{}))), len(payload)), payload)
	r.hdr.Tail.Store(tail + 1) // release: the slot before the index
	return true
}

// TryPush pushes msg as a message of the given type, stamped with the
// admission time. Producer side only.
func TryPush[T any](r *Ring, typeID uint32, correlationID uint64, msg *T) bool {
	b := unsafe.Slice((*byte)(unsafe.Pointer(msg)), unsafe.Sizeof(*msg))
	return r.TryPushRaw(SlotHeader{TypeID: typeID, CorrelationID: correlationID, TimestampNS: uint64(time.Now().UnixNano())}, b)
}

// TryPop copies out the oldest slot's header and payload (header.Length
// bytes, bounded by the slot) and hands the slot back; ok is false when
// the ring is empty. Consumer side only.
func (r *Ring) TryPop() (h SlotHeader, payload []byte, ok bool) {
	head := r.hdr.Head.Load()
	if head == r.cachedTail {
		r.cachedTail = r.hdr.Tail.Load() // acquire the producer's writes
		if head == r.cachedTail {
			return h, nil, false
		}
	}
	s := r.slot(head)
	h = *(*SlotHeader)(s)
	n := min(int(h.Length), r.PayloadMax())
	payload = make([]byte, n)
	copy(payload, unsafe.Slice((*byte)(unsafe.Add(s, unsafe.Sizeof(SlotHeader{}))), n))
	r.hdr.Head.Store(head + 1) // release the slot to the producer
	return h, payload, true
}

// Len is the number of slots in use (exact only when both sides are still).
func (r *Ring) Len() int {
	tail, head := r.hdr.Tail.Load(), r.hdr.Head.Load()
	if tail < head {
		return 0
	}
	return int(tail - head)
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
