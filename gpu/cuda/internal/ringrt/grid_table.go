package ringrt

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/internal/devcore"
	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
	"github.com/ringactor/ringactor/gpu/ring"
)

// gridTable is a program grid's mailbox table and the memory that goes
// with its size: the table and its doorbell in pinned mapped memory, the
// grid's words (claims, seen and dead generations, the ready queue) and
// the State slab in device memory. Its addresses are the grid's launch
// arguments, so a larger table replaces it in a device epoch
// (ringGrid.grow).
type gridTable struct {
	mem     unsafe.Pointer // pinned: GridHeader, entries, doorbell, then the words' host staging
	base    driverapi.DevicePtr
	hdr     *ring.GridHeader
	entries []ring.MailboxEntry
	bells   []ring.DoorbellSlot
	tail    atomic.Uint64 // the host's next doorbell position
	words   driverapi.DevicePtr
	slab    driverapi.DevicePtr
	stride  uintptr
}

// args are the table's launch arguments after the grid's control block.
func (t *gridTable) args() []uint64 {
	return []uint64{argPtr(t.base), argPtr(t.words), argPtr(t.slab)}
}

// free gives the table's memory back (inside Do; the grid does not run on
// it any more).
func (t *gridTable) free(d *devcore.Device) error {
	var errs []error
	if t.words != 0 {
		errs = append(errs, d.DevFree(t.words))
		t.words = 0
	}
	if t.slab != 0 {
		errs = append(errs, d.DevFree(t.slab))
		t.slab = 0
	}
	if t.mem != nil {
		errs = append(errs, d.Unpinned(t.mem))
		t.mem = nil
	}
	return errors.Join(errs...)
}

// newGridTable allocates a table of capacity mailboxes (inside Do). With
// old (the grid parked in a device epoch: no block runs) it carries old's
// mailboxes over: their entries at the same indices, their seen and dead
// generations and their State slots, so no kernel notices the move. The
// new doorbell and ready queue start empty and every claim free (the
// parked blocks let the mailboxes in their hands go; those the old ready
// queue held are free in the new table): the relaunch rings every mailbox.
func newGridTable(d *devcore.Device, capacity int, stride uintptr, old *gridTable) (_ *gridTable, err error) {
	bells := bellCapacity(capacity)
	entOff := unsafe.Sizeof(ring.GridHeader{})
	bellOff := entOff + uintptr(capacity)*unsafe.Sizeof(ring.MailboxEntry{})
	zeroOff := align64(bellOff + uintptr(bells)*unsafe.Sizeof(ring.DoorbellSlot{}))
	wordsBytes := gridWordsBytes(capacity)
	size := zeroOff + wordsBytes
	mem, base, err := d.Pinned(size)
	if err != nil {
		return nil, err
	}
	clear(unsafe.Slice((*byte)(mem), size))
	t := &gridTable{mem: mem, base: base, stride: stride}
	defer func() {
		if err != nil {
			err = errors.Join(err, t.free(d))
		}
	}()
	t.hdr = (*ring.GridHeader)(mem)
	t.hdr.Capacity, t.hdr.BellCapacity, t.hdr.StateStride = uint64(capacity), uint64(bells), uint64(stride)
	t.hdr.ReadyCapacity = uint64(readyCapacity(capacity))
	t.entries = unsafe.Slice((*ring.MailboxEntry)(unsafe.Add(mem, entOff)), capacity)
	t.bells = unsafe.Slice((*ring.DoorbellSlot)(unsafe.Add(mem, bellOff)), bells)
	for i := range t.bells {
		atomic.StoreUint64(&t.bells[i].Seq, uint64(i))
	}
	staging := unsafe.Add(mem, zeroOff)
	initReady(staging, capacity)
	gw := (*ring.GridWords)(staging)
	gw.Capacity, gw.ReadyCap = uint64(capacity), uint64(readyCapacity(capacity))
	if old != nil {
		if err := carryWords(d, old, staging, capacity); err != nil {
			return nil, err
		}
		for i := range old.entries {
			o, e := &old.entries[i], &t.entries[i]
			e.Gen, e.Control, e.In, e.Out = atomic.LoadUint64(&o.Gen), atomic.LoadUint64(&o.Control),
				atomic.LoadUint64(&o.In), atomic.LoadUint64(&o.Out)
			e.OutWait = atomic.LoadUint64(&o.OutWait)
			e.LaneOut, e.LanesIn = atomic.LoadUint64(&o.LaneOut), atomic.LoadUint64(&o.LanesIn)
		}
	}
	// Device memory from the stream-ordered pool on the backend's stream,
	// the words written by a copy there (a memset is a launch barrier); the
	// stream's own synchronisation orders both before the grid's launch.
	if t.words, err = d.DevAlloc(uint64(wordsBytes)); err != nil {
		return nil, err
	}
	if t.slab, err = d.DevAlloc(uint64(capacity) * uint64(stride)); err != nil {
		return nil, err
	}
	if err := d.API.MemcpyHtoDAsync(t.words, staging, uint64(wordsBytes), d.Stream); err != nil {
		return nil, err
	}
	if old != nil {
		// The State slots, through a pinned bounce buffer (no device-to-device
		// copy in the driver subset; the grid is parked, so nothing waits).
		n := uint64(len(old.entries)) * uint64(stride)
		tmp, _, err := d.Pinned(uintptr(n))
		if err != nil {
			return nil, err
		}
		err = errors.Join(d.API.MemcpyDtoHAsync(tmp, old.slab, n, d.Stream),
			d.API.MemcpyHtoDAsync(t.slab, tmp, n, d.Stream), d.API.StreamSynchronize(d.Stream))
		if err = errors.Join(err, d.Unpinned(tmp)); err != nil {
			return nil, err
		}
	}
	if err := d.API.StreamSynchronize(d.Stream); err != nil {
		return nil, err
	}
	return t, nil
}

// readyCapacity is the ready queue's size: a power of two of at least the
// table (a mailbox is in it at most once: grid_loop.cuh).
func readyCapacity(capacity int) int {
	n := 1
	for n < capacity {
		n *= 2
	}
	return n
}

// readySlots returns the ready queue of a grid's words laid out at words
// (the host staging of a table of capacity entries).
func readySlots(words unsafe.Pointer, capacity int) []ring.ReadySlot {
	off := unsafe.Sizeof(ring.GridWords{}) + uintptr(align16(capacity*4)) + 16*uintptr(capacity)
	return unsafe.Slice((*ring.ReadySlot)(unsafe.Add(words, off)), readyCapacity(capacity))
}

// initReady writes an empty ready queue into the staging of a table's
// words: slot i free for position i (its head and tail at 0).
func initReady(staging unsafe.Pointer, capacity int) {
	slots := readySlots(staging, capacity)
	for i := range slots {
		slots[i].Seq = uint64(i)
	}
}

// carryWords writes old's device words into the host staging of a table
// of capacity entries: the blocks' exit count (the relaunch's last block
// acknowledges by it), and every mailbox's seen and dead generations; the
// doorbell head restarts at 0 with the new doorbell, the ready queue is
// empty (initReady), the watcher role and the claims are free.
func carryWords(d *devcore.Device, old *gridTable, staging unsafe.Pointer, capacity int) error {
	n := len(old.entries)
	oldBytes := gridWordsBytes(n)
	tmp, _, err := d.Pinned(oldBytes)
	if err != nil {
		return err
	}
	err = errors.Join(d.API.MemcpyDtoHAsync(tmp, old.words, uint64(oldBytes), d.Stream), d.API.StreamSynchronize(d.Stream))
	if err == nil {
		head := unsafe.Sizeof(ring.GridWords{})
		(*ring.GridWords)(staging).Exited = (*ring.GridWords)(tmp).Exited
		oldSeen := unsafe.Add(tmp, head+uintptr(align16(n*4)))
		newSeen := unsafe.Add(staging, head+uintptr(align16(capacity*4)))
		copy(unsafe.Slice((*byte)(newSeen), 8*n), unsafe.Slice((*byte)(oldSeen), 8*n))
		copy(unsafe.Slice((*byte)(unsafe.Add(newSeen, 8*capacity)), 8*n), unsafe.Slice((*byte)(unsafe.Add(oldSeen, 8*n)), 8*n))
	}
	return errors.Join(err, d.Unpinned(tmp))
}

// grow doubles the grid's table, up to its limit (inside Do): in a device
// epoch (every ring of the device parks; the grid's blocks let their
// mailboxes go and exit), a larger table takes the old one's mailboxes,
// generations and State slots (a new ready queue, empty, and every claim
// free: the parked grid's ready queue is not carried over), the grid is
// relaunched on it and rings every mailbox. Hosts ringing meanwhile wait
// for the swap (tabMu).
func (g *ringGrid) grow() error {
	d := g.d
	n := len(g.tab.entries)
	if n >= g.limit {
		return &gpu.DeviceError{Kind: gpu.DeviceCapacity, Backend: driverapi.BackendName, Device: d.Ordinal,
			Reason: fmt.Sprintf("the mailbox table of ring program %s is full (%d kernels; WithMailboxes sets the bound)", g.name, n)}
	}
	next := min(2*n, g.limit)
	return d.Epoch(context.Background(), "mailbox table growth", func() error {
		if g.stopped.Load() || g.k.cb == nil || g.k.cb.TerminatedAck.Load() == 0 {
			return devcore.Unavailable("the ring program's grid is not parked: its mailbox table cannot grow")
		}
		t, err := newGridTable(d, next, g.tab.stride, g.tab)
		if err != nil {
			return err
		}
		g.tabMu.Lock()
		old := g.tab
		g.tab = t
		g.tabMu.Unlock()
		g.k.park.args = append(g.k.park.args[:1], t.args()...)
		g.mu.Lock()
		g.free = append(g.free, g.drain...) // no doorbell of the new table names them
		g.drain = nil
		g.grows++
		g.mu.Unlock()
		return errors.Join(g.rewakeLanes(), old.free(d))
	})
}
