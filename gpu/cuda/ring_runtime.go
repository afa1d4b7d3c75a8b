package cuda

import (
	"context"
	"fmt"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/internal/ringrt"
)

// The device ring runtime (ring programs, ring kernels, program grids and
// mailboxes, device epochs) is package gpu/cuda/internal/ringrt; a Backend makes
// one when its device opens and forwards its ring methods to it. The
// types below are ringrt's, under the names users know.

// RingProgramSpec describes a device ring kernel written by a user: a CUDA
// C __device__ handler and the Go types of its messages
// (ringrt.ProgramSpec, which documents the handler's contract).
type RingProgramSpec = ringrt.ProgramSpec

// RingProgramSource is the generated source of a device ring kernel: the
// same program for NVRTC (Device) and for the simulated device's host
// compiler (Host), and the figures its launch needs.
type RingProgramSource = ringrt.ProgramSource

// RingProgram is a device ring program loaded on one backend: compiled by
// NVRTC, its module loaded and its entry resolved (on the simulated device:
// built for the host and loaded), ready for LaunchRingProgram and
// OpenMailbox.
type RingProgram = ringrt.Program

// RingKernel is the host side of one persistent device ring kernel (from
// LaunchRingProgram or OpenMailbox): its control block and rings in the
// backend's pinned arena, driven with TrySubmit, TryPoll, Terminate, Wait
// and Close (ringrt.Kernel).
type RingKernel = ringrt.Kernel

// RingConfig shapes a persistent ring kernel.
type RingConfig = ringrt.Config

// MailboxStats says how the mailboxes of a backend's ring program grids
// are used.
type MailboxStats = ringrt.MailboxStats

// Grid limits (ringrt's).
const (
	// DefaultMailboxes is the most device ring kernels one program grid
	// holds unless WithMailboxes sets another bound.
	DefaultMailboxes = ringrt.DefaultMailboxes
	// MailboxPinnedMax is what a mailbox pins at most unless
	// WithMailboxPinnedMax sets another bound.
	MailboxPinnedMax = ringrt.MailboxPinnedMax
)

// ErrRingTimeout is wrapped by the error of [RingKernel.Wait] when the
// kernel did not acknowledge termination before the deadline.
var ErrRingTimeout = ringrt.ErrRingTimeout

// ErrRingClosed is returned by TrySubmit once the kernel has terminated
// and its memory is released.
var ErrRingClosed = ringrt.ErrRingClosed

// ErrMailboxTooLarge is wrapped by OpenMailbox's *gpu.DeviceError (kind
// gpu.DeviceCapacity) when a mailbox's rings, at 2 slots each (or the
// capacity asked for), would pin more than the backend's bound
// (WithMailboxPinnedMax): the program's messages are too large for it.
var ErrMailboxTooLarge = ringrt.ErrMailboxTooLarge

// RingProgramOptions are the NVRTC options of every device ring program:
// no contraction of a*b+c into fma, so the device computes what the host
// build (g++ -ffp-contract=off) and a Go fallback that rounds each step
// compute, bit for bit.
var RingProgramOptions = []string{"--fmad=false"}

// NewRingProgramSource generates the program of spec
// (ringrt.NewProgramSource). A type that is not fixed-layout, a name that
// is not a C identifier (or is reserved: a leading _ or rc_), an empty
// source or handler name, or two types with the same C name is a
// *gpu.ArgumentError (errors.Is gpu.ErrArgument; a layout problem also
// matches clayout.ErrLayout).
func NewRingProgramSource(spec RingProgramSpec) (*RingProgramSource, error) {
	return ringrt.NewProgramSource(spec)
}

// WithMailboxes sets the most device ring kernels of one program a
// device holds at once (default DefaultMailboxes): the bound of each
// program grid's mailbox table. The table starts smaller and doubles when
// it is full, in a device epoch (every ring of the device parks for the
// copy), up to this bound; a kernel past it is a *gpu.DeviceError
// matching gpu.ErrDeviceCapacity. Each entry pins 96 bytes and takes 20
// bytes of device memory plus a State slot.
func WithMailboxes(n int) BackendOption {
	return func(b *Backend) {
		if n > 0 {
			b.mailboxes = n
		}
	}
}

// WithMailboxTableSize sets the first size of each program grid's mailbox
// table (default 1,024 entries); a full table doubles, in a device epoch,
// up to WithMailboxes' bound.
func WithMailboxTableSize(n int) BackendOption {
	return func(b *Backend) {
		if n > 0 {
			b.mailboxInit = n
		}
	}
}

// WithMailboxPinnedMax sets the most pinned memory one mailbox (a device
// ring kernel's control block and its two rings) may take (default
// MailboxPinnedMax, 128 KiB). A mailbox's rings hold 16 slots sized to the
// program's larger message (or the capacity asked for), fewer for large
// messages, at least 2: with the default, messages up to about 32 KiB fit;
// larger ones need a larger bound, or OpenMailbox refuses them with
// ErrMailboxTooLarge.
func WithMailboxPinnedMax(n int) BackendOption {
	return func(b *Backend) {
		if n > 0 {
			b.mailboxPin = n
		}
	}
}

// MailboxPinnedTotal is what the mailboxes of one device pin at most
// together unless WithMailboxPinnedTotal sets another bound (1 GiB).
const MailboxPinnedTotal = ringrt.MailboxPinnedTotal

// ErrMailboxPinnedFull is wrapped by OpenMailbox's *gpu.DeviceError (kind
// gpu.DeviceCapacity) when the device's mailboxes together would pin more
// than WithMailboxPinnedTotal's bound.
var ErrMailboxPinnedFull = ringrt.ErrMailboxPinnedFull

// WithMailboxPinnedTotal sets the most pinned memory the mailboxes of the
// device (their control blocks and rings) may take together (default
// MailboxPinnedTotal, 1 GiB): past it OpenMailbox refuses with
// ErrMailboxPinnedFull.
func WithMailboxPinnedTotal(n int) BackendOption {
	return func(b *Backend) {
		if n > 0 {
			b.mailboxTotal = n
		}
	}
}

// ringOptions are the backend's settings of its ring runtime.
func (b *Backend) ringOptions(d *device) ringrt.Options {
	o := ringrt.Options{Name: b.name, Target: b.RingProgramTarget, Compile: compileRingProgram,
		Mailboxes: b.mailboxes, MailboxInit: b.mailboxInit, MailboxPinnedMax: b.mailboxPin, MailboxPinnedTotal: b.mailboxTotal,
		GridLimit: b.gridLimit, MaxResidentGrids: d.profile.MaxResidentGrids, GridBlocks: b.gridBlocks}
	if h, ok := d.API.(HostDevice); ok {
		o.Host = h
	}
	return o
}

// compileRingProgram compiles a ring program's device source with NVRTC
// and RingProgramOptions for target (ringrt's Options.Compile), returning
// the CUBIN or the PTX, as target.Image says.
func compileRingProgram(ctx context.Context, name, code string, target NVRTCTarget) ([]byte, error) {
	c, err := Compile(ctx, Source{Name: name, Code: code, Arch: target.Arch, Options: RingProgramOptions})
	if err != nil {
		return nil, err
	}
	if target.Image == ImageCUBIN {
		if len(c.CUBIN) == 0 {
			return nil, &gpu.DeviceError{Kind: gpu.DeviceUnavailable, Backend: BackendName,
				Reason: fmt.Sprintf("NVRTC gave no CUBIN for %s (%s)", name, target.Arch), Err: ErrNoNVRTC}
		}
		return c.CUBIN, nil
	}
	return c.PTX, nil
}

// rings returns the ring runtime of the backend's device, or why there is
// none.
func (b *Backend) rings() (*ringrt.Runtime, error) {
	d, err := b.device()
	if err != nil {
		return nil, err
	}
	return d.rt, nil
}

// persistentRings is rings for a persistent kernel: the device must allow
// one first (CheckPersistent).
func (b *Backend) persistentRings(p *RingProgram) (*ringrt.Runtime, error) {
	if p == nil {
		return nil, fmt.Errorf("cuda: no ring program: %w", gpu.ErrArgument)
	}
	if err := b.CheckPersistent(); err != nil {
		return nil, err
	}
	return b.rings()
}

// RingProgramCache says where b keeps the program built from src and
// whether LoadRingProgram would find it built: on the simulated device the
// host build's library in hostsim's cache (hostsim.CachedProgram); on a
// GPU, NVRTC's CUBIN or PTX ([Backend.RingProgramTarget]), kept in memory
// once per process (cache is then "memory"). When built is false, loading src compiles it first, which
// takes seconds: a caller may say so.
func (b *Backend) RingProgramCache(src *RingProgramSource) (cache string, built bool) {
	if src == nil {
		return "", false
	}
	if b.sim != nil {
		return b.sim.ProgramCache(src)
	}
	target, err := b.RingProgramTarget()
	if err != nil {
		return "memory", false
	}
	return "memory", ringrt.Compiled(src, target)
}

// LoadRingProgram compiles src with NVRTC (RingProgramOptions, for the
// device's compute capability: [Backend.RingProgramTarget], a CUBIN for
// the device's exact architecture when NVRTC can, else PTX; once per
// process and target) and loads it on the backend's device: module loaded
// and entry resolved, so a later LaunchRingProgram makes no module call
// beside the running rings. The compilation runs before any device epoch;
// beside running rings the epoch holds the module load only (a CUBIN's
// takes milliseconds; PTX is JIT-compiled there). [RingProgram.Image] says
// which was loaded. On the simulated device the program is also built for
// the host (package hostsim) and NVRTC is optional (it only checks the
// source compiles for the device).
//
// Errors: an NVRTC newer than the driver ([ErrNVRTCNewerThanDriver]) or
// one that cannot target the device ([ErrNVRTCArch]) is a
// *gpu.DeviceError (gpu.DeviceUnavailable), before anything is compiled
// or loaded; a source that does not compile is a *gpu.CompilationError
// with NVRTC's (or the host compiler's) log, the same every time; no NVRTC
// on a real device, or no host compiler on the simulated one, is a
// *gpu.DeviceError (gpu.DeviceUnavailable); a backend that is not
// available returns its Available error.
func (b *Backend) LoadRingProgram(ctx context.Context, src *RingProgramSource) (*RingProgram, error) {
	if src == nil {
		return nil, fmt.Errorf("cuda: no ring program: %w", gpu.ErrArgument)
	}
	if err := b.Available(); err != nil {
		return nil, err
	}
	rt, err := b.rings()
	if err != nil {
		return nil, err
	}
	return rt.Load(ctx, src)
}

// LaunchRingProgram starts a persistent device ring kernel running p with
// its gate closed (open it with Activate): control block, rings and the
// program's State in one pinned allocation mapped into the device, the
// State zeroed. cfg.SlotSize defaults to the smallest slot that holds the
// program's messages (at least 4096 bytes); cfg.Threads to 32 (4 on the
// simulated device, where each thread is a host thread). The returned
// RingKernel is driven with TrySubmit, TryPoll, Terminate,
// Wait, Close).
func (b *Backend) LaunchRingProgram(p *RingProgram, cfg RingConfig) (*RingKernel, error) {
	rt, err := b.persistentRings(p)
	if err != nil {
		return nil, err
	}
	return rt.Launch(p, cfg)
}

// StartRingGrid launches p's persistent grid of mailboxes with blocks of
// threads threads (0: the default, as for LaunchRingProgram), unless it
// runs: once per (program, block size), when the program is loaded, never
// per kernel. The table holds WithMailboxes entries (fewer when their
// State slots would take more than an eighth of the device's memory).
// The grid has one block per SM, fewer when the device's budget has less
// room; a grid not one block of which fits the budget is a
// *gpu.DeviceError matching gpu.ErrDeviceCapacity (wrapping the
// *BudgetError).
func (b *Backend) StartRingGrid(p *RingProgram, threads int) error {
	rt, err := b.persistentRings(p)
	if err != nil {
		return err
	}
	return rt.StartGrid(p, threads)
}

// OpenMailbox makes a device ring kernel of p as a mailbox of the
// program's persistent grid (started first if it is not running; see
// StartRingGrid), with its gate closed: its control block and rings come
// from the pinned arena, its State is a slot of the grid's device memory,
// zeroed by the grid before its first message. No launch, no driver call
// beside the running grids (but an arena growth, in a device epoch). The
// returned RingKernel is driven as one from LaunchRingProgram.
//
// cfg.Capacity (default 16 slots) is the most slots a ring gets: fewer
// when its messages are so large that the mailbox would pin more than
// MailboxPinnedMax. cfg.SlotSize defaults to the smallest slot that holds the program's messages, cfg.Threads to the
// grid's default block size. A full mailbox table, or no grid left to
// start, is a *gpu.DeviceError matching gpu.ErrDeviceCapacity, at once.
func (b *Backend) OpenMailbox(p *RingProgram, cfg RingConfig) (*RingKernel, error) {
	rt, err := b.persistentRings(p)
	if err != nil {
		return nil, err
	}
	return rt.Open(p, cfg)
}

// MailboxStats returns how many grids run and how full their tables are.
func (b *Backend) MailboxStats() MailboxStats {
	rt, err := b.rings()
	if err != nil || rt == nil {
		return MailboxStats{}
	}
	return rt.MailboxStats()
}
