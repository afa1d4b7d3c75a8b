package cuda

import (
	"context"
	"fmt"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/internal/devcore"
	"github.com/ringactor/ringactor/gpu/cuda/internal/ringrt"
)

// device is an open CUDA device: the device core (devcore.Device: the
// context's thread, attributes, the backend's stream, staging, the
// allocator, batches, modules and epochs), the ring runtime on it
// (package ringrt) and what the one-shot backend keeps beside them.
//
// Fields below "thread-confined" are only used on the context's thread,
// inside Do, which serialises them; they need no lock.
type device struct {
	*devcore.Device
	profile DeviceProfile   // what the device holds at once (profile.go)
	jitLog  JITLog          // the one-shot module's JIT info log (register use)
	alloc   *Allocator      // the backend's allocator, set once opened
	rt      *ringrt.Runtime // the ring runtime, set once opened

	// thread-confined
	module Module
	fns    map[string]Function
}

// openDevice starts using dev on run's thread (devcore.Open: attributes,
// the backend's stream, the memory pool, the pinned arena of arenaBytes, 0
// for DefaultArenaBytes), loads OneShotPTX and resolves its entry points —
// all before any ring kernel can run (ring programs are loaded by
// LoadRingProgram). On failure everything is released, run is closed, and
// the error is a *gpu.DeviceError (DeviceUnavailable for a one-shot module
// that does not load, with the *ModuleLoadError inside).
func openDevice(api DeviceAPI, run runner, dev Device, ordinal int, arenaBytes uintptr) (*device, error) {
	core, err := devcore.Open(api, run, dev, ordinal, arenaBytes)
	if err != nil {
		_ = run.Close()
		return nil, deviceErr(ordinal, err)
	}
	d := &device{Device: core, fns: map[string]Function{}}
	d.OnRelease = d.unloadOneShot
	err = d.Do(func() error {
		mod, log, err := api.ModuleLoadData(OneShotPTX, true)
		d.jitLog = log
		if err != nil {
			return &gpu.DeviceError{Kind: gpu.DeviceUnavailable, Backend: BackendName, Device: ordinal,
				Reason: "the one-shot kernels do not load", Err: &ModuleLoadError{Image: "oneshot", Log: log, Err: err}}
		}
		d.module = mod
		for _, name := range oneShotEntries() {
			f, err := api.ModuleGetFunction(mod, name)
			if err != nil {
				return fmt.Errorf("cuda: one-shot entry %s: %w", name, err)
			}
			d.fns[name] = f
		}
		return nil
	})
	if err != nil {
		_ = d.Close()
		return nil, deviceErr(ordinal, err)
	}
	return d, nil
}

// unloadOneShot unloads the one-shot module as the device closes (inside
// Do, after the rings stopped).
func (d *device) unloadOneShot() []error {
	if d.module.IsNil() {
		return nil
	}
	err := d.API.ModuleUnload(d.module)
	d.module = Module{}
	return []error{err}
}

// Allocator is the CUDA backend's gpu.Allocator: device memory from the
// stream-ordered allocator on the backend's stream (cuMemAllocFromPoolAsync;
// cuMemAlloc in a device epoch without one, see devcore.Device.DevAlloc), copied
// through pinned staging buffers on the backend's stream. Obtain it from [Backend.Allocator]. Without a usable device its
// Alloc returns the backend's DeviceUnavailable error.
type Allocator struct {
	name string
	dev  func() (*device, error)
}

var _ gpu.Allocator = (*Allocator)(nil)

// Name is the backend's name, "cuda:0".
func (a *Allocator) Name() string { return a.name }

// Alloc allocates bytes (> 0) of device memory. Running out is a
// *gpu.DeviceError of kind DeviceOutOfMemory.
func (a *Allocator) Alloc(ctx context.Context, bytes int) (gpu.DeviceMemory, error) {
	d, err := a.dev()
	if err != nil {
		return nil, err
	}
	if bytes <= 0 {
		return nil, &gpu.MemoryError{Op: "Alloc", Reason: fmt.Sprintf("%s: %d bytes", a.name, bytes)}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var p DevicePtr
	err = d.Do(func() error {
		var err error
		p, err = d.DevAlloc(uint64(bytes))
		return err
	})
	if err != nil {
		return nil, deviceErr(d.Ordinal, err)
	}
	return &DeviceMemory{d: d, ptr: p, size: bytes}, nil
}

// DeviceMemory is one device allocation of the CUDA backend (a
// gpu.DeviceMemory).
type DeviceMemory struct {
	d     *device
	ptr   DevicePtr
	size  int
	freed bool
}

var _ gpu.DeviceMemory = (*DeviceMemory)(nil)

// Ptr is the allocation's device address.
func (m *DeviceMemory) Ptr() DevicePtr { return m.ptr }

// Size is the allocation's size in bytes.
func (m *DeviceMemory) Size() int { return m.size }

// CopyFromHost copies src to the start of the allocation and returns once
// src may be reused. Inside the backend's Execute the copy is only
// enqueued (its staging buffer is held until the stream is synchronised).
func (m *DeviceMemory) CopyFromHost(ctx context.Context, src []byte) error {
	if len(src) > m.size {
		return &gpu.MemoryError{Op: "CopyFromHost", Reason: fmt.Sprintf("%d bytes into an allocation of %d", len(src), m.size)}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return deviceErr(m.d.Ordinal, m.d.Do(func() error { return m.d.CopyIn(m.ptr, src) }))
}

// CopyToHost copies len(dst) bytes from the start of the allocation into
// dst, after the kernels already enqueued on the backend's stream.
func (m *DeviceMemory) CopyToHost(ctx context.Context, dst []byte) error {
	if len(dst) > m.size {
		return &gpu.MemoryError{Op: "CopyToHost", Reason: fmt.Sprintf("%d bytes from an allocation of %d", len(dst), m.size)}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return deviceErr(m.d.Ordinal, m.d.Do(func() error { return m.d.CopyOut(dst, m.ptr) }))
}

// Free releases the allocation after the work enqueued on the backend's
// stream, without waiting for it (cuMemFreeAsync; see devcore.Device.DevFree for
// the fallback). A second call returns nil.
func (m *DeviceMemory) Free() error {
	if m.freed {
		return nil
	}
	m.freed = true
	return deviceErr(m.d.Ordinal, m.d.Do(func() error { return m.d.DevFree(m.ptr) }))
}

// devicePtr returns the device address of buf's memory of this device,
// moving buf there first (inside Do, so the copy joins the batch).
func (d *device) devicePtr(ctx context.Context, buf *gpu.UnifiedBuffer) (DevicePtr, error) {
	mem, err := buf.EnsureOnDevice(ctx, d.alloc)
	if err != nil {
		return 0, err
	}
	dm, ok := mem.(*DeviceMemory)
	if !ok || dm.d != d {
		return 0, &gpu.MemoryError{Op: "EnsureOnDevice", Reason: "buffer holds device memory of another allocator"}
	}
	return dm.ptr, nil
}
