//go:build linux && cgo

package hostsim

import (
	"errors"
	"fmt"
	"sort"
	"time"
)

// The hardware limits of the hazard model. A persistent kernel occupies
// its grid slot and its blocks' SM resources until its loop exits, so the
// device's limits decide how many can exist at once; a launch past them
// does not fail on a GPU, it waits, forever, behind kernels that never
// end. And streams share a few hardware work queues: a command that must
// wait for a never-ending kernel blocks its queue, so the other streams
// mapped to that queue wait behind it (a false dependency). [Limits]
// gives the model those numbers ([Hazards.SetLimits]); the zero Limits
// enforces none.

// Limits are the hardware limits a simulated device enforces: resident
// grids per device, resident blocks, threads, shared memory and registers
// per SM, and hardware work queues. A zero field is not enforced.
type Limits struct {
	SMs                       int // multiprocessors (0: no per-SM accounting)
	ResidentGrids             int // grids resident on the device at once (128 on an H100)
	BlocksPerSM               int // resident blocks per SM (32 on an H100)
	ThreadsPerSM              int // resident threads per SM (2,048 on an H100)
	SharedMemPerSM            int // bytes of shared memory per SM (228 KiB on an H100)
	SharedMemReservedPerBlock int // bytes the driver reserves per resident block (1 KiB from CC 8.0)
	RegistersPerSM            int // 32-bit registers per SM (64 K on an H100)
	HardwareQueues            int // hardware work queues streams are mapped onto round robin (0: one per stream)
}

// Grid is a launch's shape as residency counts it.
type Grid struct {
	Blocks    int // blocks of the grid (at least 1)
	Threads   int // threads per block (at least 1; resident in whole warps of 32)
	SharedMem int // bytes of shared memory per block (dynamic and static)
	Registers int // registers per thread (0: unknown, not counted)
}

func (g Grid) norm() Grid {
	g.Blocks, g.Threads = max(1, g.Blocks), max(1, g.Threads)
	return g
}

// Limit names the hardware limit a hazard ran into.
type Limit int

const (
	// LimitNone: the hazard is an implicit synchronisation, no hardware limit.
	LimitNone Limit = iota
	// LimitResidentGrids: every grid slot of the device is taken.
	LimitResidentGrids
	// LimitBlocksPerSM: no SM has room for another resident block.
	LimitBlocksPerSM
	// LimitThreadsPerSM: no SM has room for another block's threads.
	LimitThreadsPerSM
	// LimitSharedMemPerSM: no SM has room for another block's shared memory.
	LimitSharedMemPerSM
	// LimitRegistersPerSM: no SM has room for another block's registers.
	LimitRegistersPerSM
	// LimitHardwareQueue: the command waits for a never-ending kernel on a
	// hardware work queue that other streams share (a false dependency).
	LimitHardwareQueue
)

// String names the limit.
func (l Limit) String() string {
	switch l {
	case LimitNone:
		return "none"
	case LimitResidentGrids:
		return "resident grids per device"
	case LimitBlocksPerSM:
		return "resident blocks per SM"
	case LimitThreadsPerSM:
		return "resident threads per SM"
	case LimitSharedMemPerSM:
		return "shared memory per SM"
	case LimitRegistersPerSM:
		return "registers per SM"
	case LimitHardwareQueue:
		return "hardware work queues"
	}
	return fmt.Sprintf("Limit(%d)", int(l))
}

// value is the figure of limit l in lim.
func (lim Limits) value(l Limit) int {
	switch l {
	case LimitResidentGrids:
		return lim.ResidentGrids
	case LimitBlocksPerSM:
		return lim.BlocksPerSM
	case LimitThreadsPerSM:
		return lim.ThreadsPerSM
	case LimitSharedMemPerSM:
		return lim.SharedMemPerSM
	case LimitRegistersPerSM:
		return lim.RegistersPerSM
	case LimitHardwareQueue:
		return lim.HardwareQueues
	}
	return 0
}

// ErrResidency is matched (errors.Is) by a *HazardError whose launch
// cannot become resident beside persistent kernels (a residency Limit);
// it also matches ErrHazard.
var ErrResidency = errors.New("hostsim: launch cannot become resident beside persistent kernels")

// ErrFalseDependency is matched (errors.Is) by a *HazardError of
// LimitHardwareQueue; it also matches ErrHazard.
var ErrFalseDependency = errors.New("hostsim: command waits for a persistent kernel on a shared hardware queue")

// ErrOutOfResources is the error of a launch whose block needs more than
// an empty SM holds (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES on a GPU).
var ErrOutOfResources = errors.New("hostsim: too many resources requested for launch")

// smUse is what the resident blocks of one SM take.
type smUse struct{ blocks, threads, smem, regs int }

// residency is the resource use of a set of resident grids.
type residency struct {
	lim   Limits
	grids int
	sms   []smUse
}

func newResidency(lim Limits) *residency {
	return &residency{lim: lim, sms: make([]smUse, lim.SMs)}
}

// block is what one block of g takes on its SM.
func (r *residency) block(g Grid) smUse {
	threads := (g.Threads + 31) / 32 * 32
	return smUse{blocks: 1, threads: threads, smem: g.SharedMem + r.lim.SharedMemReservedPerBlock, regs: g.Registers * threads}
}

// blocking returns the first limit that keeps block b off SM use u, or
// LimitNone.
func (r *residency) blocking(u, b smUse) Limit {
	switch lim := r.lim; {
	case lim.BlocksPerSM > 0 && u.blocks+b.blocks > lim.BlocksPerSM:
		return LimitBlocksPerSM
	case lim.ThreadsPerSM > 0 && u.threads+b.threads > lim.ThreadsPerSM:
		return LimitThreadsPerSM
	case lim.SharedMemPerSM > 0 && u.smem+b.smem > lim.SharedMemPerSM:
		return LimitSharedMemPerSM
	case lim.RegistersPerSM > 0 && u.regs+b.regs > lim.RegistersPerSM:
		return LimitRegistersPerSM
	}
	return LimitNone
}

// tooBig reports the limit that keeps a block of g off even an empty SM.
func (r *residency) tooBig(g Grid) Limit {
	if r.lim.SMs == 0 {
		return LimitNone
	}
	return r.blocking(smUse{}, r.block(g.norm()))
}

// place makes g resident: all of its blocks when all is set (a
// persistent grid, whose blocks never make room for the rest), else as
// many as fit, at least one (a one-shot grid runs in waves). Each block
// goes to the least loaded SM it fits on. It returns the SM of each
// placed block, or the limit that refused it (nothing is placed then).
func (r *residency) place(g Grid, all bool) ([]int, Limit) {
	g = g.norm()
	if r.lim.ResidentGrids > 0 && r.grids >= r.lim.ResidentGrids {
		return nil, LimitResidentGrids
	}
	if r.lim.SMs == 0 {
		r.grids++
		return nil, LimitNone
	}
	b := r.block(g)
	var placed []int
	var refused Limit
	for len(placed) < g.Blocks {
		best := -1
		for i, u := range r.sms {
			if l := r.blocking(u, b); l != LimitNone {
				if refused == LimitNone {
					refused = l
				}
				continue
			}
			if best < 0 || u.threads < r.sms[best].threads || (u.threads == r.sms[best].threads && u.blocks < r.sms[best].blocks) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		r.add(best, b, 1)
		placed = append(placed, best)
	}
	if len(placed) == 0 || (all && len(placed) < g.Blocks) {
		for _, sm := range placed {
			r.add(sm, b, -1)
		}
		if refused == LimitNone {
			refused = LimitBlocksPerSM
		}
		return nil, refused
	}
	r.grids++
	return placed, LimitNone
}

func (r *residency) add(sm int, b smUse, sign int) {
	u := &r.sms[sm]
	u.blocks += sign * b.blocks
	u.threads += sign * b.threads
	u.smem += sign * b.smem
	u.regs += sign * b.regs
}

// remove gives back the grid slot and the blocks place returned for g.
func (r *residency) remove(g Grid, placed []int) {
	r.grids--
	b := r.block(g.norm())
	for _, sm := range placed {
		r.add(sm, b, -1)
	}
}

// holding returns the persistent launches in flight that hold (or, queued,
// will hold) residency for good: not asked to exit, not superseded;
// resident only, when residentOnly is set. Oldest first.
func (h *Hazards) holding(residentOnly bool, except *Tracked) []*Tracked {
	var out []*Tracked
	for _, l := range h.inflight {
		if l == except || !l.persistent || l.exiting() || (residentOnly && !l.resident) {
			continue
		}
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// neverFits reports whether g cannot become resident beside the
// persistent kernels that never exit (residentOnly: only those already
// resident): the limit, and those kernels.
func (h *Hazards) neverFits(g Grid, persistent, residentOnly bool, except *Tracked) (Limit, []*Tracked) {
	holders := h.holding(residentOnly, except)
	r := newResidency(h.limits)
	for _, l := range holders {
		r.place(l.grid, true)
	}
	if _, limit := r.place(g, persistent); limit != LimitNone {
		return limit, holders
	}
	return LimitNone, nil
}

func (h *Hazards) residencyHazard(call string, l *Tracked, limit Limit, holders []*Tracked, waited time.Duration) *HazardError {
	e := &HazardError{Call: call, Class: CallFree, Limit: limit, LimitValue: h.limits.value(limit), Launching: l.entry,
		Holders: len(holders), Waited: waited, Queue: -1}
	if len(holders) > 0 {
		first := holders[0]
		e.Kernel, e.Launch, e.Stream, e.Control = first.entry, first.id, first.stream, first.control
	}
	h.raised = append(h.raised, e)
	return e
}

// SetLimits sets the hardware limits the model enforces (the zero Limits:
// none). Set them before the first launch.
func (h *Hazards) SetLimits(lim Limits) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.limits = lim
	h.res = newResidency(lim)
}

// Limits returns the hardware limits the model enforces.
func (h *Hazards) Limits() Limits {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.limits
}

// Resident returns the number of grids resident now and the blocks they
// hold.
func (h *Hazards) Resident() (grids, blocks int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, l := range h.inflight {
		if l.resident {
			grids++
			blocks += max(1, len(l.placed))
		}
	}
	return grids, blocks
}
