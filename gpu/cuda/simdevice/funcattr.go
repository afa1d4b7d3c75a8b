//go:build linux && cgo

package simdevice

import (
	"unsafe"

	"github.com/ringactor/ringactor/gpu/cuda"
)

// Per-function attributes (cuFuncGetAttribute, cuFuncSetAttribute) and
// stream priorities (cuCtxGetStreamPriorityRange,
// cuStreamCreateWithPriority) of the simulated device. A function's
// register use and static shared memory are what its host build cannot
// tell: DefaultRegisters and none, unless a test sets them by entry name
// (SetFuncRegisters, SetFuncStaticShared). Its launches count both in
// the hazard model's residency (hostsim.Grid's Registers and SharedMem,
// the static memory added to the launch's dynamic memory), and a launch
// asking for more dynamic shared memory than its
// FuncAttrMaxDynamicSharedSizeBytes fails with CUDA_ERROR_INVALID_VALUE,
// as on a GPU.

// DefaultRegisters is the registers per thread the simulated device
// reports for a function whose count no test set: a plausible figure for
// the built-in one-shot kernels and the ring loops (nvcc gives them 16 to
// 40), at which a full SM's 2,048 threads use its 64 K registers.
const DefaultRegisters = 32

// The stream priorities of the simulated device: an H100's.
const (
	defaultLeastPriority    = 0
	defaultGreatestPriority = -5
)

// funcState is what cuFuncSetAttribute changed of one function.
type funcState struct {
	dyn         int // FuncAttrMaxDynamicSharedSizeBytes, when dynSet
	dynSet      bool
	carveout    int // FuncAttrPreferredSharedMemoryCarveout, when carveoutSet
	carveoutSet bool
}

var (
	_ cuda.FuncAttributeAPI  = (*Device)(nil)
	_ cuda.StreamPriorityAPI = (*Device)(nil)
)

// SetFuncRegisters makes every function of entry name report regs
// registers per thread (FuncAttrNumRegs) and count them in residency
// from its next launch; 0 restores DefaultRegisters.
func (f *Device) SetFuncRegisters(name string, regs int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.funcRegs == nil {
		f.funcRegs = map[string]int{}
	}
	if regs <= 0 {
		delete(f.funcRegs, name)
		return
	}
	f.funcRegs[name] = regs
}

// SetFuncStaticShared makes every function of entry name report bytes of
// static shared memory (FuncAttrSharedSizeBytes), counted in residency
// beside each launch's dynamic shared memory and taken from what its
// dynamic shared memory may be raised to.
func (f *Device) SetFuncStaticShared(name string, bytes int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.funcStatic == nil {
		f.funcStatic = map[string]int{}
	}
	f.funcStatic[name] = max(0, bytes)
}

// funcFigures are the attributes of ff a launch needs (f.mu held).
func (f *Device) funcFigures(ff *fakeFunc) (regs, static, maxDyn int) {
	regs = DefaultRegisters
	if r, ok := f.funcRegs[ff.name]; ok {
		regs = r
	}
	static = f.funcStatic[ff.name]
	maxDyn = max(0, cuda.DefaultMaxDynamicShared-static)
	if ff.state.dynSet {
		maxDyn = ff.state.dyn
	}
	return regs, static, maxDyn
}

// optinShared is the most shared memory a block may use once its
// function opted in (f.mu held): the profile's SharedMemPerBlockOptin,
// else its SM's shared memory less the per-block reservation, else no
// bound (0).
func (f *Device) optinShared() int {
	if p := f.profile; p.SharedMemPerBlockOptin > 0 {
		return p.SharedMemPerBlockOptin
	} else if p.SharedMemPerSM > 0 {
		return p.SharedMemPerSM - p.SharedMemReservedPerBlock
	}
	return 0
}

// FuncGetAttribute is cuFuncGetAttribute: the function's simulated
// attributes (its registers, static shared memory, dynamic shared memory
// bound and carveout; PTX 7.0 and the profile's binary version).
func (f *Device) FuncGetAttribute(fn cuda.Function, attr cuda.FuncAttribute) (int, error) {
	const call = "cuFuncGetAttribute"
	if fn.IsNil() {
		return 0, fakeErr(call, cuda.ErrInvalidHandle, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle")
	}
	ff := (*fakeFunc)(fn.Raw())
	f.mu.Lock()
	defer f.mu.Unlock()
	regs, static, maxDyn := f.funcFigures(ff)
	switch attr {
	case cuda.FuncAttrMaxThreadsPerBlock:
		n := 1024
		if r := f.profile.RegistersPerSM; r > 0 && regs > 0 {
			n = min(n, r/regs/32*32)
		}
		return n, nil
	case cuda.FuncAttrSharedSizeBytes:
		return static, nil
	case cuda.FuncAttrConstSizeBytes, cuda.FuncAttrLocalSizeBytes, cuda.FuncAttrCacheModeCA:
		return 0, nil
	case cuda.FuncAttrNumRegs:
		return regs, nil
	case cuda.FuncAttrPTXVersion:
		return 70, nil
	case cuda.FuncAttrBinaryVersion:
		cc := f.profile.ComputeCapability
		return cc.Major*10 + cc.Minor, nil
	case cuda.FuncAttrMaxDynamicSharedSizeBytes:
		return maxDyn, nil
	case cuda.FuncAttrPreferredSharedMemoryCarveout:
		if ff.state.carveoutSet {
			return ff.state.carveout, nil
		}
		return cuda.SharedmemCarveoutDefault, nil
	}
	return 0, fakeErr(call, cuda.ErrInvalidValue, "CUDA_ERROR_INVALID_VALUE", "attribute not simulated")
}

// FuncSetAttribute is cuFuncSetAttribute: FuncAttrMaxDynamicSharedSizeBytes
// up to the profile's per-block opt-in shared memory less the function's
// static shared memory, FuncAttrPreferredSharedMemoryCarveout 0..100 or
// -1; anything else, or a value out of range, is
// CUDA_ERROR_INVALID_VALUE. Like the driver's it holds back no stream.
func (f *Device) FuncSetAttribute(fn cuda.Function, attr cuda.FuncAttribute, v int) error {
	const call = "cuFuncSetAttribute"
	if err := f.hz.Call(call); err != nil {
		return err
	}
	if fn.IsNil() {
		return fakeErr(call, cuda.ErrInvalidHandle, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle")
	}
	ff := (*fakeFunc)(fn.Raw())
	f.mu.Lock()
	defer f.mu.Unlock()
	switch attr {
	case cuda.FuncAttrMaxDynamicSharedSizeBytes:
		_, static, _ := f.funcFigures(ff)
		if limit := f.optinShared(); v < 0 || (limit > 0 && v+static > limit) {
			return fakeErr(call, cuda.ErrInvalidValue, "CUDA_ERROR_INVALID_VALUE", "invalid argument")
		}
		ff.state.dyn, ff.state.dynSet = v, true
		return nil
	case cuda.FuncAttrPreferredSharedMemoryCarveout:
		if v < cuda.SharedmemCarveoutDefault || v > cuda.SharedmemCarveoutMaxShared {
			return fakeErr(call, cuda.ErrInvalidValue, "CUDA_ERROR_INVALID_VALUE", "invalid argument")
		}
		ff.state.carveout, ff.state.carveoutSet = v, true
		return nil
	}
	return fakeErr(call, cuda.ErrInvalidValue, "CUDA_ERROR_INVALID_VALUE", "attribute is read-only")
}

// CtxGetStreamPriorityRange is cuCtxGetStreamPriorityRange: least 0,
// greatest -5 (an H100's) unless SetStreamPriorityRange changed them.
func (f *Device) CtxGetStreamPriorityRange() (least, greatest int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.prioSet {
		return defaultLeastPriority, defaultGreatestPriority, nil
	}
	return f.prioLeast, f.prioGreatest, nil
}

// SetStreamPriorityRange makes the device report least and greatest as
// its stream priorities (0, 0: a device without priorities).
func (f *Device) SetStreamPriorityRange(least, greatest int) {
	f.mu.Lock()
	f.prioLeast, f.prioGreatest, f.prioSet = least, greatest, true
	f.mu.Unlock()
}

// StreamCreateWithPriority is cuStreamCreateWithPriority: a stream of
// StreamCreate's, of priority clamped to the device's range as the driver
// clamps it.
func (f *Device) StreamCreateWithPriority(flags uint32, priority int) (cuda.Stream, error) {
	least, greatest, _ := f.CtxGetStreamPriorityRange()
	priority = min(max(priority, greatest), least)
	s := newFakeStream()
	s.priority = priority
	f.mu.Lock()
	f.streams[s] = true
	f.mu.Unlock()
	f.hz.StreamCreated(streamID(cuda.StreamFromRaw(unsafe.Pointer(s))))
	return cuda.StreamFromRaw(unsafe.Pointer(s)), nil
}

// StreamPriority returns the priority s was created with (0 for
// StreamCreate's), false for a stream the device does not hold.
func (f *Device) StreamPriority(s cuda.Stream) (int, bool) {
	fs, err := f.stream(s)
	if err != nil || fs == nil {
		return 0, false
	}
	return fs.priority, true
}
