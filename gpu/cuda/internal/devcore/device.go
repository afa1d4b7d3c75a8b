package devcore

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
)

// Runner runs functions on the thread that has the device's context
// current: gpu/cuda's Context in production, a Worker on a simulated
// device or in tests.
type Runner interface {
	Do(fn func() error) error
	Close() error
}

var _ Runner = (*Worker)(nil)

// Attrs are the device attributes launch shapes and startup checks use.
type Attrs struct {
	SMs                int  // multiprocessors
	MaxThreadsPerBlock int  // 1024 on every current GPU
	MaxThreadsPerSM    int  // 2048 on an H100
	MaxGridX           int  // 2^31-1
	MaxGridY           int  // 65535
	KernelExecTimeout  bool // a display watchdog limits kernel run time
	CanMapHostMemory   bool // cuMemHostAlloc(DEVICEMAP) works
}

// QueryAttrs reads dev's attributes from api.
func QueryAttrs(api driverapi.DeviceAPI, dev driverapi.Device) (Attrs, error) {
	var a Attrs
	var timeout, canMap int
	for _, q := range []struct {
		attr driverapi.DeviceAttribute
		dst  *int
	}{
		{driverapi.AttrMultiprocessorCount, &a.SMs},
		{driverapi.AttrMaxThreadsPerBlock, &a.MaxThreadsPerBlock},
		{driverapi.AttrMaxThreadsPerMultiprocessor, &a.MaxThreadsPerSM},
		{driverapi.AttrMaxGridDimX, &a.MaxGridX},
		{driverapi.AttrMaxGridDimY, &a.MaxGridY},
		{driverapi.AttrKernelExecTimeout, &timeout},
		{driverapi.AttrCanMapHostMemory, &canMap},
	} {
		v, err := api.DeviceGetAttribute(q.attr, dev)
		if err != nil {
			return a, err
		}
		*q.dst = v
	}
	a.KernelExecTimeout, a.CanMapHostMemory = timeout != 0, canMap != 0
	if a.SMs < 1 || a.MaxThreadsPerBlock < 1 || a.MaxGridX < 1 || a.MaxGridY < 1 {
		return a, fmt.Errorf("cuda: implausible device attributes %+v", a)
	}
	return a, nil
}

// Block1D is the block size of 1-D launches: 256 threads (the reduce
// kernels' maximum, a power of two), or the largest power of two the
// device allows if that is less.
func (a Attrs) Block1D() uint32 {
	b := min(256, a.MaxThreadsPerBlock)
	return uint32(1) << (bits.Len(uint(b)) - 1)
}

// Grid1D is the grid of a grid-stride launch over n elements with blocks
// of block threads: enough blocks to cover n, at most as many as the
// device holds resident at once (SMs × blocks per SM), at least 1.
func (a Attrs) Grid1D(n uint64, block uint32) uint32 {
	perSM := max(1, a.MaxThreadsPerSM/int(block))
	limit := uint64(max(1, a.SMs*perSM))
	limit = min(limit, uint64(a.MaxGridX))
	g := (n + uint64(block) - 1) / uint64(block)
	return uint32(max(1, min(g, limit)))
}

// LoadedModule is a module loaded on the device, with its resolved
// entries.
type LoadedModule struct {
	Mod driverapi.Module
	Log driverapi.JITLog
	Fns map[string]driverapi.Function
}

// Device is an open CUDA device below both the one-shot backend and the
// ring runtime: the context's thread, the attributes, the backend's
// stream, the pinned staging buffers and arena, the stream-ordered (or
// fallback) allocator, batches, the loaded modules and the device epochs
// (the embedded Epochs).
//
// Everything but Do, Thread, API, Ordinal, Attrs, Priorities and the
// Epochs' Pace and Stats is confined to the device's thread: it is used
// inside Do, which serialises it.
type Device struct {
	API     driverapi.DeviceAPI
	Thread  Runner
	Ordinal int
	Attrs   Attrs
	// Priorities are the stream priorities of the one-shot stream and of
	// persistent launches (priority.go), set at Open.
	Priorities StreamPriorities

	// Epochs is the device's registry of live rings and its device
	// epochs (epoch.go).
	Epochs
	// Budget holds the device's persistent launches against its
	// residency limits (budget.go); nil counts none. Set before the first
	// ring; safe from any goroutine.
	Budget *Budget

	// thread-confined
	Stream driverapi.Stream
	// Modules are the modules loaded by PTX image hash (RunPTX, LoadPTX,
	// ring programs), unloaded when the device closes.
	Modules map[[32]byte]*LoadedModule
	// BeforeClose, when set, runs first when the device closes (inside
	// Do): the ring runtime stops its rings there.
	BeforeClose func() error
	// OnRelease, when set, runs once the rings stopped, before the device
	// releases its own memory (inside Do): the one-shot module's unload.
	OnRelease func() []error

	staging map[int][]unsafe.Pointer      // free pinned buffers by size class
	funcRes map[driverapi.Function][2]int // registers and static shared memory by function (FuncResources)
	held    int                           // bytes in staging
	batch   *batch
	closed  bool
	mem     memState
}

// Open starts using dev on run's thread: it reads the attributes, creates
// the backend's stream (at the greatest stream priority), sets up the memory pool and reserves the pinned
// arena (arenaBytes, 0 for DefaultArenaBytes). On failure what it holds
// is released and the error is returned; the caller closes run.
func Open(api driverapi.DeviceAPI, run Runner, dev driverapi.Device, ordinal int, arenaBytes uintptr) (*Device, error) {
	d := &Device{API: api, Thread: run, Ordinal: ordinal, Modules: map[[32]byte]*LoadedModule{},
		staging: map[int][]unsafe.Pointer{}}
	err := run.Do(func() error {
		var err error
		if d.Attrs, err = QueryAttrs(api, dev); err != nil {
			return err
		}
		if err = d.openStream(); err != nil {
			return err
		}
		return d.openMemory(dev, arenaBytes)
	})
	if err != nil {
		return nil, errors.Join(err, run.Do(d.Release))
	}
	return d, nil
}

// Release frees what the device holds (inside Do): BeforeClose first (the
// rings stop), then, unless a ring still runs, the stream, the modules,
// OnRelease's and the arena. Later calls return nil.
func (d *Device) Release() error {
	if d.closed {
		return nil
	}
	var errs []error
	if d.BeforeClose != nil {
		errs = append(errs, d.BeforeClose())
	}
	d.closed = true
	if n := d.Epochs.Len(); n > 0 {
		// A ring that did not stop still runs: unloading modules or
		// freeing pinned memory would wait for it forever on a GPU, so
		// they are left to the context's destruction.
		return errors.Join(append(errs, fmt.Errorf("cuda: %d ring kernels did not stop; the device's modules and pinned memory are left loaded", n))...)
	}
	if !d.Stream.IsDefault() {
		errs = append(errs, d.API.StreamSynchronize(d.Stream))
	}
	clear(d.staging) // arena memory, freed with the arena
	for k, m := range d.Modules {
		errs = append(errs, d.API.ModuleUnload(m.Mod))
		delete(d.Modules, k)
	}
	if d.OnRelease != nil {
		errs = append(errs, d.OnRelease()...)
	}
	if d.mem.arena != nil {
		errs = append(errs, d.mem.arena.Release(d.API)...)
	}
	if !d.Stream.IsDefault() {
		errs = append(errs, d.API.StreamDestroy(d.Stream))
		d.Stream = driverapi.Stream{}
	}
	return errors.Join(errs...)
}

// Close releases the device and stops its thread.
func (d *Device) Close() error {
	err := d.Thread.Do(d.Release)
	return errors.Join(err, d.Thread.Close())
}

// Do runs fn on the device's thread, failing once the device is closed.
func (d *Device) Do(fn func() error) error {
	return d.Thread.Do(func() error {
		if d.closed {
			return Unavailable("the backend is closed")
		}
		return fn()
	})
}

// Epoch runs fn (a synchronising driver call) with every live ring parked
// (inside Do): Epochs.Run.
func (d *Device) Epoch(ctx context.Context, why string, fn func() error) error {
	return d.Epochs.Run(ctx, why, fn)
}
