package ring

import (
	"fmt"
	"unsafe"
)

// TerminateMode is a value of the control block's terminate word
// (host → kernel).
type TerminateMode uint64

// Terminate modes (RC_TERMINATE_* in C).
const (
	// TerminateNone: the loop runs.
	TerminateNone TerminateMode = 0
	// TerminateDrain: handle everything already queued (gate ignored), then
	// exit.
	TerminateDrain TerminateMode = 1
	// TerminateNow: exit after the message in hand; the rest stays queued.
	TerminateNow TerminateMode = 2
)

// Terminated-ack values the kernel stores in the control block's
// TerminatedAck word when its loop exits (RC_TERMINATED* in C); 0 means it
// runs.
const (
	// Terminated: the loop exited after a terminate.
	Terminated uint64 = 1
	// TerminatedBadLaunch: a device kernel rejected its launch shape and
	// exited at once.
	TerminatedBadLaunch uint64 = 2
)

// Slot flags (SlotHeader.Flags, RC_FLAG_* in C).
const (
	// FlagReply is set on every reply.
	FlagReply uint32 = 1
	// FlagError is set on a reply whose status is not StatusOK.
	FlagError uint32 = 2
)

// Reply status codes (SlotHeader.Status, RC_STATUS_* in C).
const (
	// StatusOK: the handler ran.
	StatusOK uint32 = 0
	// StatusUnknownType: no handler for the type id.
	StatusUnknownType uint32 = 1
	// StatusBadLength: the length is not the payload struct's size, or it
	// does not fit the slot.
	StatusBadLength uint32 = 2
	// StatusBadArgs: the payload's arguments are out of range.
	StatusBadArgs uint32 = 3
)

// RingHeader starts the memory of a slot ring (rc_ring_header): head and
// tail each alone on a cache line, then the geometry, written before the
// consumer starts and read-only afterwards. Capacity slots of SlotSize
// bytes follow it.
type RingHeader struct {
	Head     Word   // next index the consumer reads; written by the consumer only
	Tail     Word   // next index the producer writes; written by the producer only
	Capacity uint64 // slots, a power of two
	SlotSize uint64 // bytes per slot, header included
	_        [CacheLine - 16]byte
}

// SlotHeader starts every slot of a slot ring, request and reply alike
// (rc_slot_header); the payload follows it.
type SlotHeader struct {
	TypeID        uint32 // message kind; a reply carries its request's
	Flags         uint32 // FlagReply, FlagError
	CorrelationID uint64 // copied from request to reply
	Length        uint32 // payload bytes used
	Status        uint32 // 0 in requests; Status* in replies
	TimestampNS   uint64 // request: admission time (0 = none); reply: copied from the request
}

// SlotRingSize is the bytes of memory a slot ring of the given geometry
// occupies: its header and its slots.
func SlotRingSize(capacity, slotSize int) uintptr {
	return unsafe.Sizeof(RingHeader{}) + uintptr(capacity)*uintptr(slotSize)
}

// ValidSlotSize reports whether n can be a slot ring's slot size: a
// multiple of 16 that holds a SlotHeader.
func ValidSlotSize(n int) bool {
	return n >= int(unsafe.Sizeof(SlotHeader{})) && n%16 == 0
}

// SlotRing is the host's end of one single-producer/single-consumer ring
// of fixed-size byte slots in raw memory (pinned host memory mapped into a
// device, or C memory): a [RingHeader] followed by its slots. The host is
// the producer of a kernel's input ring and the consumer of its output
// ring; the other side is device code following the same protocol
// (kernels/ring_loop.cuh).
//
// Exactly one goroutine may push at a time and exactly one may pop at a
// time. Go's atomic stores are sequentially consistent, hence release
// stores as the protocol requires; no read-modify-write is shared with the
// other side.
type SlotRing struct {
	hdr        *RingHeader
	slots      unsafe.Pointer
	mask       uint64
	slotSize   uint64
	cachedHead uint64 // producer-local
	cachedTail uint64 // consumer-local
}

// NewSlotRing lays out a slot ring at mem, which must hold
// SlotRingSize(capacity, slotSize) bytes, be 8-byte aligned and stay
// allocated while the ring is used: it writes the header's geometry and
// zero indices. capacity must satisfy ValidCapacity and slotSize
// ValidSlotSize.
func NewSlotRing(mem unsafe.Pointer, capacity, slotSize int) *SlotRing {
	r := &SlotRing{}
	r.init(mem, capacity, slotSize)
	return r
}

func (r *SlotRing) init(mem unsafe.Pointer, capacity, slotSize int) {
	hdr := (*RingHeader)(mem)
	hdr.Head.Store(0)
	hdr.Tail.Store(0)
	hdr.Capacity = uint64(capacity)
	hdr.SlotSize = uint64(slotSize)
	*r = SlotRing{hdr: hdr, slots: unsafe.Add(mem, unsafe.Sizeof(RingHeader{})),
		mask: uint64(capacity - 1), slotSize: uint64(slotSize)}
}

func (r *SlotRing) slot(index uint64) unsafe.Pointer {
	return unsafe.Add(r.slots, (index&r.mask)*r.slotSize)
}

// Header returns the ring's header (indices and geometry).
func (r *SlotRing) Header() *RingHeader { return r.hdr }

// Cap returns the ring's capacity in slots.
func (r *SlotRing) Cap() int { return int(r.mask + 1) }

// PayloadMax is the payload room of one slot.
func (r *SlotRing) PayloadMax() int { return int(r.slotSize) - int(unsafe.Sizeof(SlotHeader{})) }

// TryPushRaw writes h and payload into the next slot and publishes it; it
// reports false when the ring is full. h.Length is set to len(payload); a
// payload larger than PayloadMax panics. Producer side only.
func (r *SlotRing) TryPushRaw(h SlotHeader, payload []byte) bool {
	if len(payload) > r.PayloadMax() {
		panic(fmt.Sprintf("ring: payload of %d bytes exceeds the slot's %d", len(payload), r.PayloadMax()))
	}
	tail := r.hdr.Tail.Load() // own index: no other writer
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

// TryPop copies out the oldest slot's header and payload (header.Length
// bytes, bounded by the slot) and hands the slot back; ok is false when
// the ring is empty. Consumer side only.
func (r *SlotRing) TryPop() (h SlotHeader, payload []byte, ok bool) {
	head := r.hdr.Head.Load() // own index
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

// TryPopInto is TryPop copying the payload into dst instead of a new
// slice: n is the payload's length, at most len(dst) bytes of it copied
// (a dst of PayloadMax bytes holds any payload). Consumer side only.
func (r *SlotRing) TryPopInto(dst []byte) (h SlotHeader, n int, ok bool) {
	head := r.hdr.Head.Load() // own index
	if head == r.cachedTail {
		r.cachedTail = r.hdr.Tail.Load() // acquire the producer's writes
		if head == r.cachedTail {
			return h, 0, false
		}
	}
	s := r.slot(head)
	h = *(*SlotHeader)(s)
	n = min(int(h.Length), r.PayloadMax())
	copy(dst, unsafe.Slice((*byte)(unsafe.Add(s, unsafe.Sizeof(SlotHeader{}))), n))
	r.hdr.Head.Store(head + 1) // release the slot to the producer
	return h, n, true
}

// Len is the number of slots in use (exact only when both sides are still).
func (r *SlotRing) Len() int {
	tail, head := r.hdr.Tail.Load(), r.hdr.Head.Load()
	if tail < head {
		return 0
	}
	return int(tail - head)
}
