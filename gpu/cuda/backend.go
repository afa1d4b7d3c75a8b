package cuda

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/internal/devcore"
	"github.com/ringactor/ringactor/gpu/cuda/internal/ringrt"
)

// ErrNoDeviceKernels says that the CUDA backend has no device
// implementation of the requested kernel (it is not one of the built-in
// kernels of kernels/oneshot.cu, or not for that dtype, and its spec
// carries no CUDA function). Calls go to the CPU.
var ErrNoDeviceKernels = errors.New("cuda: no device implementation of this kernel in this build")

// Backend is the orchestrator's CUDA backend on device 0. It probes the
// driver once and reports, through Available, why it cannot run kernels
// (no library, no device, a module that does not load…). With a usable
// device it opens the device's primary context on a locked OS thread,
// loads OneShotPTX once, and runs the built-in kernels add, subtract,
// multiply, scale, relu, leaky_relu, sum, min, max, matmul and blur for f32
// and f64 on the device (each Execute is one hand-off to that thread: the
// copies, launches and one stream synchronisation), plus kernels whose
// spec carries a CUDA function and PTX kernels through [Backend.RunPTX].
// Buffers move to device memory through [Backend.Allocator] and stay there
// until the host asks for them.
type Backend struct {
	once   sync.Once
	report Report

	probeFn func() Report                                  // nil: Probe
	openFn  func() (DeviceAPI, runner, Device, int, error) // nil: NewContext(0)
	alloc   *Allocator                                     // stable, for buffers and pools
	devOnce sync.Once
	dev     *device
	devErr  error
	mu      sync.Mutex // closed
	closed  bool
	name    string // "cuda:0"; "cuda:sim" for a simulated device
	ordinal int    // the device ordinal (WithOrdinal; backends.go)
	// ordinalOpen: openFn is WithOrdinal's (NewContext(ordinal)).
	ordinalOpen bool

	arenaBytes   uintptr         // pinned arena reserved at open (0: DefaultArenaBytes)
	mailboxes    int             // the most mailboxes of each ring program grid (0: DefaultMailboxes)
	mailboxInit  int             // a grid's first table size (0: initialMailboxes; tests lower it)
	mailboxPin   int             // the most a mailbox may pin (0: MailboxPinnedMax)
	mailboxTotal int             // the most the mailboxes may pin together (0: MailboxPinnedTotal)
	gridLimit    int             // ring program grids a device may run (0: resident grids less the reserve; tests lower it)
	gridBlocks   int             // blocks of a program grid (0: sized from the budget; tests set their own)
	reserve      devcore.Reserve // what the budget keeps for one-shot kernels (WithDeviceReserve)
	reserveSet   bool
	parkTimeout  time.Duration  // a device epoch's wait for each ring's ack (0: DefaultParkTimeout)
	epochSpacing time.Duration  // the least time between two device epochs (WithEpochSpacing)
	sim          HostDevice     // the device of NewHostBackend (hostdevice.go), nil on the driver
	profile      *DeviceProfile // WithDeviceProfile's, or nil (profile.go)
}

// NewBackend returns the CUDA backend; the driver is probed on first use.
func NewBackend(opts ...BackendOption) *Backend {
	b := newBackend(nil, nil)
	for _, o := range opts {
		o(b)
	}
	return b
}

func newBackend(probe func() Report, open func() (DeviceAPI, runner, Device, int, error)) *Backend {
	b := &Backend{probeFn: probe, openFn: open, name: "cuda:0", epochSpacing: DefaultEpochSpacing}
	b.alloc = &Allocator{name: BackendName + ":0", dev: b.device}
	return b
}

var _ gpu.Backend = (*Backend)(nil)

func (b *Backend) probe() Report {
	b.once.Do(func() {
		if b.probeFn != nil {
			b.report = b.probeFn()
		} else {
			b.report = Probe()
		}
	})
	return b.report
}

// openContext is the production openFn: device 0's primary context.
func openContext() (DeviceAPI, runner, Device, int, error) {
	c, err := NewContext(0)
	if err != nil {
		return nil, nil, 0, 0, err
	}
	return c.Driver(), c, c.Device(), c.Ordinal(), nil
}

// device opens the device once and returns it, or why there is none.
func (b *Backend) device() (*device, error) {
	r := b.probe()
	if r.Err != nil {
		return nil, r.Err
	}
	if len(r.Devices) == 0 {
		return nil, unavailable("no device")
	}
	b.devOnce.Do(func() {
		open := b.openFn
		if open == nil {
			open = openContext
		}
		api, run, dev, ordinal, err := open()
		if err != nil {
			b.devErr = err
			return
		}
		d, err := openDevice(api, run, dev, ordinal, b.arenaBytes)
		if err != nil {
			b.devErr = err
			return
		}
		if d.profile, err = b.openProfile(api, dev); err != nil {
			_ = d.Close()
			b.devErr = err
			return
		}
		reserve := DefaultDeviceReserve
		if b.reserveSet {
			reserve = b.reserve
		}
		d.Budget = devcore.NewBudget(d.profile.budgetLimits(), reserve)
		d.alloc = b.alloc
		d.Epochs.ParkTimeout = b.parkTimeout
		d.Epochs.Spacing = b.epochSpacing
		d.rt = ringrt.New(d.Device, b.ringOptions(d))
		b.dev = d
	})
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		return nil, unavailable("the backend is closed")
	}
	return b.dev, b.devErr
}

// Report returns what the driver probe found.
func (b *Backend) Report() Report { return b.probe() }

// Name is "cuda:0" ("cuda:N" with WithOrdinal(N); a [NewHostBackend]'s
// name, e.g. "cuda:sim" for simdevice.NewBackend and "cuda:simN" for one
// of several simdevice.NewBackends).
func (b *Backend) Name() string { return b.name }

// Kind is gpu.KindCUDA.
func (b *Backend) Kind() gpu.BackendKind { return gpu.KindCUDA }

// Available is nil with a usable device, else the *gpu.DeviceError
// (DeviceUnavailable) saying why there is none: the probe's reason (no
// library, cuInit failed with the driver's error, no device), or the
// one-shot module failing to load (with its *ModuleLoadError and JIT log).
// The first call with a device opens it. After a device fault
// (MarkFailed) it returns the fault.
func (b *Backend) Available() error {
	if err := b.Failed(); err != nil {
		return err
	}
	_, err := b.device()
	return err
}

// JITLog returns the JIT info log of the one-shot kernels (register and
// spill counts), or an empty log without a device.
func (b *Backend) JITLog() JITLog {
	d, err := b.device()
	if err != nil {
		return JITLog{}
	}
	return d.jitLog
}

// Supports reports whether the backend can run spec for dt: a built-in
// kernel of kernels/oneshot.cu for f32 or f64, or a spec that carries a
// CUDA implementation; false without a usable device.
func (b *Backend) Supports(spec *gpu.KernelSpec, dt gpu.DType) bool {
	if spec == nil || b.Available() != nil {
		return false
	}
	if spec.Device[string(gpu.KindCUDA)] != nil {
		return spec.Supports(dt)
	}
	_, ok := builtinFor(spec, dt)
	return ok
}

// Execute runs spec on the device: its CUDA function if the spec carries
// one, else the built-in kernel. The inputs and the output are moved to
// device memory (copies only of what the host changed) and the output is
// left there, marked device-dirty: the host reads it with EnsureOnHost
// (or ToSlice). Errors are *gpu.DeviceError (of the driver error's kind:
// out of memory, failed, unavailable) or *gpu.ArgumentError.
func (b *Backend) Execute(ctx context.Context, spec *gpu.KernelSpec, in []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer, scalars []float64) error {
	return b.ExecuteBatch(ctx, spec, [][]*gpu.UnifiedBuffer{in}, []*gpu.UnifiedBuffer{out}, scalars)
}

// ExecuteBatch runs spec on every item in one hand-off to the device's
// thread with one stream synchronisation. Running out of device memory is
// a *gpu.DeviceError of kind DeviceOutOfMemory (the orchestrator splits the
// batch); items already run keep their results.
func (b *Backend) ExecuteBatch(ctx context.Context, spec *gpu.KernelSpec, items [][]*gpu.UnifiedBuffer, outs []*gpu.UnifiedBuffer, scalars []float64) error {
	d, err := b.device()
	if err != nil {
		return err
	}
	if spec == nil {
		return &gpu.ArgumentError{Arg: "spec", Reason: "nil kernel spec", Err: gpu.ErrArgument}
	}
	if f := spec.Device[string(gpu.KindCUDA)]; f != nil {
		if len(items) != len(outs) {
			return argErr(spec, "outputs", "%d items, %d outputs", len(items), len(outs))
		}
		for i, in := range items {
			if err := f(ctx, in, outs[i], scalars); err != nil {
				return err
			}
		}
		return nil
	}
	var dt gpu.DType
	if len(items) > 0 && len(items[0]) > 0 && items[0][0] != nil {
		dt = items[0][0].DType()
	}
	op, ok := builtinFor(spec, dt)
	if !ok {
		return &gpu.DeviceError{Kind: gpu.DeviceUnavailable, Backend: BackendName, Reason: fmt.Sprintf("kernel %q for %s", spec.Name, dt), Err: ErrNoDeviceKernels}
	}
	return d.execute(ctx, spec, op, items, outs, scalars)
}

// Allocator returns the backend's device allocator (cuMemAlloc, with
// pinned staging for copies). It is never nil; without a usable device its
// Alloc returns the error of Available.
func (b *Backend) Allocator() gpu.Allocator { return b.alloc }

// Close synchronises and releases the device (modules, stream, staging
// buffers) and stops its thread. Device memory still held by buffers can
// no longer be freed through it (Free returns an error). Later calls of
// the backend report it unavailable.
func (b *Backend) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	var opened bool
	b.devOnce.Do(func() { b.devErr = unavailable("the backend is closed") })
	opened = b.dev != nil
	if !opened {
		return nil
	}
	return b.dev.Close()
}

// CheckPersistent reports whether the device may run a persistent ring
// kernel: nil, the error of Available, or a *WatchdogError when the device
// has a kernel execution timeout (a display GPU's watchdog would kill a
// kernel that never returns). One-shot kernels run on such a device all
// the same.
func (b *Backend) CheckPersistent() error {
	d, err := b.device()
	if err != nil {
		return err
	}
	if d.Attrs.KernelExecTimeout {
		return &WatchdogError{Device: d.Ordinal}
	}
	if !d.Attrs.CanMapHostMemory {
		return &gpu.DeviceError{Kind: gpu.DeviceUnavailable, Backend: BackendName, Device: d.Ordinal,
			Reason: "the device cannot map pinned host memory (CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY = 0), which ring kernels need"}
	}
	return nil
}
