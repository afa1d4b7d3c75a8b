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
// then Capacity uint32 claim words, then Capacity uint64 seen generations,
// then Capacity uint64 dead generations. No word is updated with a
// read-modify-write by both sides: the doorbell is a bounded queue with
// per-slot sequence numbers (host producers, device consumers that claim
// slots with a device-memory compare-and-swap), and every flag one side
// sets and the other clears is a plain store on each side.

// GridHeader starts a grid's mailbox table (rc_grid_header), written
// before the grid's first launch and read-only afterwards.
type GridHeader struct {
	Capacity     uint64 // mailbox entries in the table
	BellCapacity uint64 // doorbell slots, a power of two of at least 2 × Capacity
	StateStride  uint64 // bytes between two State slots of the device slab
	_            [CacheLine - 24]byte
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
	_       [CacheLine - 48]byte
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
	BellHead uint64 // the next doorbell position a block takes
	Exited   uint64 // blocks that left the loop, summed over the grid's launches
	Watcher  uint64 // 0, or 1 + the index of the block that watches the doorbell for the idle ones
	_        [CacheLine - 24]byte
}

// Claim word values of a mailbox (device memory, device atomics only).
const (
	// ClaimFree: no block serves the mailbox.
	ClaimFree uint32 = 0
	// ClaimOwned: one block serves it.
	ClaimOwned uint32 = 1
	// ClaimAgain: one block serves it and another took a doorbell for it
	// meanwhile: the owner looks at it once more before letting it go.
	ClaimAgain uint32 = 2
)
