package ring

// The layouts of a device ring program's persistent grid: one grid per
// loaded program serves many ring kernels, each a mailbox (its control
// block and its two slot rings, as before) in a table. The host adds and
// removes mailboxes by writing table entries while the grid runs, and
// rings a doorbell (a bounded queue of mailbox indices) when a mailbox
// gets work, so the grid's blocks visit only mailboxes that have some.
//
// Pinned mapped memory (host writes, device reads, except where noted):
// a GridHeader, then Capacity MailboxEntry values, then BellCapacity
// DoorbellSlot values. Device memory (device atomics only): a GridWords,
// then Capacity uint32 claim words (rounded up to 16 bytes), then Capacity
// uint64 seen generations, then Capacity uint64 dead generations, then
// ReadyCapacity ReadySlot values (the ready queue). No word is updated
// with a read-modify-write by both sides: the doorbell is a bounded queue
// with per-slot sequence numbers (host producers, device consumers that
// claim slots with a device-memory compare-and-swap), and every flag one
// side sets and the other clears is a plain store on each side. The ready
// queue is the device's own: blocks put a mailbox there when its quantum
// of service ends while it still has work, and take the next one from it.

// GridHeader starts a grid's mailbox table (rc_grid_header), written
// before the grid's first launch and read-only afterwards.
type GridHeader struct {
	Capacity      uint64 // mailbox entries in the table
	BellCapacity  uint64 // doorbell slots, a power of two of at least 2 × Capacity
	StateStride   uint64 // bytes between two State slots of the device slab
	ReadyCapacity uint64 // ready-queue slots, a power of two of at least Capacity (a mailbox is in it at most once: it never fills)
	_             [CacheLine - 32]byte
}

// MailboxEntry is one mailbox of a grid's table (rc_mailbox_entry).
// The host writes Gen 0, then the addresses, then the new Gen (a release
// store); the device reads Gen, the addresses, and Gen again, and serves
// the mailbox only when both reads agree and are not 0.
type MailboxEntry struct {
	Gen     uint64 // 0: empty; else the mailbox's generation (never reused: the grid zeroes the State slot when it sees a new one)
	Control uint64 // device address of the mailbox's ControlBlock
	In      uint64 // device address of its input ring (RingHeader)
	Out     uint64 // device address of its output ring
	Queued  uint64 // 1 while a doorbell slot names this mailbox: the host stores 1 when it rings, the device 0 when it takes the slot
	OutWait uint64 // 1 while the device waits for room in the output ring: the device stores 1, the host 0 when it rings after freeing a slot
	LaneOut uint64 // 0, or the device address of the lane (LaneHeader) the mailbox's replies go to instead of its output ring
	LanesIn uint64 // 0, or the device address of the mailbox's LaneSet (pinned): the lanes it reads besides its input ring
}

// DoorbellSlot is one slot of a grid's doorbell queue (rc_doorbell_slot).
// Slot i of lap L is free for the host when Seq == i + L·BellCapacity,
// holds a mailbox index for the device when Seq == that + 1.
type DoorbellSlot struct {
	Seq     uint64 // the slot's sequence number (host and device plain stores)
	Mailbox uint32 // the index of the mailbox that has work
	_       uint32
}

// GridWords starts a grid's device memory (rc_grid_words): words only the
// device's blocks update, with device-scope atomics.
type GridWords struct {
	BellHead  uint64 // the next doorbell position a block takes
	Exited    uint64 // blocks that left the loop, summed over the grid's launches
	Watcher   uint64 // 0, or 1 + the index of the block that watches the doorbell for the idle ones
	ReadyHead uint64 // the next ready-queue position a block takes (a compare-and-swap once the slot's Seq says it is filled)
	ReadyTail uint64 // the next ready-queue position a block fills (an atomic add claims it; the slot's Seq publishes it)
	Capacity  uint64 // the table's entries (written by the host): a lane's producer finds another grid's claims and ready queue from its words alone
	ReadyCap  uint64 // the ready queue's slots (written by the host)
	_         [CacheLine - 56]byte
}

// ReadySlot is one slot of a grid's ready queue (rc_ready_slot, device
// memory), a bounded queue of mailboxes whose block ended its quantum
// while they still had work; blocks are its producers and consumers.
// Slot i of lap L is free for a producer when Seq == i + L·ReadyCapacity,
// holds a mailbox index for a consumer when Seq == that + 1: a producer
// writes Mailbox before it publishes Seq (a release store), so a consumer
// never reads a half-written slot.
type ReadySlot struct {
	Seq     uint64 // the slot's sequence number (device release stores, acquire loads)
	Mailbox uint32 // the index of the mailbox handed over, which the queue owns until a block takes it
	_       uint32
}

// Claim word values of a mailbox (device memory, device atomics only).
const (
	// ClaimFree: no block serves the mailbox.
	ClaimFree uint32 = 0
	// ClaimOwned: one block serves it, or the ready queue holds it for
	// the next block (the block that put it there handed its ownership
	// over without touching the word).
	ClaimOwned uint32 = 1
	// ClaimAgain: one block serves it (or the ready queue holds it) and a
	// doorbell for it was taken meanwhile: the owner looks at it once more
	// before letting it go.
	ClaimAgain uint32 = 2
)
