//go:build linux && cgo

package cuda

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/ringactor/ringactor/gpu/cuda/hostsim"
)

// fakeDevice implements deviceAPI with the simulated device of hostsim
// (see NewSimulatedBackend):
// C-heap "device memory", the host-compiled kernels of kernels/*.cu, and
// streams that really are asynchronous (a goroutine each, running copies
// and launches in order), so a backend that reuses a staging buffer before
// synchronising, or reads a result too early, gets wrong data here as it
// would on a GPU. Module, function and stream handles point at Go objects.
type fakeDevice struct {
	sim   *hostsim.Device
	attrs map[DeviceAttribute]int

	mu        sync.Mutex
	streams   map[*fakeStream]bool
	modules   map[*fakeModule]bool
	loads     int                       // ModuleLoadData calls that succeeded
	hostFlags map[unsafe.Pointer]uint32 // live MemHostAlloc allocations
	failAlloc error                     // returned by MemAlloc when set

	hz          *hostsim.Hazards // the hazard model (simhazard.go)
	profile     DeviceProfile    // the hardware the model enforces (simdevice_profile.go)
	qmu         sync.Mutex       // a ticket and its command enter the stream together
	pool        fakePool         // the default memory pool
	noPool      bool             // no stream-ordered allocator: the backend's fallback
	asyncAllocs int              // MemAllocFromPoolAsync calls
}

type fakeModule struct{ image []byte }
type fakeFunc struct {
	name string
	prog *hostsim.Program // a user's ring program (simdevice_program.go); nil for the built-in kernels
	grid bool             // prog's persistent grid of mailboxes
}
type fakeEvent struct {
	s    *fakeStream
	mu   sync.Mutex
	seq  int
	done bool
}

// fakeAttrs is a small device: 2 SMs of 512 threads, so launches have
// several blocks of 256 threads but stay cheap on host threads.
func fakeAttrs() map[DeviceAttribute]int {
	return map[DeviceAttribute]int{
		AttrMultiprocessorCount:         2,
		AttrMaxThreadsPerBlock:          1024,
		AttrMaxThreadsPerMultiprocessor: 512,
		AttrMaxGridDimX:                 1<<31 - 1,
		AttrMaxGridDimY:                 65535,
		AttrKernelExecTimeout:           0,
		AttrCanMapHostMemory:            1,
		AttrMemoryPoolsSupported:        1,
	}
}

func newFakeDevice(mem uint64) *fakeDevice {
	f := &fakeDevice{sim: hostsim.NewDevice(mem), attrs: fakeAttrs(), streams: map[*fakeStream]bool{},
		modules: map[*fakeModule]bool{}, hostFlags: map[unsafe.Pointer]uint32{}, hz: hostsim.NewHazards()}
	f.setProfile(H100Profile())
	return f
}

func fakeErr(call string, code Result, name, msg string) error {
	return &DriverError{Call: call, Code: int(code), Name: name, Message: msg}
}

var _ deviceAPI = (*fakeDevice)(nil)

func (f *fakeDevice) DeviceGetAttribute(attr DeviceAttribute, _ Device) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.attrs[attr]
	if !ok {
		return 0, fakeErr("cuDeviceGetAttribute", ErrInvalidValue, "CUDA_ERROR_INVALID_VALUE", "attribute not simulated")
	}
	return v, nil
}

func (f *fakeDevice) setAttr(attr DeviceAttribute, v int) {
	f.mu.Lock()
	f.attrs[attr] = v
	f.mu.Unlock()
}

func (f *fakeDevice) MemGetInfo() (free, total uint64, err error) {
	_, used := f.sim.Used()
	return f.sim.TotalMem() - used, f.sim.TotalMem(), nil
}

func (f *fakeDevice) MemAlloc(n uint64) (DevicePtr, error) {
	if err := f.hz.Call("cuMemAlloc_v2"); err != nil {
		return 0, err
	}
	return f.allocDevice("cuMemAlloc_v2", n)
}

// allocDevice is the device allocation of MemAlloc and
// MemAllocFromPoolAsync, failing with failAlloc when it is set.
func (f *fakeDevice) allocDevice(call string, n uint64) (DevicePtr, error) {
	f.mu.Lock()
	inj := f.failAlloc
	f.mu.Unlock()
	if inj != nil {
		return 0, inj
	}
	p, err := f.sim.Alloc(n)
	if errors.Is(err, hostsim.ErrDeviceOutOfMemory) {
		return 0, fakeErr(call, ErrOutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory")
	}
	if err != nil {
		return 0, fakeErr(call, ErrInvalidValue, "CUDA_ERROR_INVALID_VALUE", err.Error())
	}
	return DevicePtr(p), nil
}

func (f *fakeDevice) MemFree(p DevicePtr) error {
	if err := f.hz.Call("cuMemFree_v2"); err != nil {
		return err
	}
	if err := f.sim.Free(uint64(p)); err != nil {
		return fakeErr("cuMemFree_v2", ErrInvalidValue, "CUDA_ERROR_INVALID_VALUE", err.Error())
	}
	return nil
}

func (f *fakeDevice) MemHostAlloc(n uint64, flags uint32) (unsafe.Pointer, error) {
	if err := f.hz.Call("cuMemHostAlloc"); err != nil {
		return nil, err
	}
	p, err := f.sim.HostAlloc(n)
	if err != nil {
		return nil, fakeErr("cuMemHostAlloc", ErrOutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY", err.Error())
	}
	f.mu.Lock()
	f.hostFlags[p] = flags
	f.mu.Unlock()
	return p, nil
}

func (f *fakeDevice) MemFreeHost(p unsafe.Pointer) error {
	if err := f.hz.Call("cuMemFreeHost"); err != nil {
		return err
	}
	f.mu.Lock()
	delete(f.hostFlags, p)
	f.mu.Unlock()
	if err := f.sim.HostFree(p); err != nil {
		return fakeErr("cuMemFreeHost", ErrInvalidValue, "CUDA_ERROR_INVALID_VALUE", err.Error())
	}
	return nil
}

func (f *fakeDevice) MemHostGetDevicePointer(p unsafe.Pointer, flags uint32) (DevicePtr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for base, fl := range f.hostFlags {
		if base == p && fl&MemHostAllocDeviceMap == 0 {
			return 0, fakeErr("cuMemHostGetDevicePointer_v2", ErrInvalidValue, "CUDA_ERROR_INVALID_VALUE", "memory not allocated with DEVICEMAP")
		}
	}
	if flags != 0 {
		return 0, fakeErr("cuMemHostGetDevicePointer_v2", ErrInvalidValue, "CUDA_ERROR_INVALID_VALUE", "flags must be 0")
	}
	dp, err := f.sim.DevicePointer(p)
	if err != nil {
		return 0, fakeErr("cuMemHostGetDevicePointer_v2", ErrInvalidValue, "CUDA_ERROR_INVALID_VALUE", err.Error())
	}
	return DevicePtr(dp), nil
}

func (f *fakeDevice) MemcpyHtoDAsync(dst DevicePtr, src unsafe.Pointer, n uint64, s Stream) error {
	if err := f.hz.Enqueue("cuMemcpyHtoDAsync_v2", streamID(s)); err != nil {
		return err
	}
	return f.submit("cuMemcpyHtoDAsync_v2", s, nil, func() error { return f.sim.CopyIn(uint64(dst), src, n) })
}

func (f *fakeDevice) MemcpyDtoHAsync(dst unsafe.Pointer, src DevicePtr, n uint64, s Stream) error {
	if err := f.hz.Enqueue("cuMemcpyDtoHAsync_v2", streamID(s)); err != nil {
		return err
	}
	return f.submit("cuMemcpyDtoHAsync_v2", s, nil, func() error { return f.sim.CopyOut(dst, uint64(src), n) })
}

func (f *fakeDevice) ModuleLoadData(image []byte, _ bool) (Module, JITLog, error) {
	if err := f.hz.Call("cuModuleLoadDataEx"); err != nil {
		return Module{}, JITLog{}, err
	}
	if !bytes.Contains(image, []byte(".version")) || !bytes.Contains(image, []byte(".entry")) {
		log := JITLog{Error: "ptxas application ptx input, line 1; fatal   : Parsing error near 'garbage': syntax error"}
		return Module{}, log, fakeErr("cuModuleLoadDataEx", ErrInvalidPTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed")
	}
	m := &fakeModule{image: image}
	f.mu.Lock()
	f.modules[m] = true
	f.loads++
	f.mu.Unlock()
	return Module{unsafe.Pointer(m)}, JITLog{Info: "ptxas info    : simulated"}, nil
}

func (f *fakeDevice) ModuleGetFunction(m Module, name string) (Function, error) {
	f.mu.Lock()
	ok := f.modules[(*fakeModule)(m.p)]
	f.mu.Unlock()
	if !ok {
		return Function{}, fakeErr("cuModuleGetFunction", ErrInvalidHandle, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle")
	}
	if _, ok := f.sim.KernelParams(name); !ok || !bytes.Contains((*fakeModule)(m.p).image, []byte(".entry "+name+"(")) {
		return Function{}, fakeErr("cuModuleGetFunction", ErrNotFound, "CUDA_ERROR_NOT_FOUND", "named symbol not found")
	}
	return Function{unsafe.Pointer(&fakeFunc{name: name})}, nil
}

func (f *fakeDevice) ModuleUnload(m Module) error {
	if err := f.hz.Call("cuModuleUnload"); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.modules[(*fakeModule)(m.p)] {
		return fakeErr("cuModuleUnload", ErrInvalidHandle, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle")
	}
	delete(f.modules, (*fakeModule)(m.p))
	return nil
}

func (f *fakeDevice) LaunchKernel(fn Function, grid, block Dim3, smem uint32, s Stream, args ...uint64) error {
	if fn.IsNil() {
		return fakeErr("cuLaunchKernel", ErrInvalidHandle, "CUDA_ERROR_INVALID_HANDLE", "nil function")
	}
	name := (*fakeFunc)(fn.p).name
	g, b := grid.norm(), block.norm()
	a := append([]uint64(nil), args...) // the driver copies the parameters before returning
	if b.X*b.Y*b.Z > 1024 {
		return fakeErr("cuLaunchKernel", ErrInvalidValue, "CUDA_ERROR_INVALID_VALUE", "block too large")
	}
	if _, err := f.stream(s); err != nil {
		return err
	}
	prog := (*fakeFunc)(fn.p).prog
	shape := hostsim.Grid{Blocks: int(g.X * g.Y * g.Z), Threads: int(b.X * b.Y * b.Z), SharedMem: int(smem)}
	tr, err := f.hz.BeginGrid(streamID(s), name, shape, a) // in flight until the kernel returns
	if errors.Is(err, hostsim.ErrOutOfResources) {
		return fakeErr("cuLaunchKernel", ErrLaunchOutOfResources, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", err.Error())
	}
	if err != nil {
		return err
	}
	err = f.submit("cuLaunchKernel", s, tr, func() error {
		launch := func() error { return f.sim.Launch(name, [3]uint32{g.X, g.Y, g.Z}, [3]uint32{b.X, b.Y, b.Z}, a) }
		if prog != nil {
			launch = func() error {
				return f.sim.LaunchProgram(prog, [3]uint32{g.X, g.Y, g.Z}, [3]uint32{b.X, b.Y, b.Z}, smem, a)
			}
			if (*fakeFunc)(fn.p).grid {
				launch = func() error {
					if g.Y*g.Z != 1 {
						return fmt.Errorf("%w: grid %v", hostsim.ErrBadLaunch, g)
					}
					return f.sim.LaunchGrid(prog, g.X, [3]uint32{b.X, b.Y, b.Z}, smem, a)
				}
			}
		}
		if err := launch(); err != nil {
			return fakeErr("cuLaunchKernel", ErrLaunchFailed, "CUDA_ERROR_LAUNCH_FAILED", err.Error())
		}
		return nil
	})
	if err != nil {
		f.hz.End(tr)
	}
	return err
}

func (f *fakeDevice) StreamCreate(uint32) (Stream, error) {
	s := newFakeStream()
	f.mu.Lock()
	f.streams[s] = true
	f.mu.Unlock()
	f.hz.StreamCreated(streamID(Stream{unsafe.Pointer(s)}))
	return Stream{unsafe.Pointer(s)}, nil
}

func (f *fakeDevice) stream(s Stream) (*fakeStream, error) {
	if s.IsDefault() {
		return nil, nil
	}
	fs := (*fakeStream)(s.p)
	f.mu.Lock()
	ok := f.streams[fs]
	f.mu.Unlock()
	if !ok {
		return nil, fakeErr("cuStream", ErrInvalidHandle, "CUDA_ERROR_INVALID_HANDLE", "destroyed stream")
	}
	return fs, nil
}

// enqueue submits op as unnamed stream work.
func (f *fakeDevice) enqueue(s Stream, op func() error) error {
	return f.submit("stream work", s, nil, op)
}

// submit enqueues op, the command call, on s (a launch: tr is its
// tracked launch, ended here when op has run): the hazard model gives it
// its place in its hardware queue (Ticket) and the stream's goroutine
// dispatches it there (Dispatch) before running it. On the default stream
// op runs at once (the model's NULL-stream rule has been applied).
func (f *fakeDevice) submit(call string, s Stream, tr *hostsim.Tracked, op func() error) error {
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

func (f *fakeDevice) StreamSynchronize(s Stream) error {
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
func (f *fakeDevice) StreamQuery(s Stream) error {
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
		var de *DriverError
		if errors.As(s.err, &de) {
			return &DriverError{Call: "cuStreamQuery", Code: de.Code, Name: de.Name, Message: de.Message}
		}
		return fakeErr("cuStreamQuery", ErrLaunchFailed, "CUDA_ERROR_LAUNCH_FAILED", s.err.Error())
	}
	if s.busy || len(s.queue) > 0 {
		return fakeErr("cuStreamQuery", ErrNotReady, "CUDA_ERROR_NOT_READY", "device not ready")
	}
	return nil
}

func (f *fakeDevice) StreamDestroy(s Stream) error {
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

func (f *fakeDevice) EventCreate(uint32) (Event, error) {
	return Event{unsafe.Pointer(&fakeEvent{})}, nil
}

func (f *fakeDevice) EventRecord(e Event, s Stream) error {
	if err := f.hz.Enqueue("cuEventRecord", streamID(s)); err != nil {
		return err
	}
	ev := (*fakeEvent)(e.p)
	return f.submit("cuEventRecord", s, nil, func() error {
		ev.mu.Lock()
		ev.done = true
		ev.seq++
		ev.mu.Unlock()
		return nil
	})
}

func (f *fakeDevice) EventSynchronize(e Event) error {
	ev := (*fakeEvent)(e.p)
	if ev.s != nil {
		return ev.s.sync()
	}
	return nil
}

func (f *fakeDevice) EventElapsedTime(start, end Event) (float32, error) { return 0, nil }
func (f *fakeDevice) EventDestroy(Event) error                           { return nil }

// leaks reports what the backend left allocated.
func (f *fakeDevice) leaks() string {
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

// testRunner is a Context without a device: the locked worker thread.
type testRunner struct{ w *worker }

func (r testRunner) Do(fn func() error) error { return r.w.do(fn) }
func (r testRunner) Close() error             { return r.w.close() }

// NewSimulatedBackend returns a CUDA backend whose device is simulated on
// the host: its memory (memBytes of it) is the C heap, its streams run
// copies and launches in order on goroutines of their own, and its
// launches run the host-compiled bodies of kernels/*.cu (package hostsim),
// the persistent ring kernel included. Every code path of the backend
// runs as it would on a GPU — allocation, staging, argument packing,
// launch shapes, the ring engine — only slower. Its hardware is a
// [DeviceProfile] ([H100Profile] unless [WithDeviceProfile] says
// otherwise). Its hazard model ([SimulatedHazards]) is in strict mode: a
// driver call that on a GPU would wait forever beside a running ring
// kernel fails with a *hostsim.HazardError instead — an implicit
// synchronisation, a launch that cannot become resident beside the
// persistent kernels (hostsim.ErrResidency: the profile's 129th
// persistent grid), or a command queued behind one on a hardware work
// queue other streams share (hostsim.ErrFalseDependency). It is for tests and for
// developing device code paths on machines without a GPU; Name reports
// "cuda:sim". Close it when done.
func NewSimulatedBackend(memBytes uint64, opts ...BackendOption) *Backend {
	b, _ := newSimulated(newFakeDevice(memBytes))
	for _, o := range opts {
		o(b)
	}
	return b
}

// newSimulated returns a Backend over fd.
func newSimulated(fd *fakeDevice) (*Backend, *fakeDevice) {
	var b *Backend
	b = newBackend(func() Report {
		return Report{LibraryLoaded: true, LibraryPath: "hostsim", Devices: []DeviceInfo{{Name: "simulated", SMs: 2}}}
	}, func() (deviceAPI, runner, Device, int, error) {
		if b.profile != nil {
			if err := b.profile.Validate(); err != nil {
				return nil, nil, 0, 0, err
			}
			fd.setProfile(*b.profile)
		}
		w, err := startWorker(nil, nil)
		if err != nil {
			return nil, nil, 0, 0, err
		}
		return fd, testRunner{w}, 0, 0, nil
	})
	b.name = "cuda:sim"
	b.sim = fd
	return b, fd
}
