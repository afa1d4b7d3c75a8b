package ringrt

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/internal/devcore"
	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
	"github.com/ringactor/ringactor/gpu/ring"
)

// One persistent grid per (device, program, block size) serves every
// device ring kernel of that program as a mailbox (kernels/grid_loop.cuh,
// gpu/ring/mailbox.go): the grid is launched once (StartRingGrid) and a
// kernel is a table entry written while it runs (OpenMailbox), never a
// launch. Its control block and rings come from the pinned arena as
// before; its State is a slot of the grid's slab of device memory.

// Grid limits.
const (
	// DefaultMailboxes is the most device ring kernels one program grid
	// holds unless WithMailboxes sets another bound (the device's memory
	// may make it smaller: see StartRingGrid). The table starts at
	// initialMailboxes entries and doubles, in a device epoch, when full.
	DefaultMailboxes = 1 << 20
	// initialMailboxes is a grid's first table size (at most its bound).
	initialMailboxes = 1024
	// MailboxPinnedMax is what a mailbox pins at most unless
	// WithMailboxPinnedMax sets another bound: its control block and its
	// two rings (OpenMailbox refuses one that would pin more). It holds
	// two slots a ring of messages up to about 32 KiB.
	MailboxPinnedMax = 128 << 10
	// MailboxPinnedTotal is what the mailboxes of one device pin at most
	// together unless WithMailboxPinnedTotal sets another bound.
	MailboxPinnedTotal = 1 << 30
	// mailboxCapacity is a mailbox's default ring capacity (smaller when
	// its slots are large, so that MailboxPinnedMax holds).
	mailboxCapacity = 16
	// residentGridsH100 is the resident grids per device of compute
	// capability 7.0 and 7.5–9.0 (CUDA programming guide; no attribute),
	// used when the device's profile has none; gridReserve of them are
	// left to one-shot kernels and epochs.
	residentGridsH100 = 128
	gridReserve       = 8
)

// ErrMailboxTooLarge is wrapped by OpenMailbox's *gpu.DeviceError (kind
// gpu.DeviceCapacity) when a mailbox's rings, at 2 slots each (or the
// capacity asked for), would pin more than the backend's bound
// (WithMailboxPinnedMax): the program's messages are too large for it.
var ErrMailboxTooLarge = errors.New("cuda: a mailbox of this program would pin more than the bound")

// ErrMailboxPinnedFull is wrapped by OpenMailbox's *gpu.DeviceError (kind
// gpu.DeviceCapacity) when the device's mailboxes together would pin more
// than the device's bound (WithMailboxPinnedTotal).
var ErrMailboxPinnedFull = errors.New("cuda: the device's mailboxes pin their whole bound")

type gridKey struct {
	hash    [32]byte
	threads int
}

// ringGrid is the host side of one program's persistent grid.
type ringGrid struct {
	d       *devcore.Device
	rt      *Runtime
	key     gridKey
	name    string
	k       *Kernel // the grid's own launch: parked and relaunched by device epochs like a ring
	stopped atomic.Bool
	blocks  int
	threads int
	smem    uint32
	src     *ProgramSource
	limit   int // the most mailboxes the table may grow to

	// tab is the mailbox table: replaced (inside Do, in a device epoch)
	// under tabMu's write lock; ring and freed read it under the read lock
	// from any goroutine, everything else inside Do.
	tabMu sync.RWMutex
	tab   *gridTable

	mu    sync.Mutex
	free  []uint32 // indices ready for reuse
	drain []uint32 // indices a doorbell slot may still name
	next  uint32   // indices from here on were never used
	gen   uint64
	grows int // table growths
	boxes map[uint32]*Kernel
}

// gridWordsBytes is the device memory of a grid's words (rc_grid_words,
// claims, seen and dead generations, the ready queue).
func gridWordsBytes(capacity int) uintptr {
	claims := uintptr(align16(capacity * 4))
	ready := uintptr(readyCapacity(capacity)) * unsafe.Sizeof(ring.ReadySlot{})
	return unsafe.Sizeof(ring.GridWords{}) + claims + 16*uintptr(capacity) + ready
}

// bellCapacity is the doorbell's size: a power of two of at least twice
// the table (a mailbox has at most one slot outstanding).
func bellCapacity(capacity int) int {
	n := 2
	for n < 2*capacity {
		n *= 2
	}
	return n
}

// occupancyAPI is the occupancy calculator of the driver.
type occupancyAPI interface {
	OccupancyMaxActiveBlocksPerMultiprocessor(f driverapi.Function, block int, smem uint32) (int, error)
}

// StartGrid launches p's persistent grid of mailboxes with blocks of
// threads threads (0: the default, as for LaunchRingProgram), unless it
// runs: once per (program, block size), when the program is loaded, never
// per kernel. The table holds Options.Mailboxes entries (fewer when their
// State slots would take more than an eighth of the device's memory).
// The grid has one block per SM, fewer when the device's budget has less
// room; a grid not one block of which fits the budget is a
// *gpu.DeviceError matching gpu.ErrDeviceCapacity (wrapping the
// *BudgetError). The caller checks first that the device may run
// persistent kernels (gpu/cuda's CheckPersistent).
func (rt *Runtime) StartGrid(p *Program, threads int) error {
	_, err := rt.grid(p, threads)
	return err
}

// grid returns p's grid for threads, launching it first if need be.
func (rt *Runtime) grid(p *Program, threads int) (*ringGrid, error) {
	if p == nil {
		return nil, fmt.Errorf("cuda: no ring program: %w", gpu.ErrArgument)
	}
	d := rt.d
	if p.rt != rt {
		return nil, fmt.Errorf("cuda: ring program %s was loaded on another device: %w", p.src.Name, gpu.ErrArgument)
	}
	if threads == 0 {
		threads = 32
	}
	if threads < 1 || threads > 1024 || threads > d.Attrs.MaxThreadsPerBlock {
		return nil, fmt.Errorf("cuda: %d ring kernel threads: want 1 to %d: %w", threads, min(1024, d.Attrs.MaxThreadsPerBlock), gpu.ErrArgument)
	}
	key := gridKey{p.src.Hash, threads}
	var g *ringGrid
	err := d.Do(func() error {
		if g = rt.grids[key]; g != nil {
			return nil
		}
		// The budget counts resident grids with every other persistent
		// launch; without one (or when a test lowers it) the program grids
		// are counted here.
		limit := rt.opt.GridLimit
		if limit <= 0 && d.Budget == nil {
			limit = residentGridsH100 - gridReserve
			if r := rt.opt.MaxResidentGrids; r > 0 {
				limit = max(1, r-gridReserve) // the device profile's resident grids (profile.go)
			}
		}
		if n := len(rt.grids); limit > 0 && n >= limit {
			return &gpu.DeviceError{Kind: gpu.DeviceCapacity, Backend: rt.opt.Name, Device: d.Ordinal,
				Reason: fmt.Sprintf("%d ring program grids run: the device may run %d", n, limit)}
		}
		var err error
		g, err = rt.startGrid(p, threads, rt.opt.Mailboxes, rt.opt.MailboxInit)
		return err
	})
	if err != nil {
		return nil, devcore.DeviceErr(d.Ordinal, err)
	}
	return g, nil
}

// startGrid allocates and launches a grid (inside Do). limit bounds its
// table (DefaultMailboxes when 0, fewer when the State slots would take
// more than an eighth of the device's memory); it starts at first entries
// (initialMailboxes when 0) and grows by doubling (ringGrid.grow).
func (rt *Runtime) startGrid(p *Program, threads, limit, first int) (*ringGrid, error) {
	d := rt.d
	fn, err := rt.gridFunction(p)
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = DefaultMailboxes
	}
	stride := uintptr(align16(p.src.StateBytes))
	if _, total, err := d.API.MemGetInfo(); err == nil && total > 0 {
		limit = max(64, min(limit, int(total/8/uint64(stride))))
	}
	if first <= 0 {
		first = initialMailboxes
	}
	mem, base, err := d.Pinned(align64(unsafe.Sizeof(ring.ControlBlock{})))
	if err != nil {
		return nil, err
	}
	clear(unsafe.Slice((*byte)(mem), unsafe.Sizeof(ring.ControlBlock{})))
	g := &ringGrid{d: d, rt: rt, key: gridKey{p.src.Hash, threads}, name: p.src.Name, src: p.src, threads: threads,
		limit: limit, boxes: map[uint32]*Kernel{}}
	g.smem = p.src.SharedBytes + 8*uint32(threads)
	k := &Kernel{d: d, mem: mem, serves: g}
	g.k = k
	k.cb = (*ring.ControlBlock)(mem)
	k.cb.LatencyMin.Store(^uint64(0))
	fail := func(err error) (*ringGrid, error) {
		k.claim.Release()
		if g.tab != nil {
			err = errors.Join(err, g.tab.free(d))
		}
		if !k.stream.IsDefault() {
			err = errors.Join(err, d.API.StreamDestroy(k.stream))
		}
		return nil, errors.Join(err, d.Unpinned(mem))
	}
	name := "the grid of ring program " + p.src.Name
	shape, err := rt.gridShape(name, fn, threads, g.smem)
	if err != nil {
		return fail(err)
	}
	if k.claim, err = rt.claim(name, shape); err != nil {
		return fail(err)
	}
	g.blocks = shape.Blocks
	if g.tab, err = newGridTable(d, min(first, limit), stride, nil); err != nil {
		return fail(err)
	}
	if k.stream, err = persistentStream(d); err != nil {
		return fail(err)
	}
	k.park.fn, k.park.threads, k.park.blocks, k.park.smem = fn, uint32(threads), uint32(g.blocks), g.smem
	k.park.args = append([]uint64{argPtr(base)}, g.tab.args()...)
	k.park.resumed = g.ringAll
	if err := d.API.LaunchKernel(fn, driverapi.Dim3{X: k.park.blocks}, driverapi.Dim3{X: k.park.threads}, k.park.smem, k.stream, k.park.args...); err != nil {
		return fail(err)
	}
	k.addLive()
	if rt.grids == nil {
		rt.grids = map[gridKey]*ringGrid{}
	}
	rt.grids[g.key] = g
	return g, nil
}

// gridFunction resolves p's grid entry (inside Do).
func (rt *Runtime) gridFunction(p *Program) (driverapi.Function, error) {
	d := rt.d
	if !p.gridFn.IsNil() {
		return p.gridFn, nil
	}
	var f driverapi.Function
	var err error
	if p.sim {
		f, err = rt.opt.Host.HostGrid(p.fn)
	} else if m, ok := d.Modules[p.src.Hash]; ok {
		if f, ok = m.Fns[p.src.GridEntry]; !ok {
			if f, err = d.API.ModuleGetFunction(m.Mod, p.src.GridEntry); err == nil {
				m.Fns[p.src.GridEntry] = f
			}
		}
	} else {
		err = fmt.Errorf("cuda: ring program %s is not loaded: %w", p.src.Name, gpu.ErrArgument)
	}
	if err != nil {
		return driverapi.Function{}, err
	}
	persistentCarveout(d, f)
	p.gridFn = f
	return f, nil
}

// ring tells the grid that mailbox i has work: unless a doorbell slot
// names it already, it takes the doorbell's next position, waits for the
// slot to be free (at most one slot per mailbox is outstanding and the
// doorbell holds twice the table, so it is, but for the instant between a
// block taking the slot and handing it back) and publishes the index.
// Safe from any goroutine; no driver call.
func (g *ringGrid) ring(i uint32) {
	if g.stopped.Load() {
		return
	}
	g.tabMu.RLock()
	defer g.tabMu.RUnlock()
	t := g.tab
	if t == nil || int(i) >= len(t.entries) || !atomic.CompareAndSwapUint64(&t.entries[i].Queued, 0, 1) {
		return
	}
	pos := t.tail.Add(1) - 1
	s := &t.bells[pos&uint64(len(t.bells)-1)]
	for n := 0; atomic.LoadUint64(&s.Seq) != pos; n++ {
		if g.stopped.Load() {
			return
		}
		if n > 64 {
			runtime.Gosched()
		}
	}
	atomic.StoreUint32(&s.Mailbox, i)
	atomic.StoreUint64(&s.Seq, pos+1)
}

// outWaited reports whether mailbox i's block let it go for want of room
// in its output ring, and clears the flag (any goroutine).
func (g *ringGrid) outWaited(i uint32) bool {
	g.tabMu.RLock()
	defer g.tabMu.RUnlock()
	if g.tab == nil || int(i) >= len(g.tab.entries) {
		return false
	}
	e := &g.tab.entries[i]
	if atomic.LoadUint64(&e.OutWait) == 0 {
		return false
	}
	atomic.StoreUint64(&e.OutWait, 0)
	return true
}

// ringAll rings every mailbox after a relaunch (the parked grid's blocks
// let go of the mailboxes in their hands, and of requests to look at them
// again; those its ready queue held stay there, and their rings mark them
// to be looked at again), and notes each one's backlog: the next epoch
// waits for the grid to handle it (settled), so epochs back to back never
// starve a mailbox (inside Do).
func (g *ringGrid) ringAll() {
	g.mu.Lock()
	idx := make([]uint32, 0, len(g.boxes))
	for i, k := range g.boxes {
		idx = append(idx, i)
		k.park.backlog = k.in.Header().Tail.Load()
	}
	g.mu.Unlock()
	for _, i := range idx {
		g.ring(i)
	}
}

// settled reports whether every mailbox of the grid has handled what was
// queued before the grid's last relaunch, or cannot go on now (see
// parkedRing.Settled; inside Do). A mailbox fed without pause cannot hold
// it off, nor hold the others off: the backlog is a fixed count, and a
// block serves a mailbox for a quantum before it hands it over to the
// ready queue while others wait, so every mailbox with work is served in
// turn (grid_loop.cuh).
func (g *ringGrid) settled() bool {
	if g.stopped.Load() {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, k := range g.boxes {
		if !(*parkedRing)(k).Settled() {
			return false
		}
	}
	return true
}

// errTableFull is add's answer when every entry of the table is taken:
// the caller grows the table (up to its bound) and adds again.
var errTableFull = errors.New("cuda: the mailbox table is full")

// add writes k's mailbox into the table (inside Do): a fresh generation,
// so the grid zeroes its State slot when it first serves it. A full table
// is errTableFull.
func (g *ringGrid) add(k *Kernel, cb, in, out driverapi.DevicePtr) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	t := g.tab
	keep := g.drain[:0]
	for _, i := range g.drain {
		if atomic.LoadUint64(&t.entries[i].Queued) == 0 {
			g.free = append(g.free, i)
		} else {
			keep = append(keep, i)
		}
	}
	g.drain = keep
	var i uint32
	switch {
	case len(g.free) > 0:
		i, g.free = g.free[len(g.free)-1], g.free[:len(g.free)-1]
	case int(g.next) < len(t.entries):
		i = g.next
		g.next++
	default:
		return errTableFull
	}
	g.gen++
	e := &t.entries[i]
	atomic.StoreUint64(&e.Gen, 0)
	atomic.StoreUint64(&e.Control, uint64(cb))
	atomic.StoreUint64(&e.In, uint64(in))
	atomic.StoreUint64(&e.Out, uint64(out))
	atomic.StoreUint64(&e.OutWait, 0)
	atomic.StoreUint64(&e.LaneOut, 0)
	atomic.StoreUint64(&e.LanesIn, 0)
	atomic.StoreUint64(&e.Gen, g.gen)
	k.grid, k.box = g, i
	g.boxes[i] = k
	return nil
}

// remove takes k's mailbox out of the table (its memory is released
// after): the grid acknowledged it, or is gone.
func (g *ringGrid) remove(k *Kernel) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.boxes[k.box] != k {
		return
	}
	delete(g.boxes, k.box)
	e := &g.tab.entries[k.box]
	atomic.StoreUint64(&e.Gen, 0)
	atomic.StoreUint64(&e.Control, 0)
	atomic.StoreUint64(&e.In, 0)
	atomic.StoreUint64(&e.Out, 0)
	atomic.StoreUint64(&e.LaneOut, 0)
	atomic.StoreUint64(&e.LanesIn, 0)
	g.drain = append(g.drain, k.box)
}

// Mailboxes says how many mailboxes the grid holds and how many it can.
func (g *ringGrid) mailboxes() (n, capacity int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.boxes), len(g.tab.entries)
}

// pinnedBytes is what the grid's mailboxes pin: each one's control block
// and rings, its table entry and its two doorbell slots.
func (g *ringGrid) pinnedBytes() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	per := int(unsafe.Sizeof(ring.MailboxEntry{}) + 2*unsafe.Sizeof(ring.DoorbellSlot{}))
	n := 0
	for _, k := range g.boxes {
		n += k.PinnedBytes() + per
	}
	return n
}

// close releases what the grid holds once its launch has stopped for good
// (inside Do, from its Kernel's release): each mailbox keeps its
// unread replies and gives its memory back (its owner's Wait then returns
// at once), then the device memory goes back to the pool.
func (g *ringGrid) close() error {
	g.stopped.Store(true)
	g.mu.Lock()
	boxes := make([]*Kernel, 0, len(g.boxes))
	for _, k := range g.boxes {
		boxes = append(boxes, k)
	}
	g.mu.Unlock()
	var errs []error
	for _, k := range boxes {
		k.keepReplies()
		errs = append(errs, k.release())
	}
	if g.rt.grids[g.key] == g {
		delete(g.rt.grids, g.key)
	}
	g.tabMu.Lock()
	t := g.tab
	g.tab = nil
	g.tabMu.Unlock()
	if t != nil {
		errs = append(errs, t.free(g.d))
	}
	return errors.Join(errs...)
}

// mailboxGeometry returns a mailbox's ring capacity and slot size: the
// smallest slot that holds p's messages, and the largest power of two up
// to cfg's capacity (mailboxCapacity when 0) whose rings and control block
// fit bound (at least 2: OpenMailbox refuses a mailbox still over it).
func mailboxGeometry(src *ProgramSource, cfg Config, bound int) (capacity, slot int) {
	slot = cfg.SlotSize
	if slot == 0 {
		slot = align16(int(unsafe.Sizeof(ring.SlotHeader{})) + max(src.ReqBytes, src.RespBytes))
	}
	capacity = cfg.Capacity
	if capacity == 0 {
		capacity = mailboxCapacity
	}
	for capacity > 2 && ring.ValidCapacity(capacity) {
		if _, _, size := ringLayout(capacity, slot); size <= uintptr(bound) {
			break
		}
		capacity /= 2
	}
	return capacity, slot
}

// Open makes a device ring kernel of p as a mailbox of the
// program's persistent grid (started first if it is not running; see
// StartRingGrid), with its gate closed: its control block and rings come
// from the pinned arena, its State is a slot of the grid's device memory,
// zeroed by the grid before its first message. No launch, no driver call
// beside the running grids (but an arena growth, in a device epoch). The
// returned Kernel is driven as one from LaunchRingProgram.
//
// cfg.Capacity (default 16 slots) is the most slots a ring gets: fewer
// when its messages are so large that the mailbox would pin more than
// MailboxPinnedMax. cfg.SlotSize defaults to the smallest slot that holds the program's messages, cfg.Threads to the
// grid's default block size. A full mailbox table, or no grid left to
// start, is a *gpu.DeviceError matching gpu.ErrDeviceCapacity, at once.
func (rt *Runtime) Open(p *Program, cfg Config) (*Kernel, error) {
	g, err := rt.grid(p, cfg.Threads)
	if err != nil {
		return nil, err
	}
	d := g.d
	bound := rt.opt.MailboxPinnedMax
	if bound <= 0 {
		bound = MailboxPinnedMax
	}
	capacity, slot := mailboxGeometry(p.src, cfg, bound)
	if _, _, size := ringLayout(capacity, slot); ring.ValidCapacity(capacity) && size > uintptr(bound) {
		return nil, devcore.DeviceErr(g.d.Ordinal, &gpu.DeviceError{Kind: gpu.DeviceCapacity, Backend: rt.opt.Name, Device: g.d.Ordinal,
			Reason: fmt.Sprintf("a mailbox of ring program %s pins %d bytes (%d slots of %d bytes per ring): over the bound of %d (WithMailboxPinnedMax)",
				p.src.Name, size, capacity, slot, bound), Err: ErrMailboxTooLarge})
	}
	switch {
	case !ring.ValidCapacity(capacity):
		return nil, &ring.CapacityError{Capacity: capacity}
	case !ring.ValidSlotSize(slot) || slot < int(unsafe.Sizeof(ring.SlotHeader{}))+max(p.src.ReqBytes, p.src.RespBytes):
		return nil, fmt.Errorf("cuda: slot size %d: want a multiple of 16 that holds %s's messages: %w", slot, p.src.Name, gpu.ErrArgument)
	}
	inOff, outOff, size := ringLayout(capacity, slot)
	k := &Kernel{d: d}
	err = d.Do(func() error {
		if g.stopped.Load() {
			return devcore.Unavailable("the ring program's grid stopped")
		}
		total := rt.opt.MailboxPinnedTotal
		if total <= 0 {
			total = MailboxPinnedTotal
		}
		if rt.pinned+int(size) > total {
			return &gpu.DeviceError{Kind: gpu.DeviceCapacity, Backend: rt.opt.Name, Device: d.Ordinal,
				Reason: fmt.Sprintf("a mailbox of ring program %s pins %d bytes: the device's mailboxes pin %d of their bound of %d (WithMailboxPinnedTotal)",
					p.src.Name, size, rt.pinned, total), Err: ErrMailboxPinnedFull}
		}
		mem, base, err := d.Pinned(size)
		if err != nil {
			return err
		}
		k.mem = mem
		clear(unsafe.Slice((*byte)(mem), size))
		k.cb = (*ring.ControlBlock)(mem)
		k.cb.LatencyMin.Store(^uint64(0))
		k.cb.Close()
		k.in = ring.NewSlotRing(unsafe.Add(mem, inOff), capacity, slot)
		k.out = ring.NewSlotRing(unsafe.Add(mem, outOff), capacity, slot)
		err = g.add(k, base, base+driverapi.DevicePtr(inOff), base+driverapi.DevicePtr(outOff))
		if errors.Is(err, errTableFull) {
			// A full table doubles (in a device epoch) up to its bound.
			if err = g.grow(); err == nil {
				err = g.add(k, base, base+driverapi.DevicePtr(inOff), base+driverapi.DevicePtr(outOff))
			}
		}
		if err != nil {
			k.cb = nil
			k.mem = nil
			return errors.Join(err, d.Unpinned(mem))
		}
		k.pinned = int(size)
		rt.pinned += k.pinned
		return nil
	})
	if err != nil {
		return nil, devcore.DeviceErr(d.Ordinal, err)
	}
	return k, nil
}

// MailboxStats says how the mailboxes of a device's ring program grids
// are used.
type MailboxStats struct {
	Grids     int // persistent grids running (one per program and block size)
	Mailboxes int // device ring kernels in their tables
	Capacity  int // mailboxes the tables hold, summed
	// PinnedBytes is the pinned memory of the mailboxes: their control
	// blocks and rings, and their table entries and doorbell slots.
	PinnedBytes int
	// PinnedLimit is what the mailboxes' control blocks and rings may pin
	// together (WithMailboxPinnedTotal).
	PinnedLimit int
}

// MailboxStats returns how many grids run and how full their tables are.
func (rt *Runtime) MailboxStats() MailboxStats {
	s := MailboxStats{PinnedLimit: rt.opt.MailboxPinnedTotal}
	if s.PinnedLimit <= 0 {
		s.PinnedLimit = MailboxPinnedTotal
	}
	_ = rt.d.Do(func() error {
		for _, g := range rt.grids {
			n, c := g.mailboxes()
			s.Grids++
			s.Mailboxes += n
			s.Capacity += c
			s.PinnedBytes += g.pinnedBytes()
		}
		return nil
	})
	return s
}

// PinnedBytes is the pinned memory the kernel's control block and rings
// take (for a mailbox: all it pins but its table entry and doorbell
// slots, 96 bytes).
func (k *Kernel) PinnedBytes() int {
	if k.in == nil {
		return 0
	}
	_, _, size := ringLayout(k.in.Cap(), k.in.PayloadMax()+int(unsafe.Sizeof(ring.SlotHeader{})))
	return int(size)
}
