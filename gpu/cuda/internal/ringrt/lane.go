package ringrt

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/internal/devcore"
	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
	"github.com/ringactor/ringactor/gpu/ring"
)

// Device lanes (gpu/ring/lane.go, kernels/grid_loop.cuh): the replies of
// one mailbox go into a single-producer ring in device memory that another
// mailbox of the same device reads, and the producer wakes the consumer
// on the device. The host writes the lane once (a copy on the backend's
// stream), then only the wake targets when a grid's table moves (in the
// growth's device epoch); messages never cross the host link between the
// two kernels.

// ErrLaneCycle is wrapped by Link's error when the lane would close a
// cycle of lanes (a message would go round for ever).
var ErrLaneCycle = errors.New("cuda: a device lane would close a cycle")

// laneCapacity is a lane's default capacity in slots.
const laneCapacity = 16

// LaneConfig shapes a device lane.
type LaneConfig struct {
	Capacity int    // slots, a power of two (default 16)
	Stage    uint32 // the upstream's stage number (from 1), which its errors carry (ring.FlagOriginShift)
}

// Lane is the host side of one device lane: up's replies go to down.
type Lane struct {
	d        *devcore.Device
	up, down *Kernel
	mem      driverapi.DevicePtr // LaneHeader, then the slots (device memory)
	capacity int
	slot     int
	stage    uint32
	upGone   bool // the upstream's mailbox is released
	downGone bool // the downstream's
}

// Capacity is the lane's slots.
func (l *Lane) Capacity() int { return l.capacity }

// Link routes up's replies into a new lane that down reads, besides its
// input ring: both must be mailboxes of program grids of this runtime's
// device, up's reply size down's request size, up not linked yet and
// given no message yet (its replies so far would bypass the lane), down
// reading fewer than ring.LaneSlotsMax lanes. A lane that would close a
// cycle is refused (ErrLaneCycle). Misuse is a gpu.ErrArgument. The lane
// lives until both its ends are released; once down has finished (its
// terminate), up's replies go to up's own output ring again.
func (rt *Runtime) Link(up, down *Kernel, cfg LaneConfig) (*Lane, error) {
	if up == nil || down == nil || up.grid == nil || down.grid == nil || up.d != rt.d || down.d != rt.d {
		return nil, fmt.Errorf("cuda: a device lane joins two mailboxes of one device: %w", gpu.ErrArgument)
	}
	capacity := cfg.Capacity
	if capacity == 0 {
		capacity = laneCapacity
	}
	if !ring.ValidCapacity(capacity) {
		return nil, &ring.CapacityError{Capacity: capacity}
	}
	if a, b := up.grid.src.RespBytes, down.grid.src.ReqBytes; a != b {
		return nil, fmt.Errorf("cuda: a device lane from %s (%d-byte replies) to %s (%d-byte requests): %w",
			up.grid.name, a, down.grid.name, b, gpu.ErrArgument)
	}
	slot := align16(int(unsafe.Sizeof(ring.LaneSlot{})+unsafe.Sizeof(ring.SlotHeader{})) + up.grid.src.RespBytes)
	l := &Lane{d: rt.d, up: up, down: down, capacity: capacity, slot: slot, stage: cfg.Stage}
	err := rt.d.Do(func() error {
		switch {
		case up == down:
			return fmt.Errorf("%w: a mailbox to itself: %w", ErrLaneCycle, gpu.ErrArgument)
		case up.mem == nil || down.mem == nil:
			return fmt.Errorf("cuda: a device lane to or from a released mailbox: %w", gpu.ErrArgument)
		case up.laneOut != nil:
			return fmt.Errorf("cuda: the mailbox has a device lane already: %w", gpu.ErrArgument)
		case up.in.Header().Tail.Load() != 0:
			return fmt.Errorf("cuda: a device lane from a mailbox that took messages: %w", gpu.ErrArgument)
		case len(down.lanesIn) >= ring.LaneSlotsMax:
			return fmt.Errorf("cuda: a mailbox reads at most %d device lanes: %w", ring.LaneSlotsMax, gpu.ErrArgument)
		}
		for k := down; k != nil; {
			if k == up {
				return fmt.Errorf("%w: %w", ErrLaneCycle, gpu.ErrArgument)
			}
			if k.laneOut == nil {
				break
			}
			k = k.laneOut.down
		}
		return l.open()
	})
	if err != nil {
		return nil, devcore.DeviceErr(rt.d.Ordinal, err)
	}
	down.bell() // its block reads the new lane set when it next claims the mailbox
	return l, nil
}

// open allocates and writes the lane and enters it in both mailboxes
// (inside Do).
func (l *Lane) open() (err error) {
	d := l.d
	size := unsafe.Sizeof(ring.LaneHeader{}) + uintptr(l.capacity*l.slot)
	tmp, _, err := d.Pinned(size)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, d.Unpinned(tmp)) }()
	clear(unsafe.Slice((*byte)(tmp), size))
	h := (*ring.LaneHeader)(tmp)
	h.Capacity, h.SlotSize, h.State, h.Stage = uint64(l.capacity), uint64(l.slot), ring.LaneOpen, uint64(l.stage)
	l.wake(h)
	for i := range l.capacity {
		(*ring.LaneSlot)(unsafe.Add(tmp, unsafe.Sizeof(ring.LaneHeader{})+uintptr(i*l.slot))).Seq = uint64(i)
	}
	if l.mem, err = d.DevAlloc(uint64(size)); err != nil {
		return err
	}
	if err = errors.Join(d.API.MemcpyHtoDAsync(l.mem, tmp, uint64(size), d.Stream), d.API.StreamSynchronize(d.Stream)); err != nil {
		return errors.Join(err, d.DevFree(l.mem))
	}
	down := l.down
	if down.laneSet == nil {
		mem, base, err := d.Pinned(unsafe.Sizeof(ring.LaneSet{}))
		if err != nil {
			return errors.Join(err, d.DevFree(l.mem))
		}
		clear(unsafe.Slice((*byte)(mem), unsafe.Sizeof(ring.LaneSet{})))
		down.laneSet, down.laneSetBase = (*ring.LaneSet)(mem), base
	}
	set := down.laneSet
	n := len(down.lanesIn)
	atomic.StoreUint64(&set.Lanes[n], uint64(l.mem))
	atomic.StoreUint64(&set.Count, uint64(n+1))
	down.lanesIn = append(down.lanesIn, l)
	l.up.laneOut = l
	l.up.grid.setLanes(l.up.box, uint64(l.mem), 0, true)
	down.grid.setLanes(down.box, 0, uint64(down.laneSetBase), false)
	return nil
}

// wake writes the lane's wake targets (the grids' words and the mailbox
// indices) into h.
func (l *Lane) wake(h *ring.LaneHeader) {
	h.UpWords, h.UpBox = uint64(l.up.grid.tab.words), uint64(l.up.box)
	h.DnWords, h.DnBox = uint64(l.down.grid.tab.words), uint64(l.down.box)
}

// rewake rewrites the wake targets on the device after a grid's table
// moved (inside Do, in the growth's device epoch: no block runs).
func (l *Lane) rewake() error {
	d := l.d
	if l.mem == 0 {
		return nil
	}
	tmp, _, err := d.Pinned(unsafe.Sizeof(ring.LaneHeader{}))
	if err != nil {
		return err
	}
	h := (*ring.LaneHeader)(tmp)
	l.wake(h)
	off := unsafe.Offsetof(h.UpWords)
	n := unsafe.Offsetof(h.DnBox) + 8 - off
	err = errors.Join(d.API.MemcpyHtoDAsync(l.mem+driverapi.DevicePtr(off), unsafe.Add(tmp, off), uint64(n), d.Stream),
		d.API.StreamSynchronize(d.Stream))
	return errors.Join(err, d.Unpinned(tmp))
}

// released notes that k, one of the lane's ends, is released; the lane's
// memory goes back once both are (inside Do).
func (l *Lane) released(k *Kernel) error {
	if k == l.up {
		l.upGone = true
	}
	if k == l.down {
		l.downGone = true
	}
	if !l.upGone || !l.downGone || l.mem == 0 {
		return nil
	}
	err := l.d.DevFree(l.mem)
	l.mem = 0
	return err
}

// setLanes writes mailbox i's lane words (out when isOut, else in).
func (g *ringGrid) setLanes(i uint32, out, in uint64, isOut bool) {
	g.tabMu.RLock()
	defer g.tabMu.RUnlock()
	e := &g.tab.entries[i]
	if isOut {
		atomic.StoreUint64(&e.LaneOut, out)
	} else {
		atomic.StoreUint64(&e.LanesIn, in)
	}
}

// releaseLanes lets k's lanes know it is released, and gives its lane set
// back (inside Do, from release).
func (k *Kernel) releaseLanes() error {
	var errs []error
	if k.laneOut != nil {
		errs = append(errs, k.laneOut.released(k))
	}
	for _, l := range k.lanesIn {
		errs = append(errs, l.released(k))
	}
	if k.laneSet != nil {
		errs = append(errs, k.d.Unpinned(unsafe.Pointer(k.laneSet)))
		k.laneSet = nil
	}
	return errors.Join(errs...)
}

// rewakeLanes rewrites the wake targets of every lane with an end in g
// after its table moved (inside Do, in the epoch).
func (g *ringGrid) rewakeLanes() error {
	g.mu.Lock()
	var ls []*Lane
	for _, k := range g.boxes {
		if k.laneOut != nil {
			ls = append(ls, k.laneOut)
		}
		ls = append(ls, k.lanesIn...)
	}
	g.mu.Unlock()
	var errs []error
	for _, l := range ls {
		errs = append(errs, l.rewake())
	}
	return errors.Join(errs...)
}
