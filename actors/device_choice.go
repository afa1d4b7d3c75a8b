package actors

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/lifecycle"
)

// WithDevice pins a device ring kernel (NewDeviceRingKernel,
// NewDeviceKernel) to device i of its runtime: the i-th of
// Runtime.Devices, counted from 0. Without it each launch goes to the
// device with the fewest mailboxes (cuda.Backend.MailboxStats). A pinned
// device that the runtime lacks, that cannot load the program or that
// faulted runs the kernel's fallback, as a kernel without a device does
// (Placement says PlacementCPU and the log says why). Other kernels ignore
// it; a negative i is no pin.
func WithDevice(i int) KernelOption {
	return func(o *kernelOptions) { o.pin = max(i, -1) + 1 }
}

// deviceSet is a runtime's CUDA devices for device ring kernels: every
// CUDA backend of its selector and, beside its own backend of device 0,
// one of its own for every further device the driver lists.
type deviceSet struct {
	once    sync.Once
	all     []*cuda.Backend // every CUDA backend, in selector order
	usable  []*cuda.Backend // those that could run ring kernels when first asked (Devices)
	owned   []*cuda.Backend // the extra devices' backends, closed with the runtime
	mu      sync.Mutex
	pending map[*cuda.Backend]int // mailboxes being opened now, counted as load
}

// ringBackends returns the runtime's CUDA backends, the extra devices'
// backends created at the first call (which probes the driver).
func (rt *Runtime) ringBackends() []*cuda.Backend {
	ds := &rt.devs
	ds.once.Do(func() {
		// The first CUDA backend is the orchestrator's own, of device 0:
		// beside it, a backend for every further device the driver lists
		// that no backend given with WithBackends opens already.
		var first *cuda.Backend
		have := map[int]bool{}
		for _, b := range rt.backends.Backends() {
			cb, ok := b.(*cuda.Backend)
			if !ok {
				continue
			}
			ds.all = append(ds.all, cb)
			if strings.HasPrefix(cb.Name(), cuda.BackendName+":sim") {
				continue
			}
			have[cb.Ordinal()] = true
			if first == nil {
				first = cb
			}
		}
		if first != nil {
			for i := 1; i < len(first.Report().Devices); i++ {
				if have[i] {
					continue
				}
				extra := cuda.NewBackend(cuda.WithOrdinal(i))
				ds.owned = append(ds.owned, extra)
				ds.all = append(ds.all, extra)
			}
		}
		for _, cb := range ds.all {
			if cb.Available() == nil && cb.CheckPersistent() == nil {
				ds.usable = append(ds.usable, cb)
			}
		}
		ds.pending = map[*cuda.Backend]int{}
	})
	return ds.all
}

// Devices returns the runtime's CUDA backends that could run device ring
// kernels when it was first asked (or a device ring kernel was first
// registered): one per device, in order — the runtime's own device 0 and
// every further device the driver lists, then the backends given with
// WithBackends (e.g. simdevice.NewBackends). WithDevice(i) pins a
// kernel to the i-th. A device that faults later stays in the list.
func (rt *Runtime) Devices() []*cuda.Backend {
	rt.ringBackends()
	return slices.Clone(rt.devs.usable)
}

// closeDevices closes the backends the runtime opened for its extra
// devices.
func (rt *Runtime) closeDevices() error {
	var errs []error
	for _, b := range rt.devs.owned {
		if err := b.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing backend %s: %w", b.Name(), err))
		}
	}
	return errors.Join(errs...)
}

// launch opens a mailbox of the program's grid for a kernel, its rings of
// capacity slots (0: the mailbox's default): on its pinned
// device (pin > 0: Devices()[pin-1]), or else on the device the program is
// loaded on with the fewest mailboxes (ties: the first); when that fails,
// on the next. It says why when the kernel runs nowhere.
func (p *deviceProgram) launch(rt *Runtime, pin, capacity int) (*cuda.RingKernel, *cuda.Backend, error) {
	var why error = errors.New("the runtime has no CUDA backend")
	candidates := rt.ringBackends()
	if pin > 0 {
		devs := rt.Devices()
		if pin > len(devs) {
			return nil, nil, fmt.Errorf("pinned to device %d: the runtime has %d usable CUDA devices", pin-1, len(devs))
		}
		candidates = devs[pin-1 : pin]
	}
	type option struct {
		b    *cuda.Backend
		prog *cuda.RingProgram
		load int
	}
	var opts []option
	for _, cb := range candidates {
		p.mu.Lock()
		prog, reason := p.loaded[cb], p.why[cb]
		p.mu.Unlock()
		if prog == nil {
			if reason != nil {
				why = fmt.Errorf("%s: %w", cb.Name(), reason)
			}
			continue
		}
		if err := cb.Failed(); err != nil {
			why = err
			continue
		}
		opts = append(opts, option{b: cb, prog: prog})
	}
	ds := &rt.devs
	for len(opts) > 0 {
		// The loads are read under the set's lock with the mailboxes being
		// opened counted, so kernels launched at once spread out.
		ds.mu.Lock()
		if len(opts) > 1 {
			for i := range opts {
				opts[i].load = opts[i].b.MailboxStats().Mailboxes + ds.pending[opts[i].b]
			}
		}
		best := 0
		for i := range opts {
			if opts[i].load < opts[best].load {
				best = i
			}
		}
		o := opts[best]
		ds.pending[o.b]++
		ds.mu.Unlock()
		k, err := o.b.OpenMailbox(o.prog, cuda.RingConfig{Threads: p.threads, Capacity: capacity})
		ds.mu.Lock()
		ds.pending[o.b]--
		ds.mu.Unlock()
		if err == nil {
			return k, o.b, nil
		}
		why = fmt.Errorf("%s: %w", o.b.Name(), err)
		opts = slices.Delete(opts, best, best+1)
	}
	return nil, nil, why
}

// DeviceKernels counts the runtime's live kernels by placement: device
// name ("cuda:sim1") or PlacementCPU for device ring kernels on their
// fallback. Kernels without a device program are not counted.
func (rt *Runtime) DeviceKernels() map[string]int {
	out := map[string]int{}
	for _, id := range rt.Kernels() {
		k, err := rt.lookup(id)
		if err != nil {
			continue
		}
		if d, ok := k.(interface{ hasDevice() bool }); !ok || !d.hasDevice() {
			continue
		}
		if st := k.state(); st != lifecycle.Terminated && st != lifecycle.Created {
			out[k.stats().Backend]++
		}
	}
	return out
}

// hasDevice reports whether the kernel has a device program.
func (k *kernel[Req, Resp]) hasDevice() bool { return k.def.prog != nil }
