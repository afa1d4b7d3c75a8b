//go:build linux && cgo

package simdevice

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/cuda/hostsim"
)

// Device is a simulated CUDA device: it implements cuda.HostDevice (the
// driver API a cuda.Backend uses, cuda.DeviceAPI) with the simulated device
// of hostsim (see NewBackend):
// C-heap "device memory", the host-compiled kernels of kernels/*.cu, and
// streams that really are asynchronous (a goroutine each, running copies
// and launches in order), so a backend that reuses a staging buffer before
// synchronising, or reads a result too early, gets wrong data here as it
// would on a GPU. Module, function and stream handles point at Go objects.
type Device struct {
	sim   *hostsim.Device
	attrs map[cuda.DeviceAttribute]int

	mu        sync.Mutex
	streams   map[*fakeStream]bool
	modules   map[*fakeModule]bool
	loads     int                       // ModuleLoadData calls that succeeded
	hostFlags map[unsafe.Pointer]uint32 // live MemHostAlloc allocations
	failAlloc error                     // returned by MemAlloc when set

	hz          *hostsim.Hazards   // the hazard model (simhazard.go)
	profile     cuda.DeviceProfile // the hardware the model enforces (simdevice_profile.go)
	qmu         sync.Mutex         // a ticket and its command enter the stream together
	pool        fakePool           // the default memory pool
	noPool      bool               // no stream-ordered allocator: the backend's fallback
	asyncAllocs int                // MemAllocFromPoolAsync calls
	execBlocks  int                // blocks a ring program's launch runs at most (exec.go)
	execThreads int                // threads of each of its blocks

	funcRegs     map[string]int // registers per thread by entry name (funcattr.go; DefaultRegisters if absent)
	funcStatic   map[string]int // static shared memory by entry name (none if absent)
	prioLeast    int            // stream priorities (funcattr.go), when prioSet
	prioGreatest int
	prioSet      bool
}

type fakeModule struct{ image []byte }
type fakeFunc struct {
	name string
	prog *hostsim.Program // a user's ring program (simdevice_program.go); nil for the built-in kernels
	grid bool             // prog's persistent grid of mailboxes
	// state is what cuFuncSetAttribute set (funcattr.go), under Device.mu.
	state funcState
}
type fakeEvent struct {
	s    *fakeStream
	mu   sync.Mutex
	seq  int
	done bool
}

// fakeAttrs is a small device: 2 SMs of 512 threads, so launches have
// several blocks of 256 threads but stay cheap on host threads.
func fakeAttrs() map[cuda.DeviceAttribute]int {
	return map[cuda.DeviceAttribute]int{
		cuda.AttrMultiprocessorCount:         2,
		cuda.AttrMaxThreadsPerBlock:          1024,
		cuda.AttrMaxSharedMemoryPerBlock:     cuda.DefaultMaxDynamicShared,
		cuda.AttrMaxThreadsPerMultiprocessor: 512,
		cuda.AttrMaxGridDimX:                 1<<31 - 1,
		cuda.AttrMaxGridDimY:                 65535,
		cuda.AttrKernelExecTimeout:           0,
		cuda.AttrCanMapHostMemory:            1,
		cuda.AttrMemoryPoolsSupported:        1,
	}
}

// NewDevice returns a simulated device of mem bytes of memory, its
// hardware cuda.H100Profile, its hazard model in strict mode. A backend
// runs on it with NewBackendOn.
func NewDevice(mem uint64) *Device {
	f := &Device{sim: hostsim.NewDevice(mem), attrs: fakeAttrs(), streams: map[*fakeStream]bool{},
		modules: map[*fakeModule]bool{}, hostFlags: map[unsafe.Pointer]uint32{}, hz: hostsim.NewHazards()}
	f.SetProfile(cuda.H100Profile())
	return f
}

func fakeErr(call string, code cuda.Result, name, msg string) error {
	return &cuda.DriverError{Call: call, Code: int(code), Name: name, Message: msg}
}

var _ cuda.HostDevice = (*Device)(nil)

// DeviceGetAttribute is cuDeviceGetAttribute: the simulated attributes (fakeAttrs, SetAttribute).
func (f *Device) DeviceGetAttribute(attr cuda.DeviceAttribute, _ cuda.Device) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.attrs[attr]
	if !ok {
		return 0, fakeErr("cuDeviceGetAttribute", cuda.ErrInvalidValue, "CUDA_ERROR_INVALID_VALUE", "attribute not simulated")
	}
	return v, nil
}

// SetAttribute makes the device report v for attr (a test's device with a
// kernel execution timeout, say).
func (f *Device) SetAttribute(attr cuda.DeviceAttribute, v int) {
	f.mu.Lock()
	f.attrs[attr] = v
	f.mu.Unlock()
}

// MemGetInfo is cuMemGetInfo: the simulated memory's free and total bytes.
func (f *Device) MemGetInfo() (free, total uint64, err error) {
	_, used := f.sim.Used()
	return f.sim.TotalMem() - used, f.sim.TotalMem(), nil
}

// MemAlloc is cuMemAlloc: device memory from the C heap (a launch barrier in the hazard model).
func (f *Device) MemAlloc(n uint64) (cuda.DevicePtr, error) {
	if err := f.hz.Call("cuMemAlloc_v2"); err != nil {
		return 0, err
	}
	return f.allocDevice("cuMemAlloc_v2", n)
}

// allocDevice is the device allocation of MemAlloc and
// MemAllocFromPoolAsync, failing with failAlloc when it is set.
func (f *Device) allocDevice(call string, n uint64) (cuda.DevicePtr, error) {
	f.mu.Lock()
	inj := f.failAlloc
	f.mu.Unlock()
	if inj != nil {
		return 0, inj
	}
	p, err := f.sim.Alloc(n)
	if errors.Is(err, hostsim.ErrDeviceOutOfMemory) {
		return 0, fakeErr(call, cuda.ErrOutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory")
	}
	if err != nil {
		return 0, fakeErr(call, cuda.ErrInvalidValue, "CUDA_ERROR_INVALID_VALUE", err.Error())
	}
	return cuda.DevicePtr(p), nil
}

// MemFree is cuMemFree (synchronising in the hazard model).
func (f *Device) MemFree(p cuda.DevicePtr) error {
	if err := f.hz.Call("cuMemFree_v2"); err != nil {
		return err
	}
	if err := f.sim.Free(uint64(p)); err != nil {
		return fakeErr("cuMemFree_v2", cuda.ErrInvalidValue, "CUDA_ERROR_INVALID_VALUE", err.Error())
	}
	return nil
}

// MemHostAlloc is cuMemHostAlloc: pinned host memory (a launch barrier in the hazard model).
func (f *Device) MemHostAlloc(n uint64, flags uint32) (unsafe.Pointer, error) {
	if err := f.hz.Call("cuMemHostAlloc"); err != nil {
		return nil, err
	}
	p, err := f.sim.HostAlloc(n)
	if err != nil {
		return nil, fakeErr("cuMemHostAlloc", cuda.ErrOutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY", err.Error())
	}
	f.mu.Lock()
	f.hostFlags[p] = flags
	f.mu.Unlock()
	return p, nil
}

// MemFreeHost is cuMemFreeHost (synchronising in the hazard model).
func (f *Device) MemFreeHost(p unsafe.Pointer) error {
	if err := f.hz.Call("cuMemFreeHost"); err != nil {
		return err
	}
	f.mu.Lock()
	delete(f.hostFlags, p)
	f.mu.Unlock()
	if err := f.sim.HostFree(p); err != nil {
		return fakeErr("cuMemFreeHost", cuda.ErrInvalidValue, "CUDA_ERROR_INVALID_VALUE", err.Error())
	}
	return nil
}

// MemHostGetDevicePointer is cuMemHostGetDevicePointer: the device address of pinned memory allocated with DEVICEMAP.
func (f *Device) MemHostGetDevicePointer(p unsafe.Pointer, flags uint32) (cuda.DevicePtr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for base, fl := range f.hostFlags {
		if base == p && fl&cuda.MemHostAllocDeviceMap == 0 {
			return 0, fakeErr("cuMemHostGetDevicePointer_v2", cuda.ErrInvalidValue, "CUDA_ERROR_INVALID_VALUE", "memory not allocated with DEVICEMAP")
		}
	}
	if flags != 0 {
		return 0, fakeErr("cuMemHostGetDevicePointer_v2", cuda.ErrInvalidValue, "CUDA_ERROR_INVALID_VALUE", "flags must be 0")
	}
	dp, err := f.sim.DevicePointer(p)
	if err != nil {
		return 0, fakeErr("cuMemHostGetDevicePointer_v2", cuda.ErrInvalidValue, "CUDA_ERROR_INVALID_VALUE", err.Error())
	}
	return cuda.DevicePtr(dp), nil
}

// MemcpyHtoDAsync is cuMemcpyHtoDAsync: the copy runs when s reaches it.
func (f *Device) MemcpyHtoDAsync(dst cuda.DevicePtr, src unsafe.Pointer, n uint64, s cuda.Stream) error {
	if err := f.hz.Enqueue("cuMemcpyHtoDAsync_v2", streamID(s)); err != nil {
		return err
	}
	return f.submit("cuMemcpyHtoDAsync_v2", s, nil, func() error { return f.sim.CopyIn(uint64(dst), src, n) })
}

// MemcpyDtoHAsync is cuMemcpyDtoHAsync: the copy runs when s reaches it.
func (f *Device) MemcpyDtoHAsync(dst unsafe.Pointer, src cuda.DevicePtr, n uint64, s cuda.Stream) error {
	if err := f.hz.Enqueue("cuMemcpyDtoHAsync_v2", streamID(s)); err != nil {
		return err
	}
	return f.submit("cuMemcpyDtoHAsync_v2", s, nil, func() error { return f.sim.CopyOut(dst, uint64(src), n) })
}

// ModuleLoadData is cuModuleLoadDataEx of PTX (synchronising in the hazard model); the image's kernels run their host builds.
func (f *Device) ModuleLoadData(image []byte, _ bool) (cuda.Module, cuda.JITLog, error) {
	if err := f.hz.Call("cuModuleLoadDataEx"); err != nil {
		return cuda.Module{}, cuda.JITLog{}, err
	}
	if !bytes.Contains(image, []byte(".version")) || !bytes.Contains(image, []byte(".entry")) {
		log := cuda.JITLog{Error: "ptxas application ptx input, line 1; fatal   : Parsing error near 'garbage': syntax error"}
		return cuda.Module{}, log, fakeErr("cuModuleLoadDataEx", cuda.ErrInvalidPTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed")
	}
	m := &fakeModule{image: image}
	f.mu.Lock()
	f.modules[m] = true
	f.loads++
	f.mu.Unlock()
	return cuda.ModuleFromRaw(unsafe.Pointer(m)), cuda.JITLog{Info: "ptxas info    : simulated"}, nil
}

// ModuleGetFunction is cuModuleGetFunction: a kernel of m that the simulator has a host build of.
func (f *Device) ModuleGetFunction(m cuda.Module, name string) (cuda.Function, error) {
	f.mu.Lock()
	ok := f.modules[(*fakeModule)(m.Raw())]
	f.mu.Unlock()
	if !ok {
		return cuda.Function{}, fakeErr("cuModuleGetFunction", cuda.ErrInvalidHandle, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle")
	}
	if _, ok := f.sim.KernelParams(name); !ok || !bytes.Contains((*fakeModule)(m.Raw()).image, []byte(".entry "+name+"(")) {
		return cuda.Function{}, fakeErr("cuModuleGetFunction", cuda.ErrNotFound, "CUDA_ERROR_NOT_FOUND", "named symbol not found")
	}
	return cuda.FunctionFromRaw(unsafe.Pointer(&fakeFunc{name: name})), nil
}

// ModuleUnload is cuModuleUnload (synchronising in the hazard model).
func (f *Device) ModuleUnload(m cuda.Module) error {
	if err := f.hz.Call("cuModuleUnload"); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.modules[(*fakeModule)(m.Raw())] {
		return fakeErr("cuModuleUnload", cuda.ErrInvalidHandle, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle")
	}
	delete(f.modules, (*fakeModule)(m.Raw()))
	return nil
}

// LaunchKernel is cuLaunchKernel: the launch runs on s's goroutine, its
// grid's residency (blocks, threads, the function's registers and its
// static and the launch's dynamic shared memory) counted by the hazard
// model. Dynamic shared memory above the function's
// FuncAttrMaxDynamicSharedSizeBytes is CUDA_ERROR_INVALID_VALUE.
func (f *Device) LaunchKernel(fn cuda.Function, grid, block cuda.Dim3, smem uint32, s cuda.Stream, args ...uint64) error {
	if fn.IsNil() {
		return fakeErr("cuLaunchKernel", cuda.ErrInvalidHandle, "CUDA_ERROR_INVALID_HANDLE", "nil function")
	}
	name := (*fakeFunc)(fn.Raw()).name
	g, b := grid.Norm(), block.Norm()
	a := append([]uint64(nil), args...) // the driver copies the parameters before returning
	if b.X*b.Y*b.Z > 1024 {
		return fakeErr("cuLaunchKernel", cuda.ErrInvalidValue, "CUDA_ERROR_INVALID_VALUE", "block too large")
	}
	f.mu.Lock()
	regs, static, maxDyn := f.funcFigures((*fakeFunc)(fn.Raw()))
	f.mu.Unlock()
	if int(smem) > maxDyn {
		return fakeErr("cuLaunchKernel", cuda.ErrInvalidValue, "CUDA_ERROR_INVALID_VALUE",
			fmt.Sprintf("%d bytes of dynamic shared memory, the function allows %d (FuncAttrMaxDynamicSharedSizeBytes)", smem, maxDyn))
	}
	if _, err := f.stream(s); err != nil {
		return err
	}
	prog := (*fakeFunc)(fn.Raw()).prog
	shape := hostsim.Grid{Blocks: int(g.X * g.Y * g.Z), Threads: int(b.X * b.Y * b.Z), SharedMem: int(smem) + static, Registers: regs}
	tr, err := f.hz.BeginGrid(streamID(s), name, shape, a) // in flight until the kernel returns
	if errors.Is(err, hostsim.ErrOutOfResources) {
		return fakeErr("cuLaunchKernel", cuda.ErrLaunchOutOfResources, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", err.Error())
	}
	if err != nil {
		return err
	}
	err = f.submit("cuLaunchKernel", s, tr, func() error {
		launch := func() error {
			return f.sim.LaunchSmem(name, [3]uint32{g.X, g.Y, g.Z}, [3]uint32{b.X, b.Y, b.Z}, smem, a)
		}
		if prog != nil {
			g, b := f.execShape(g, b) // residency counts the real shape (above)
			launch = func() error {
				return f.sim.LaunchProgram(prog, [3]uint32{g.X, g.Y, g.Z}, [3]uint32{b.X, b.Y, b.Z}, smem, a)
			}
			if (*fakeFunc)(fn.Raw()).grid {
				launch = func() error {
					if g.Y*g.Z != 1 {
						return fmt.Errorf("%w: grid %v", hostsim.ErrBadLaunch, g)
					}
					return f.sim.LaunchGrid(prog, g.X, [3]uint32{b.X, b.Y, b.Z}, smem, a)
				}
			}
		}
		if err := launch(); err != nil {
			return fakeErr("cuLaunchKernel", cuda.ErrLaunchFailed, "CUDA_ERROR_LAUNCH_FAILED", err.Error())
		}
		return nil
	})
	if err != nil {
		f.hz.End(tr)
	}
	return err
}

// StreamCreate is cuStreamCreate: a stream with a goroutine of its own.
func (f *Device) StreamCreate(uint32) (cuda.Stream, error) {
	s := newFakeStream()
	f.mu.Lock()
	f.streams[s] = true
	f.mu.Unlock()
	f.hz.StreamCreated(streamID(cuda.StreamFromRaw(unsafe.Pointer(s))))
	return cuda.StreamFromRaw(unsafe.Pointer(s)), nil
}

func (f *Device) stream(s cuda.Stream) (*fakeStream, error) {
	if s.IsDefault() {
		return nil, nil
	}
	fs := (*fakeStream)(s.Raw())
	f.mu.Lock()
	ok := f.streams[fs]
	f.mu.Unlock()
	if !ok {
		return nil, fakeErr("cuStream", cuda.ErrInvalidHandle, "CUDA_ERROR_INVALID_HANDLE", "destroyed stream")
	}
	return fs, nil
}

// Enqueue submits op as unnamed work on s: it runs on the stream's
// goroutine in order with the stream's copies and launches (a test's
// stand-in for a kernel that holds the stream), its error sticky as a
// launch's.
func (f *Device) Enqueue(s cuda.Stream, op func() error) error {
	return f.submit("stream work", s, nil, op)
}

// submit enqueues op, the command call, on s (a launch: tr is its
// tracked launch, ended here when op has run): the hazard model gives it
// its place in its hardware queue (Ticket) and the stream's goroutine
// dispatches it there (Dispatch) before running it. On the default stream
// op runs at once (the model's NULL-stream rule has been applied).
func (f *Device) submit(call string, s cuda.Stream, tr *hostsim.Tracked, op func() error) error {
	fs, err := f.stream(s)
	if err != nil {
		return err
	}
	if fs == nil {
		defer f.hz.End(tr)
		return op() // the default stream: synchronous here
	}
	f.qmu.Lock()
	defer f.qmu.Unlock()
	t, err := f.hz.Ticket(call, streamID(s), tr)
	if err != nil {
		return err
	}
	fs.enqueue(func() error {
		defer f.hz.End(tr)
		if err := f.hz.Dispatch(t); err != nil {
			return err
		}
		return op()
	})
	return nil
}

// StreamSynchronize is cuStreamSynchronize: it waits for s's work and returns its sticky error (the NULL stream: cuCtxSynchronize).
func (f *Device) StreamSynchronize(s cuda.Stream) error {
	fs, err := f.stream(s)
	if err != nil {
		return err
	}
	if fs == nil {
		return f.hz.Call("cuCtxSynchronize") // the legacy NULL stream waits for every stream
	}
	if err := f.hz.StreamSync("cuStreamSynchronize", streamID(s)); err != nil {
		return err
	}
	return fs.sync()
}

// StreamQuery answers as cuStreamQuery does: the stream's sticky error
// (a launch that failed, e.g. a kernel that trapped), not cleared; else
// CUDA_ERROR_NOT_READY while work is queued or running (a persistent ring
// kernel, until it returns); else nil. It waits for nothing.
func (f *Device) StreamQuery(s cuda.Stream) error {
	if err := f.hz.Call("cuStreamQuery"); err != nil {
		return err
	}
	fs, err := f.stream(s)
	if err != nil {
		return err
	}
	if fs == nil {
		return nil // the default stream runs synchronously here
	}
	return fs.query()
}

// query is StreamQuery of one stream.
func (s *fakeStream) query() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		var de *cuda.DriverError
		if errors.As(s.err, &de) {
			return &cuda.DriverError{Call: "cuStreamQuery", Code: de.Code, Name: de.Name, Message: de.Message}
		}
		return fakeErr("cuStreamQuery", cuda.ErrLaunchFailed, "CUDA_ERROR_LAUNCH_FAILED", s.err.Error())
	}
	if s.busy || len(s.queue) > 0 {
		return fakeErr("cuStreamQuery", cuda.ErrNotReady, "CUDA_ERROR_NOT_READY", "device not ready")
	}
	return nil
}

// StreamDestroy is cuStreamDestroy: it waits for s's queued work, then stops its goroutine.
func (f *Device) StreamDestroy(s cuda.Stream) error {
	fs, err := f.stream(s)
	if err != nil || fs == nil {
		return err
	}
	f.mu.Lock()
	delete(f.streams, fs)
	f.mu.Unlock()
	fs.close()
	f.hz.StreamDestroyed(streamID(s))
	return nil
}

// EventCreate is cuEventCreate.
func (f *Device) EventCreate(uint32) (cuda.Event, error) {
	return cuda.EventFromRaw(unsafe.Pointer(&fakeEvent{})), nil
}

// EventRecord is cuEventRecord: the event completes when s reaches it.
func (f *Device) EventRecord(e cuda.Event, s cuda.Stream) error {
	if err := f.hz.Enqueue("cuEventRecord", streamID(s)); err != nil {
		return err
	}
	ev := (*fakeEvent)(e.Raw())
	return f.submit("cuEventRecord", s, nil, func() error {
		ev.mu.Lock()
		ev.done = true
		ev.seq++
		ev.mu.Unlock()
		return nil
	})
}

// EventSynchronize is cuEventSynchronize.
func (f *Device) EventSynchronize(e cuda.Event) error {
	ev := (*fakeEvent)(e.Raw())
	if ev.s != nil {
		return ev.s.sync()
	}
	return nil
}

// EventElapsedTime is cuEventElapsedTime: always 0 on the simulated device.
func (f *Device) EventElapsedTime(start, end cuda.Event) (float32, error) { return 0, nil }

// EventDestroy is cuEventDestroy.
func (f *Device) EventDestroy(cuda.Event) error { return nil }

// Leaks reports what the device's users left allocated: device and
// pinned allocations, streams, modules ("" when nothing).
func (f *Device) Leaks() string {
	allocs, bytes := f.sim.Used()
	f.mu.Lock()
	defer f.mu.Unlock()
	if allocs == 0 && len(f.streams) == 0 && len(f.modules) == 0 && len(f.hostFlags) == 0 {
		return ""
	}
	return fmt.Sprintf("%d device allocations (%d bytes), %d streams, %d modules, %d pinned host allocations",
		allocs, bytes, len(f.streams), len(f.modules), len(f.hostFlags))
}

// fakeStream runs its operations in order on a goroutine of its own. The
// first failure sticks and is returned by the next sync, as CUDA reports
// asynchronous errors.
//
// An op counts as done (busy cleared, finished advanced) before anyone
// waiting for it is woken, so a sync that returns leaves the stream idle
// for StreamQuery, as cuStreamSynchronize does.
type fakeStream struct {
	mu       sync.Mutex
	cond     *sync.Cond // the loop waits for work
	idle     *sync.Cond // sync waits for finished to reach its mark
	queue    []func() error
	err      error
	busy     bool   // an op taken from queue is running
	enqueued uint64 // ops ever enqueued
	finished uint64 // ops ever completed (busy cleared)
	closed   bool
	done     chan struct{}
	priority int // cuStreamCreateWithPriority's (funcattr.go); 0 for StreamCreate's
}

func newFakeStream() *fakeStream {
	s := &fakeStream{done: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	s.idle = sync.NewCond(&s.mu)
	go s.loop()
	return s
}

func (s *fakeStream) loop() {
	defer close(s.done)
	for {
		s.mu.Lock()
		for len(s.queue) == 0 && !s.closed {
			s.cond.Wait()
		}
		if len(s.queue) == 0 {
			s.mu.Unlock()
			return
		}
		op := s.queue[0]
		s.queue = s.queue[1:]
		s.busy = true
		s.mu.Unlock()
		err := op()
		s.mu.Lock()
		if err != nil && s.err == nil {
			s.err = err
		}
		s.busy = false
		s.finished++
		s.mu.Unlock()
		s.idle.Broadcast()
	}
}

func (s *fakeStream) enqueue(op func() error) {
	s.mu.Lock()
	s.queue = append(s.queue, op)
	s.enqueued++
	s.mu.Unlock()
	s.cond.Signal()
}

// sync waits until every op enqueued before it has completed — counted
// done by the loop, not merely reached — and returns the sticky error,
// clearing it.
func (s *fakeStream) sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	mark := s.enqueued
	for s.finished < mark {
		s.idle.Wait()
	}
	err := s.err
	s.err = nil
	return err
}

// close waits for the queued work, then stops the goroutine.
func (s *fakeStream) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cond.Signal()
	<-s.done
}
