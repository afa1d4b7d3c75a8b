package ring

// Device lanes: the replies of one device ring kernel (a mailbox of a
// program grid) go straight into the mailbox of the next one on the same
// device, in device memory, without crossing the host link.
//
// A lane is a single-producer/single-consumer ring in device memory: a
// LaneHeader, then Capacity slots of SlotSize bytes, each a LaneSlot
// followed by a SlotHeader and the payload. The upstream mailbox's block
// (whichever block owns it) is the only producer, the downstream's the
// only consumer. A slot is published by its sequence number, never by a
// bare index: slot i of lap L is free for the producer when Seq == i +
// L·Capacity and holds a message for the consumer when Seq == that + 1.
// The producer writes the slot's bytes, then publishes Seq with a release
// store (device scope); the consumer acquire-loads Seq before it reads the
// bytes and hands the slot back with Seq = position + Capacity. So a
// reader never sees a half-written message (DotCompute's device queue
// claims a slot with atomicAdd and has no ready flag).
//
// Fan-in is one lane per upstream, and the downstream's block polls its
// lanes (and its host input ring, a separate single-producer ring)
// round robin: two producers never share a ring, so no slot is claimed
// before it is written and no claim has to be undone when a ring is full.
//
// Wake-ups stay on the device: after a publish the producer claims the
// downstream's mailbox in the downstream grid's claim words (device
// memory) and hands it to that grid's ready queue (or marks it AGAIN for
// its owner), exactly as a block hands a mailbox over at a quantum's end.
// A producer that finds no room stores UpWait = 1, fences, and looks
// again before it lets its mailbox go; the consumer hands a slot back,
// fences, and wakes the upstream when UpWait is 1 (one of the two sees the
// other). A full lane thus holds the upstream's reply (never dropped,
// never overwritten) and the upstream takes no input until there is room.
//
// State is a device word both blocks change with atomics (device memory):
// the producer holds it at LaneWriting while it writes a slot; a
// downstream that finishes (terminate) closes the lane by a
// compare-and-swap LaneOpen → LaneClosed, so no message is published
// after its last look. An upstream that finds its lane closed sends its
// replies to its own host output ring instead (the host relays them).

// LaneSlotsMax bounds the lanes one mailbox reads (its fan-in).
const LaneSlotsMax = 16

// Lane state values (LaneHeader.State, device atomics).
const (
	// LaneOpen: the producer may publish.
	LaneOpen uint64 = 0
	// LaneWriting: the producer is writing a slot (the consumer waits to close).
	LaneWriting uint64 = 1
	// LaneClosed: the consumer finished; the producer's replies go to its host output ring.
	LaneClosed uint64 = 2
)

// FlagOriginShift places a reply's origin stage in SlotHeader.Flags: a
// reply whose error came from an upstream stage of a device chain carries
// that stage's number (LaneHeader.Stage, from 1) in the bits from here on;
// 0 says the error is the replying kernel's own.
const FlagOriginShift = 16

// LaneHeader starts a lane's device memory (rc_lane_header). The host
// writes it before the first message (a copy on the backend's stream)
// and rewrites the wake targets in a device epoch when a grid's table
// moves; the device updates Head, Tail, UpWait and State.
type LaneHeader struct {
	Head     uint64 // the consumer's next position (the downstream's owning block; kept across hand-overs and parks)
	_        [CacheLine - 8]byte
	Tail     uint64 // the producer's next position (the upstream's owning block)
	_        [CacheLine - 8]byte
	UpWait   uint64 // 1 while the upstream waits for room: the producer stores 1, the consumer 0 when it wakes it
	State    uint64 // LaneOpen, LaneWriting or LaneClosed (device atomics)
	_        [CacheLine - 16]byte
	Capacity uint64 // slots, a power of two
	SlotSize uint64 // bytes per slot: LaneSlot, SlotHeader and the payload, a multiple of 16
	Stage    uint64 // the upstream's stage number (from 1), carried by the errors it produces
	UpWords  uint64 // device address of the upstream grid's GridWords (to wake it)
	UpBox    uint64 // the upstream's mailbox index
	DnWords  uint64 // device address of the downstream grid's GridWords
	DnBox    uint64 // the downstream's mailbox index
	_        uint64
}

// LaneSlot starts every slot of a lane (rc_lane_slot); a SlotHeader and
// the payload follow it.
type LaneSlot struct {
	Seq    uint64 // the slot's sequence number (device release stores, acquire loads)
	Origin uint32 // the stage whose error the message carries (0: none)
	_      uint32
}

// LaneSet is the lanes a mailbox reads (rc_lane_set, pinned mapped
// memory, written by the host, read by the mailbox's block when it claims
// the mailbox and when it is asked to look again): Count device addresses
// of LaneHeaders. The host writes a lane's address, then Count (a
// release store), then rings the mailbox.
type LaneSet struct {
	Count uint64
	_     uint64
	Lanes [LaneSlotsMax]uint64
}
