//go:build linux && cgo

package simdevice

import (
	"errors"
	"testing"
	"unsafe"

	"github.com/ringactor/ringactor/gpu/cuda"
)

// probeFunc loads the one-shot module on fd and resolves rc_smem_probe;
// the module is unloaded when the test ends.
func probeFunc(t *testing.T, fd *Device) cuda.Function {
	t.Helper()
	m, _, err := fd.ModuleLoadData(cuda.OneShotPTX, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fd.ModuleUnload(m) })
	fn, err := fd.ModuleGetFunction(m, "rc_smem_probe")
	if err != nil {
		t.Fatal(err)
	}
	return fn
}

// driverCode is the CUresult of err, -1 when err is no *cuda.DriverError.
func driverCode(err error) cuda.Result {
	var de *cuda.DriverError
	if !errors.As(err, &de) {
		return -1
	}
	return cuda.Result(de.Code)
}

// TestFuncAttributes: a function reports DefaultRegisters (or a test's
// figure) and its static shared memory; its dynamic shared memory bound
// starts at 48 KiB less the static memory and may be raised to the
// profile's per-block opt-in (227 KiB on the H100 profile) less it; the
// carveout takes -1..100; read-only attributes refuse a set.
func TestFuncAttributes(t *testing.T) {
	fd := NewDevice(1 << 20)
	fn := probeFunc(t, fd)
	get := func(a cuda.FuncAttribute) int {
		t.Helper()
		v, err := fd.FuncGetAttribute(fn, a)
		if err != nil {
			t.Fatalf("attribute %d: %v", a, err)
		}
		return v
	}
	if r, s, d, c, mt := get(cuda.FuncAttrNumRegs), get(cuda.FuncAttrSharedSizeBytes), get(cuda.FuncAttrMaxDynamicSharedSizeBytes),
		get(cuda.FuncAttrPreferredSharedMemoryCarveout), get(cuda.FuncAttrMaxThreadsPerBlock); r != DefaultRegisters || s != 0 ||
		d != 48<<10 || c != cuda.SharedmemCarveoutDefault || mt != 1024 {
		t.Fatalf("defaults: %d registers, %d static, %d dynamic, carveout %d, %d threads", r, s, d, c, mt)
	}
	if v := get(cuda.FuncAttrBinaryVersion); v != 90 {
		t.Fatalf("binary version %d on the H100 profile", v)
	}
	fd.SetFuncRegisters("rc_smem_probe", 128)
	if r, mt := get(cuda.FuncAttrNumRegs), get(cuda.FuncAttrMaxThreadsPerBlock); r != 128 || mt != 512 {
		t.Fatalf("128 registers: reports %d, %d threads a block", r, mt)
	}
	fd.SetFuncRegisters("rc_smem_probe", 0)
	if r := get(cuda.FuncAttrNumRegs); r != DefaultRegisters {
		t.Fatalf("reset registers: %d", r)
	}
	set := func(a cuda.FuncAttribute, v int) error { return fd.FuncSetAttribute(fn, a, v) }
	if err := set(cuda.FuncAttrMaxDynamicSharedSizeBytes, 227<<10); err != nil || get(cuda.FuncAttrMaxDynamicSharedSizeBytes) != 227<<10 {
		t.Fatalf("raise to 227 KiB: %v", err)
	}
	if err := set(cuda.FuncAttrMaxDynamicSharedSizeBytes, 227<<10+4); driverCode(err) != cuda.ErrInvalidValue {
		t.Fatalf("raise past the opt-in: %v", err)
	}
	fd.SetFuncStaticShared("rc_smem_probe", 4<<10)
	if s := get(cuda.FuncAttrSharedSizeBytes); s != 4<<10 {
		t.Fatalf("static shared memory %d", s)
	}
	if err := set(cuda.FuncAttrMaxDynamicSharedSizeBytes, 224<<10); driverCode(err) != cuda.ErrInvalidValue {
		t.Fatalf("dynamic plus static past the opt-in: %v", err)
	}
	if err := set(cuda.FuncAttrMaxDynamicSharedSizeBytes, 223<<10); err != nil {
		t.Fatal(err)
	}
	if err := set(cuda.FuncAttrMaxDynamicSharedSizeBytes, -1); driverCode(err) != cuda.ErrInvalidValue {
		t.Fatalf("negative: %v", err)
	}
	for _, v := range []int{-1, 0, 50, 100} {
		if err := set(cuda.FuncAttrPreferredSharedMemoryCarveout, v); err != nil || get(cuda.FuncAttrPreferredSharedMemoryCarveout) != v {
			t.Fatalf("carveout %d: %v", v, err)
		}
	}
	for _, v := range []int{-2, 101} {
		if err := set(cuda.FuncAttrPreferredSharedMemoryCarveout, v); driverCode(err) != cuda.ErrInvalidValue {
			t.Fatalf("carveout %d: %v", v, err)
		}
	}
	for _, a := range []cuda.FuncAttribute{cuda.FuncAttrNumRegs, cuda.FuncAttrSharedSizeBytes, cuda.FuncAttrMaxThreadsPerBlock} {
		if err := set(a, 1); driverCode(err) != cuda.ErrInvalidValue {
			t.Fatalf("set read-only attribute %d: %v", a, err)
		}
	}
	if _, err := fd.FuncGetAttribute(cuda.Function{}, cuda.FuncAttrNumRegs); driverCode(err) != cuda.ErrInvalidHandle {
		t.Fatalf("nil function: %v", err)
	}
	// Attributes are per function handle, as on a GPU: another module's
	// function starts from the defaults (but shares the entry's figures).
	other := probeFunc(t, fd)
	if v, _ := fd.FuncGetAttribute(other, cuda.FuncAttrMaxDynamicSharedSizeBytes); v != 44<<10 {
		t.Fatalf("another handle's dynamic bound: %d, want 48 KiB less its 4 KiB static", v)
	}
	if v, _ := fd.FuncGetAttribute(other, cuda.FuncAttrPreferredSharedMemoryCarveout); v != cuda.SharedmemCarveoutDefault {
		t.Fatalf("another handle's carveout: %d", v)
	}
}

// TestLaunchDynamicSharedMemory: a launch asking for more dynamic shared
// memory than its function's bound fails with CUDA_ERROR_INVALID_VALUE
// (as on a GPU) until the bound is raised, then runs with the memory.
// The residency model counts the function's registers and its static
// plus dynamic shared memory: a block they do not fit on an SM is
// CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES.
func TestLaunchDynamicSharedMemory(t *testing.T) {
	fd := NewDevice(1 << 20)
	fn := probeFunc(t, fd)
	s, err := fd.StreamCreate(cuda.StreamNonBlocking)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = fd.StreamDestroy(s) }()
	out, err := fd.MemAlloc(8)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = fd.MemFree(out) }()
	const bytes = 100 << 10
	launch := func(threads, smem uint32) error {
		return fd.LaunchKernel(fn, cuda.Dim3{X: 2}, cuda.Dim3{X: threads}, smem, s, cuda.ArgPtr(out), cuda.ArgU32(smem/4))
	}
	if err := launch(256, bytes); driverCode(err) != cuda.ErrInvalidValue {
		t.Fatalf("100 KiB without raising the bound: %v", err)
	}
	if err := launch(256, 48<<10); err != nil {
		t.Fatalf("48 KiB: %v", err)
	}
	if err := fd.FuncSetAttribute(fn, cuda.FuncAttrMaxDynamicSharedSizeBytes, bytes); err != nil {
		t.Fatal(err)
	}
	if err := launch(256, bytes); err != nil {
		t.Fatalf("100 KiB after raising the bound: %v", err)
	}
	if err := fd.StreamSynchronize(s); err != nil {
		t.Fatal(err)
	}
	var got [2]uint32
	if err := fd.Sim().CopyOut(unsafe.Pointer(&got[0]), uint64(out), 8); err != nil {
		t.Fatal(err)
	}
	for b, v := range got {
		var want uint32
		for i := range uint32(bytes / 4) {
			want += ((i + 1) * 2654435761) ^ (uint32(b)*0x9E3779B9 + 0x7F4A7C15)
		}
		if v != want {
			t.Fatalf("block %d summed %#x, want %#x", b, v, want)
		}
	}
	// 255 registers × 512 threads need twice an SM's 64 K registers.
	fd.SetFuncRegisters("rc_smem_probe", 255)
	if err := launch(512, 4<<10); driverCode(err) != cuda.ErrLaunchOutOfResources {
		t.Fatalf("255 registers × 512 threads: %v", err)
	}
	fd.SetFuncRegisters("rc_smem_probe", 0)
	// 150 KiB of static shared memory beside 78 KiB of dynamic (and the
	// 1 KiB reserved per block) is more than an SM's 228 KiB; dynamic alone
	// fits.
	if err := launch(256, 78<<10); err != nil {
		t.Fatalf("78 KiB: %v", err)
	}
	fd.SetFuncStaticShared("rc_smem_probe", 150<<10)
	if err := launch(256, 78<<10); driverCode(err) != cuda.ErrLaunchOutOfResources {
		t.Fatalf("150 KiB static and 78 KiB dynamic: %v", err)
	}
	if err := fd.StreamSynchronize(s); err != nil {
		t.Fatal(err)
	}
	if raised := fd.Hazards().Raised(); len(raised) != 0 {
		t.Fatalf("hazards: %v", raised)
	}
}

// TestStreamPriorities: the device's range is an H100's (least 0,
// greatest -5) unless set; a stream keeps the priority it was created
// with, clamped to the range; StreamCreate's streams have priority 0.
func TestStreamPriorities(t *testing.T) {
	fd := NewDevice(1 << 20)
	if l, g, err := fd.CtxGetStreamPriorityRange(); l != 0 || g != -5 || err != nil {
		t.Fatalf("range %d, %d, %v", l, g, err)
	}
	for _, c := range []struct{ ask, want int }{{-3, -3}, {-5, -5}, {-9, -5}, {0, 0}, {4, 0}} {
		s, err := fd.StreamCreateWithPriority(cuda.StreamNonBlocking, c.ask)
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := fd.StreamPriority(s); !ok || p != c.want {
			t.Errorf("priority %d: got %d, %v; want %d", c.ask, p, ok, c.want)
		}
		if err := fd.StreamDestroy(s); err != nil {
			t.Fatal(err)
		}
		if _, ok := fd.StreamPriority(s); ok {
			t.Fatal("a destroyed stream has a priority")
		}
	}
	s, err := fd.StreamCreate(cuda.StreamNonBlocking)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := fd.StreamPriority(s); !ok || p != 0 {
		t.Fatalf("StreamCreate's priority %d, %v", p, ok)
	}
	_ = fd.StreamDestroy(s)
	fd.SetStreamPriorityRange(0, 0)
	if l, g, _ := fd.CtxGetStreamPriorityRange(); l != 0 || g != 0 {
		t.Fatalf("set range: %d, %d", l, g)
	}
	if l := fd.Leaks(); l != "" {
		t.Fatal(l)
	}
}
