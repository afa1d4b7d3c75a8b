//go:build linux && cgo

package hostsim

/*
#include <stdint.h>

// rc_hz_load reads a 64-bit word of mapped memory given as an integer
// address (a simulated device pointer), with acquire order.
static uint64_t rc_hz_load(uint64_t addr) {
	return __atomic_load_n((const uint64_t *)(uintptr_t)addr, __ATOMIC_ACQUIRE);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
	"unsafe"

	"github.com/ringactor/ringactor/gpu/ring"
)

// The hazard model of the simulated device. A persistent kernel never
// returns, so on a GPU a driver call that implicitly synchronises with
// work already running waits forever beside one (CUDA Programming Guide,
// "Implicit Synchronization" and "Stream Ordered Memory Allocator"). A
// simulated device that never blocks would let such a call pass here and
// hang on an H100; [Hazards] makes it visible instead. Every driver call
// is classed ([ClassOf]); launches are tracked per stream from the moment
// they are enqueued until they finish, a persistent launch until its loop
// exits.
//
// In [HazardStrict] mode (the tests' default) a synchronising call, or
// stream work held back by a barrier, while a persistent kernel that has
// not been asked to exit is in flight fails at once with a *[HazardError]
// naming the call and the kernel (its entry, launch number, stream and
// control block). A wait on a persistent kernel that has been asked to
// exit (its terminate word is set) is bounded, so it really waits, under
// the watchdog. In [HazardBlocking] mode every such call really waits, as
// it would on a GPU, until the kernels it waits for have exited or the
// watchdog fires (a *HazardError with Waited set): that exercises a
// protocol that parks the kernels first.
//
// The model reads the terminate word of a persistent kernel's control
// block as plain memory; nothing of it runs on a simulated context's
// thread, so the simulator cannot deadlock itself.

// CallClass is how a driver call behaves beside work already in flight on
// the device.
type CallClass int

const (
	// CallFree calls neither wait for nor hold back other streams' work:
	// stream-ordered allocation and pool calls, events, copies and
	// launches on a stream of the caller's own, a stream's own
	// synchronisation, attribute and pointer queries.
	CallFree CallClass = iota
	// CallBarrier calls return, but stream work issued after them cannot
	// start before all work issued before them has finished: device and
	// pinned allocations, memsets.
	CallBarrier
	// CallSynchronizing calls wait for all work in flight on the device:
	// frees of device and pinned memory, module load and unload, context
	// synchronisation, host memory (un)registration, work on the legacy
	// NULL stream, function lookup under lazy module loading.
	CallSynchronizing
)

// String names the class.
func (c CallClass) String() string {
	switch c {
	case CallFree:
		return "free"
	case CallBarrier:
		return "launch barrier"
	case CallSynchronizing:
		return "synchronising"
	}
	return fmt.Sprintf("CallClass(%d)", int(c))
}

// callClasses classes the driver entry points by their cuda.h names.
// Entry points not listed are CallFree.
var callClasses = map[string]CallClass{
	"cuMemFree_v2":            CallSynchronizing,
	"cuMemFreeHost":           CallSynchronizing,
	"cuModuleLoadDataEx":      CallSynchronizing,
	"cuModuleLoadData":        CallSynchronizing,
	"cuLibraryLoadData":       CallSynchronizing,
	"cuModuleUnload":          CallSynchronizing,
	"cuCtxSynchronize":        CallSynchronizing,
	"cuMemHostRegister_v2":    CallSynchronizing,
	"cuMemHostUnregister":     CallSynchronizing,
	"cuMemAlloc_v2":           CallBarrier,
	"cuMemAllocPitch_v2":      CallBarrier,
	"cuMemAllocManaged":       CallBarrier,
	"cuMemHostAlloc":          CallBarrier,
	"cuMemAllocHost_v2":       CallBarrier,
	"cuMemsetD8_v2":           CallBarrier,
	"cuMemsetD32_v2":          CallBarrier,
	"cuCtxSetCacheConfig":     CallBarrier,
	"cuFuncSetCacheConfig":    CallBarrier,
	"cuMemAllocAsync":         CallFree,
	"cuMemAllocFromPoolAsync": CallFree,
	"cuMemFreeAsync":          CallFree,
	"cuStreamQuery":           CallFree, // asks, never waits: safe beside a persistent kernel
}

// ClassOf returns the class of driver entry point call (a cuda.h name
// such as "cuMemFree_v2"); calls this model does not list are CallFree.
// Work on the legacy NULL stream is synchronising whatever the call: see
// [Hazards.Enqueue].
func ClassOf(call string) CallClass { return callClasses[call] }

// HazardMode selects what [Hazards] does with a call that would wait on a
// running persistent kernel.
type HazardMode int

const (
	// HazardStrict fails such a call at once with a *HazardError.
	HazardStrict HazardMode = iota
	// HazardBlocking makes it wait, as on a GPU, under the watchdog.
	HazardBlocking
)

// ErrHazard is matched (errors.Is) by every *HazardError.
var ErrHazard = errors.New("hostsim: driver call would wait on a persistent kernel")

// HazardError is a driver call that, on a GPU, would wait for a
// persistent kernel that never returns: an implicit synchronisation
// (Limit is LimitNone), a launch that cannot become resident beside
// persistent kernels (a residency Limit: it also matches ErrResidency), or
// a command queued behind a persistent kernel on a hardware work queue
// that other streams share (LimitHardwareQueue: it also matches
// ErrFalseDependency).
type HazardError struct {
	Call    string        // the driver call, e.g. "cuMemFree_v2"
	Class   CallClass     // its class
	HeldBy  string        // stream work held by a barrier: the barrier call; else ""
	Kernel  string        // the persistent kernel's entry, e.g. "rc_ring_saxpy" (residency: the oldest holder)
	Launch  uint64        // its launch number on this device (from 1)
	Stream  uint64        // its stream (the simulated stream's identity)
	Control uint64        // its control block's device address (0 if unknown)
	Waited  time.Duration // blocking mode: how long the call waited before the watchdog fired

	Limit      Limit  // the hardware limit in the way, or LimitNone
	LimitValue int    // its figure in the device's Limits (e.g. 128 resident grids)
	Launching  string // residency: the entry of the launch that cannot become resident
	Holders    int    // residency: the persistent kernels holding the device (0: the grid exceeds an empty device)
	Queue      int    // LimitHardwareQueue: the hardware queue (from 0)
	OnStream   uint64 // LimitHardwareQueue: the stream of the command that waits
}

// Error implements error.
func (e *HazardError) Error() string {
	kernel := fmt.Sprintf("persistent kernel %s (launch %d, stream %#x, control block %#x)", e.Kernel, e.Launch, e.Stream, e.Control)
	var s string
	switch {
	case e.Limit == LimitHardwareQueue:
		s = fmt.Sprintf("hostsim: %s on stream %#x waits behind %s on hardware work queue %d of %d, which other streams share: "+
			"a false dependency", e.Call, e.OnStream, kernel, e.Queue, e.LimitValue)
	case e.Limit != LimitNone && e.Holders == 0:
		s = fmt.Sprintf("hostsim: %s of persistent kernel %s cannot become resident even on an empty device: %s (%d)",
			e.Call, e.Launching, e.Limit, e.LimitValue)
	case e.Limit != LimitNone:
		s = fmt.Sprintf("hostsim: %s of %s cannot become resident: %s (%d) taken by %d persistent kernels, the first %s",
			e.Call, e.Launching, e.Limit, e.LimitValue, e.Holders, kernel)
	default:
		what := e.Call + " (" + e.Class.String() + ")"
		if e.HeldBy != "" {
			what = fmt.Sprintf("%s held back by %s (%s)", e.Call, e.HeldBy, CallBarrier)
		}
		s = fmt.Sprintf("hostsim: %s while %s runs", what, kernel)
	}
	if e.Waited > 0 {
		return s + fmt.Sprintf(": still waiting after %v (the watchdog gave up; on a GPU it waits forever)", e.Waited)
	}
	return s + ": on a GPU it would wait forever"
}

// Is matches ErrHazard, and ErrResidency or ErrFalseDependency by Limit.
func (e *HazardError) Is(target error) bool {
	switch target {
	case ErrHazard:
		return true
	case ErrResidency:
		return e.Limit != LimitNone && e.Limit != LimitHardwareQueue
	case ErrFalseDependency:
		return e.Limit == LimitHardwareQueue
	}
	return false
}

// Tracked is one launch in flight, from [Hazards.Begin] to [Hazards.End].
type Tracked struct {
	id, stream uint64
	entry      string
	persistent bool
	control    uint64 // control block address of a persistent launch, or 0
	grid       Grid   // its shape, for residency
	resident   bool   // dispatched: it holds its grid slot and blocks
	placed     []int  // the SM of each resident block
	superseded bool   // a later launch took its control block: it has exited
}

// Hazards tracks the launches in flight on a simulated device and
// applies the hazard model to every driver call (see [CallClass]). It is
// safe for concurrent use. The zero value is not usable; use NewHazards.
type Hazards struct {
	mu         sync.Mutex
	mode       HazardMode
	watchdog   time.Duration
	seq        uint64
	inflight   map[uint64]*Tracked
	fence      map[uint64]string // launch id -> the barrier call that fenced it
	persistent map[string]int    // entry -> parameter index of its control block (-1: none)
	changed    chan struct{}     // closed and replaced whenever a launch ends
	calls      map[string]int
	raised     []*HazardError

	limits  Limits            // the hardware limits (limits.go)
	res     *residency        // the resident grids' use of the device
	tseq    uint64            // tickets issued (queues.go)
	queues  map[uint64]int    // live stream -> its hardware queue
	nstream int               // streams created, for the round robin
	pending map[int][]*Ticket // hardware queue -> its commands not yet dispatched, in order
}

// DefaultWatchdog bounds a wait of the hazard model.
const DefaultWatchdog = 2 * time.Second

// NewHazards returns a model in strict mode with DefaultWatchdog, which
// knows no persistent kernel yet (declare each with MarkPersistent; the
// simulated device does so for every ring program it loads).
func NewHazards() *Hazards {
	return &Hazards{watchdog: DefaultWatchdog, inflight: map[uint64]*Tracked{}, fence: map[uint64]string{},
		persistent: map[string]int{}, changed: make(chan struct{}), calls: map[string]int{}, res: newResidency(Limits{}),
		queues: map[uint64]int{}, pending: map[int][]*Ticket{}}
}

// SetMode sets the mode and the watchdog (≤ 0 keeps the current one).
func (h *Hazards) SetMode(mode HazardMode, watchdog time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.mode = mode
	if watchdog > 0 {
		h.watchdog = watchdog
	}
}

// MarkPersistent declares kernel entry persistent: its launches stay in
// flight until its loop exits. controlArg is the index of the parameter
// holding its control block's address (a ring.ControlBlock, whose
// terminate word says whether it was asked to exit), or -1 when it has
// none (it then never counts as exiting).
func (h *Hazards) MarkPersistent(entry string, controlArg int) {
	h.mu.Lock()
	h.persistent[entry] = controlArg
	h.mu.Unlock()
}

// Calls returns how many times the model saw call (Call, Begin, Enqueue
// or StreamSync).
func (h *Hazards) Calls(call string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls[call]
}

// InFlight returns the entries of the persistent launches in flight.
func (h *Hazards) InFlight() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, l := range h.inflight {
		if l.persistent {
			out = append(out, l.entry)
		}
	}
	sort.Strings(out)
	return out
}

var (
	terminateOffset = uint64(unsafe.Offsetof(ring.ControlBlock{}.Terminate))
	ackOffset       = uint64(unsafe.Offsetof(ring.ControlBlock{}.TerminatedAck))
)

// exiting reports whether a persistent launch was asked to exit (or has
// acknowledged): a wait for it is bounded.
func (l *Tracked) exiting() bool {
	if l.superseded {
		return true
	}
	if l.control == 0 {
		return false
	}
	return C.rc_hz_load(C.uint64_t(l.control+terminateOffset)) != 0 ||
		C.rc_hz_load(C.uint64_t(l.control+ackOffset)) != 0
}

func (h *Hazards) hazard(call string, class CallClass, heldBy string, l *Tracked, waited time.Duration) *HazardError {
	e := &HazardError{Call: call, Class: class, HeldBy: heldBy, Kernel: l.entry, Launch: l.id, Stream: l.stream,
		Control: l.control, Waited: waited}
	h.raised = append(h.raised, e)
	return e
}

// Raised returns every HazardError the model has returned, oldest first:
// a test checks it is empty even where the error was absorbed by a retry
// or a fallback on its way up.
func (h *Hazards) Raised() []*HazardError {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*HazardError(nil), h.raised...)
}

// wait returns once no launch chosen by pick is in flight. Strict mode
// fails at once on a persistent one not asked to exit; otherwise it waits
// (launches end through End) until the watchdog fires. h.mu is held on
// entry and on return.
func (h *Hazards) wait(call string, class CallClass, pick func(*Tracked) (bool, string)) error {
	start := time.Now()
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		var first *Tracked
		var heldBy string
		for _, l := range h.inflight {
			if !l.persistent {
				continue // a one-shot kernel finishes; the stream itself waits for it
			}
			ok, by := pick(l)
			if !ok {
				continue
			}
			if first == nil || l.id < first.id {
				first, heldBy = l, by
			}
			if h.mode == HazardStrict && !l.exiting() {
				return h.hazard(call, class, by, l, 0)
			}
		}
		if first == nil {
			return nil
		}
		if timer == nil {
			timer = time.NewTimer(h.watchdog)
		}
		changed := h.changed
		h.mu.Unlock()
		select {
		case <-changed:
			h.mu.Lock()
		case <-timer.C:
			h.mu.Lock()
			return h.hazard(call, class, heldBy, first, time.Since(start))
		}
	}
}

// Call applies the model to a driver call that is not stream work: a
// synchronising call waits for every launch in flight; a barrier fences
// them, so stream work enqueued later waits for them (see Enqueue); a
// free call passes.
func (h *Hazards) Call(call string) error {
	class := ClassOf(call)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls[call]++
	switch class {
	case CallSynchronizing:
		return h.wait(call, class, func(l *Tracked) (bool, string) { return true, "" })
	case CallBarrier:
		for id, l := range h.inflight {
			if _, ok := h.fence[id]; !ok && l.persistent {
				h.fence[id] = call
			}
		}
	}
	return nil
}

// Enqueue applies the model to stream work (a copy, an event record)
// about to be enqueued on stream (0: the legacy NULL stream, which
// synchronises with everything): it waits for the launches a barrier
// fenced.
func (h *Hazards) Enqueue(call string, stream uint64) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.enqueue(call, stream)
}

func (h *Hazards) enqueue(call string, stream uint64) error {
	h.calls[call]++
	if stream == 0 {
		return h.wait(call, CallSynchronizing, func(l *Tracked) (bool, string) { return true, "" })
	}
	return h.wait(call, CallFree, func(l *Tracked) (bool, string) {
		by, ok := h.fence[l.id]
		return ok, by
	})
}

// Begin applies Enqueue's rule to a launch of entry on stream and then
// records it as in flight; args are its parameter slots. End it when the
// kernel has finished. Its grid counts as one block of one thread: see
// BeginGrid.
func (h *Hazards) Begin(stream uint64, entry string, args []uint64) (*Tracked, error) {
	return h.BeginGrid(stream, entry, Grid{Blocks: 1, Threads: 1}, args)
}

// BeginGrid is Begin of a launch of shape g. Beside the rules of Enqueue,
// in strict mode a launch that cannot become resident beside the
// persistent kernels in flight that never exit (the model's Limits) fails
// at once with a residency hazard: one-shot kernels need a grid slot and
// room for one block, a persistent grid room for all of its blocks. A
// block larger than an empty SM is ErrOutOfResources in either mode.
// The launch becomes resident when its stream reaches it (Dispatch).
func (h *Hazards) BeginGrid(stream uint64, entry string, g Grid, args []uint64) (*Tracked, error) {
	g = g.norm()
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.enqueue("cuLaunchKernel", stream); err != nil {
		return nil, err
	}
	if l := h.res.tooBig(g); l != LimitNone {
		return nil, fmt.Errorf("%w: %s: a block of %d threads and %d bytes of shared memory exceeds %s (%d)",
			ErrOutOfResources, entry, g.Threads, g.SharedMem, l, h.limits.value(l))
	}
	l := &Tracked{id: h.seq + 1, stream: stream, entry: entry, grid: g}
	if arg, ok := h.persistent[entry]; ok {
		l.persistent = true
		if arg >= 0 && arg < len(args) {
			l.control = args[arg]
		}
	}
	if l.persistent && l.control != 0 {
		for _, o := range h.inflight {
			if o.persistent && o.control == l.control {
				o.superseded = true // a relaunch on the same control block: the old loop has exited
			}
		}
	}
	if h.mode == HazardStrict {
		if limit, holders := h.neverFits(g, l.persistent, false, nil); limit != LimitNone {
			return nil, h.residencyHazard("cuLaunchKernel", l, limit, holders, 0)
		}
	}
	h.seq++
	h.inflight[l.id] = l
	return l, nil
}

// End records that l has finished.
func (h *Hazards) End(l *Tracked) {
	if l == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if l.resident {
		h.res.remove(l.grid, l.placed)
		l.resident, l.placed = false, nil
	}
	delete(h.inflight, l.id)
	delete(h.fence, l.id)
	h.notify()
}

// notify wakes every wait of the model (h.mu held).
func (h *Hazards) notify() {
	close(h.changed)
	h.changed = make(chan struct{})
}

// StreamSync applies the model to a wait for stream (cuStreamSynchronize,
// or cuEventSynchronize of an event recorded on it): it waits for the
// launches in flight on that stream only.
func (h *Hazards) StreamSync(call string, stream uint64) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls[call]++
	return h.wait(call, CallFree, func(l *Tracked) (bool, string) { return l.stream == stream, "" })
}
