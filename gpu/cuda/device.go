package cuda

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/internal/devcore"
)

// deviceAttrs are the device attributes launch shapes and startup checks
// use.
type deviceAttrs struct {
	SMs                int  // multiprocessors
	MaxThreadsPerBlock int  // 1024 on every current GPU
	MaxThreadsPerSM    int  // 2048 on an H100
	MaxGridX           int  // 2^31-1
	MaxGridY           int  // 65535
	KernelExecTimeout  bool // a display watchdog limits kernel run time
	CanMapHostMemory   bool // cuMemHostAlloc(DEVICEMAP) works
}

func queryAttrs(api DeviceAPI, dev Device) (deviceAttrs, error) {
	var a deviceAttrs
	var timeout, canMap int
	for _, q := range []struct {
		attr DeviceAttribute
		dst  *int
	}{
		{AttrMultiprocessorCount, &a.SMs},
		{AttrMaxThreadsPerBlock, &a.MaxThreadsPerBlock},
		{AttrMaxThreadsPerMultiprocessor, &a.MaxThreadsPerSM},
		{AttrMaxGridDimX, &a.MaxGridX},
		{AttrMaxGridDimY, &a.MaxGridY},
		{AttrKernelExecTimeout, &timeout},
		{AttrCanMapHostMemory, &canMap},
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

// block1D is the block size of 1-D launches: 256 threads (the reduce
// kernels' maximum, a power of two), or the largest power of two the
// device allows if that is less.
func (a deviceAttrs) block1D() uint32 {
	b := min(256, a.MaxThreadsPerBlock)
	return uint32(1) << (bits.Len(uint(b)) - 1)
}

// grid1D is the grid of a grid-stride launch over n elements with blocks
// of block threads: enough blocks to cover n, at most as many as the
// device holds resident at once (SMs × blocks per SM), at least 1.
func (a deviceAttrs) grid1D(n uint64, block uint32) uint32 {
	perSM := max(1, a.MaxThreadsPerSM/int(block))
	limit := uint64(max(1, a.SMs*perSM))
	limit = min(limit, uint64(a.MaxGridX))
	g := (n + uint64(block) - 1) / uint64(block)
	return uint32(max(1, min(g, limit)))
}

// device is an open CUDA device: the context's thread, the one-shot
// module, the backend's stream and the pinned staging buffers.
//
// Fields below "thread-confined" are only used on the context's thread,
// inside run.Do, which serialises them; they need no lock.
type device struct {
	api     DeviceAPI
	run     runner
	ordinal int
	attrs   deviceAttrs
	profile DeviceProfile // what the device holds at once (profile.go)
	jitLog  JITLog        // the one-shot module's JIT info log (register use)
	alloc   *Allocator    // the backend's allocator, set once opened

	// thread-confined
	module  Module
	fns     map[string]Function
	stream  Stream
	staging map[int][]unsafe.Pointer // free pinned buffers by size class
	held    int                      // bytes in staging
	batch   *batch
	ptx     map[[32]byte]*ptxModule
	// hostProgs: the simulated device's loaded ring programs by source
	// hash (ptx's counterpart: LoadRingProgram loads a source once).
	hostProgs map[[32]byte]Function
	closed    bool
	mem       memState              // memory pool and pinned arena (device_alloc.go, arena.go)
	ep        devcore.Epochs        // live rings and the device epoch (epoch.go)
	grids     map[gridKey]*ringGrid // ring program grids (ring_grid.go)
}

// Staging: host → device copies go through pinned buffers, since the
// driver reads the source after the asynchronous call returns and Go
// memory may not be kept by C. The buffers come from the pinned arena and
// are kept for reuse up to stagingKeep bytes; copies larger than
// stagingChunk go in chunks.
const (
	stagingMinClass = 12       // 4 KiB
	stagingChunk    = 16 << 20 // bytes per staged copy
	stagingKeep     = 64 << 20 // bytes of staging kept for reuse
)

// batch collects, during one Do, what must wait for the stream: staging
// buffers of enqueued copies and device scratch memory of enqueued
// kernels. endBatch synchronises the stream, then releases them.
type batch struct {
	staging []unsafe.Pointer
	classes []int
	scratch []DevicePtr
}

// openDevice starts using dev on run's thread: it reads the attributes,
// creates the backend's stream, sets up the memory pool and reserves the
// pinned arena (arenaBytes, 0 for DefaultArenaBytes), loads OneShotPTX
// and resolves its entry points — all before any ring kernel can run (ring
// programs are loaded by LoadRingProgram). On failure everything is
// released, run is closed, and the error is a *gpu.DeviceError
// (DeviceUnavailable for a one-shot module that does not load, with the
// *ModuleLoadError inside).
func openDevice(api DeviceAPI, run runner, dev Device, ordinal int, arenaBytes uintptr) (*device, error) {
	d := &device{api: api, run: run, ordinal: ordinal, fns: map[string]Function{},
		staging: map[int][]unsafe.Pointer{}, ptx: map[[32]byte]*ptxModule{}, hostProgs: map[[32]byte]Function{}}
	d.ep.Wait = terminateWait
	err := run.Do(func() error {
		var err error
		if d.attrs, err = queryAttrs(api, dev); err != nil {
			return err
		}
		if d.stream, err = api.StreamCreate(StreamNonBlocking); err != nil {
			return err
		}
		if err := d.openMemory(dev, arenaBytes); err != nil {
			return err
		}
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
		_ = run.Do(d.release)
		_ = run.Close()
		return nil, deviceErr(ordinal, err)
	}
	return d, nil
}

// release frees what the device holds on the thread; it runs inside Do.
func (d *device) release() error {
	if d.closed {
		return nil
	}
	// Nothing below may run beside a ring: stop the rings first.
	errs := []error{d.stopRings()}
	d.closed = true
	if n := d.ep.Len(); n > 0 {
		// A ring that did not stop still runs: unloading modules or
		// freeing pinned memory would wait for it forever on a GPU, so
		// they are left to the context's destruction.
		return errors.Join(append(errs, fmt.Errorf("cuda: %d ring kernels did not stop; the device's modules and pinned memory are left loaded", n))...)
	}
	if !d.stream.IsDefault() {
		errs = append(errs, d.api.StreamSynchronize(d.stream))
	}
	clear(d.staging) // arena memory, freed with the arena
	for k, m := range d.ptx {
		errs = append(errs, d.api.ModuleUnload(m.mod))
		delete(d.ptx, k)
	}
	if !d.module.IsNil() {
		errs = append(errs, d.api.ModuleUnload(d.module))
		d.module = Module{}
	}
	if d.mem.arena != nil {
		errs = append(errs, d.mem.arena.Release(d.api)...)
	}
	if !d.stream.IsDefault() {
		errs = append(errs, d.api.StreamDestroy(d.stream))
		d.stream = Stream{}
	}
	return errors.Join(errs...)
}

// close releases the device and stops its thread.
func (d *device) close() error {
	err := d.run.Do(d.release)
	return errors.Join(err, d.run.Close())
}

// do runs fn on the device's thread, failing once the device is closed.
func (d *device) do(fn func() error) error {
	return d.run.Do(func() error {
		if d.closed {
			return unavailable("the backend is closed")
		}
		return fn()
	})
}

// inBatch runs fn (inside Do) with copies and scratch memory collected,
// then synchronises the stream and releases them. It nests: an inner
// inBatch joins the outer one.
func (d *device) inBatch(fn func() error) error {
	if d.batch != nil {
		return fn()
	}
	d.batch = &batch{}
	err := fn()
	serr := d.api.StreamSynchronize(d.stream)
	b := d.batch
	d.batch = nil
	var errs []error
	for i, p := range b.staging {
		errs = append(errs, d.putStaging(p, b.classes[i]))
	}
	for _, p := range b.scratch {
		errs = append(errs, d.devFree(p))
	}
	return errors.Join(err, serr, errors.Join(errs...))
}

// scratch allocates device memory that lives until the end of the batch.
func (d *device) scratch(bytes uint64) (DevicePtr, error) {
	p, err := d.devAlloc(bytes)
	if err != nil {
		return 0, err
	}
	d.batch.scratch = append(d.batch.scratch, p)
	return p, nil
}

func stagingClass(n int) int { return max(stagingMinClass, bits.Len(uint(n-1))) }

// getStaging returns a pinned buffer of at least n bytes and its class.
func (d *device) getStaging(n int) (unsafe.Pointer, int, error) {
	c := stagingClass(n)
	if l := d.staging[c]; len(l) > 0 {
		p := l[len(l)-1]
		d.staging[c] = l[:len(l)-1]
		d.held -= 1 << c
		return p, c, nil
	}
	p, _, err := d.pinned(1 << c)
	return p, c, err
}

// putStaging keeps a staging buffer for reuse, or frees it.
func (d *device) putStaging(p unsafe.Pointer, class int) error {
	if d.closed || d.held+(1<<class) > stagingKeep {
		return d.unpinned(p)
	}
	d.staging[class] = append(d.staging[class], p)
	d.held += 1 << class
	return nil
}

// copyIn copies src to device memory dst on the backend's stream, through
// staging (inside Do). Inside a batch a single-chunk copy is left
// enqueued; otherwise it waits for each chunk.
func (d *device) copyIn(dst DevicePtr, src []byte) error {
	for off := 0; off < len(src); off += stagingChunk {
		n := min(stagingChunk, len(src)-off)
		p, class, err := d.getStaging(n)
		if err != nil {
			return err
		}
		copy(unsafe.Slice((*byte)(p), n), src[off:off+n])
		if err := d.api.MemcpyHtoDAsync(dst+DevicePtr(off), p, uint64(n), d.stream); err != nil {
			return errors.Join(err, d.putStaging(p, class))
		}
		if d.batch != nil && len(src) <= stagingChunk {
			d.batch.staging = append(d.batch.staging, p)
			d.batch.classes = append(d.batch.classes, class)
			continue
		}
		if err := d.api.StreamSynchronize(d.stream); err != nil {
			return err // the staging buffer may still be read: leak it
		}
		if err := d.putStaging(p, class); err != nil {
			return err
		}
	}
	return nil
}

// copyOut copies device memory src to dst through staging (inside Do),
// waiting for the stream (and so for the kernels enqueued before).
func (d *device) copyOut(dst []byte, src DevicePtr) error {
	for off := 0; off < len(dst); off += stagingChunk {
		n := min(stagingChunk, len(dst)-off)
		p, class, err := d.getStaging(n)
		if err != nil {
			return err
		}
		if err := d.api.MemcpyDtoHAsync(p, src+DevicePtr(off), uint64(n), d.stream); err != nil {
			return errors.Join(err, d.putStaging(p, class))
		}
		if err := d.api.StreamSynchronize(d.stream); err != nil {
			return err // the copy may still write the buffer: leak it
		}
		copy(dst[off:off+n], unsafe.Slice((*byte)(p), n))
		if err := d.putStaging(p, class); err != nil {
			return err
		}
	}
	return nil
}

// Allocator is the CUDA backend's gpu.Allocator: device memory from the
// stream-ordered allocator on the backend's stream (cuMemAllocFromPoolAsync;
// cuMemAlloc in a device epoch without one, see device_alloc.go), copied
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
	err = d.do(func() error {
		var err error
		p, err = d.devAlloc(uint64(bytes))
		return err
	})
	if err != nil {
		return nil, deviceErr(d.ordinal, err)
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
	return deviceErr(m.d.ordinal, m.d.do(func() error { return m.d.copyIn(m.ptr, src) }))
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
	return deviceErr(m.d.ordinal, m.d.do(func() error { return m.d.copyOut(dst, m.ptr) }))
}

// Free releases the allocation after the work enqueued on the backend's
// stream, without waiting for it (cuMemFreeAsync; see device_alloc.go for
// the fallback). A second call returns nil.
func (m *DeviceMemory) Free() error {
	if m.freed {
		return nil
	}
	m.freed = true
	return deviceErr(m.d.ordinal, m.d.do(func() error { return m.d.devFree(m.ptr) }))
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
