//go:build linux && cgo

package cuda

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/ringactor/ringactor/gpu"
)

// installedDriver returns a fresh loader's driver for libcuda.so.1, or
// skips the test when the library is not installed.
func installedDriver(t *testing.T) (*loader, *Driver) {
	t.Helper()
	l := newLoader(DefaultLibrary)
	drv, err := l.library()
	if err != nil {
		t.Skipf("needs the NVIDIA driver library (Debian: apt-get install libcuda1, see gpu/cuda/INSTALL.txt): %v", err)
	}
	return l, drv
}

func TestProbeInstalledLibrary(t *testing.T) {
	l, _ := installedDriver(t)
	r := l.probe()
	t.Logf("Probe: %+v", r)
	t.Logf("%v", r)
	if !r.LibraryLoaded || !filepath.IsAbs(r.LibraryPath) || r.DriverVersion < 1000 {
		t.Fatalf("probe: %+v", r)
	}
	if len(r.Devices) > 0 {
		if r.Err != nil {
			t.Fatalf("devices found but Err = %v", r.Err)
		}
		for _, d := range r.Devices {
			if d.Name == "" || d.TotalMem == 0 || d.SMs == 0 || d.ComputeCapability.Major < 3 {
				t.Errorf("device %+v", d)
			}
		}
		return
	}
	// No device (this project's CI): cuInit fails and says why.
	if !errors.Is(r.Err, gpu.ErrDeviceNotAvailable) {
		t.Fatalf("Err = %v, want gpu.ErrDeviceNotAvailable", r.Err)
	}
	var de *gpu.DeviceError
	if !errors.As(r.Err, &de) || !strings.Contains(de.Reason, "cuInit") || !strings.Contains(de.Reason, "CUDA_ERROR_") {
		t.Fatalf("Err = %v, want the cuInit error name in the reason", r.Err)
	}
	if c, err := l.newContext(0); c != nil || !errors.Is(err, gpu.ErrDeviceNotAvailable) {
		t.Fatalf("newContext without a device: %v, %v", c, err)
	}
}

// TestResultNamesMatchDriver checks the Result constants against the
// installed driver's cuGetErrorName.
func TestResultNamesMatchDriver(t *testing.T) {
	_, drv := installedDriver(t)
	want := map[Result]string{
		Success: "CUDA_SUCCESS", ErrInvalidValue: "CUDA_ERROR_INVALID_VALUE",
		ErrOutOfMemory: "CUDA_ERROR_OUT_OF_MEMORY", ErrNotInitialized: "CUDA_ERROR_NOT_INITIALIZED",
		ErrDeinitialized: "CUDA_ERROR_DEINITIALIZED", ErrStubLibrary: "CUDA_ERROR_STUB_LIBRARY",
		ErrDeviceUnavailable: "CUDA_ERROR_DEVICE_UNAVAILABLE",
		ErrNoDevice:          "CUDA_ERROR_NO_DEVICE", ErrInvalidDevice: "CUDA_ERROR_INVALID_DEVICE",
		ErrInvalidImage: "CUDA_ERROR_INVALID_IMAGE", ErrInvalidContext: "CUDA_ERROR_INVALID_CONTEXT",
		ErrNoBinaryForGPU: "CUDA_ERROR_NO_BINARY_FOR_GPU", ErrInvalidPTX: "CUDA_ERROR_INVALID_PTX",
		ErrJITCompilerNotFound: "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", ErrUnsupportedPTXVersion: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
		ErrInvalidHandle: "CUDA_ERROR_INVALID_HANDLE", ErrNotFound: "CUDA_ERROR_NOT_FOUND",
		ErrNotReady: "CUDA_ERROR_NOT_READY", ErrIllegalAddress: "CUDA_ERROR_ILLEGAL_ADDRESS",
		ErrLaunchOutOfResources: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", ErrLaunchTimeout: "CUDA_ERROR_LAUNCH_TIMEOUT",
		ErrAssert: "CUDA_ERROR_ASSERT", ErrIllegalInstruction: "CUDA_ERROR_ILLEGAL_INSTRUCTION",
		ErrLaunchFailed: "CUDA_ERROR_LAUNCH_FAILED", ErrNotPermitted: "CUDA_ERROR_NOT_PERMITTED",
		ErrNotSupported: "CUDA_ERROR_NOT_SUPPORTED", ErrSystemNotReady: "CUDA_ERROR_SYSTEM_NOT_READY",
		ErrSystemDriverMismatch: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", ErrCompatNotSupportedOnDev: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
		ErrUnknown: "CUDA_ERROR_UNKNOWN",
	}
	for code, name := range want {
		if got := drv.ErrorName(code); got != name {
			t.Errorf("cuGetErrorName(%d) = %q, want %q", code, got, name)
		}
		if code != Success && drv.ErrorString(code) == "" {
			t.Errorf("cuGetErrorString(%d) is empty", code)
		}
	}
	if got := drv.ErrorName(123456); got != "" {
		t.Errorf("cuGetErrorName(123456) = %q, want \"\"", got)
	}
}

func TestSymbolNames(t *testing.T) {
	got := symbolNames()
	for _, want := range []string{"cuInit", "cuDeviceTotalMem_v2", "cuDevicePrimaryCtxRelease_v2", "cuStreamDestroy_v2",
		"cuEventDestroy_v2", "cuMemAlloc_v2", "cuMemFree_v2", "cuMemHostAlloc", "cuMemHostGetDevicePointer_v2",
		"cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2", "cuMemGetInfo_v2", "cuLaunchKernel", "cuModuleLoadDataEx",
		"cuGetErrorName", "cuGetErrorString"} {
		found := false
		for _, s := range got {
			found = found || s == want
		}
		if !found {
			t.Errorf("loader does not resolve %s", want)
		}
	}
	if len(got) != 34 {
		t.Errorf("loader resolves %d symbols, want 34: %v", len(got), got)
	}
}

// TestWrappersWithoutDevice calls every wrapper through the real library on
// a machine where cuInit failed: each crosses the cgo boundary and the
// function-pointer table and comes back as a *DriverError naming its call.
func TestWrappersWithoutDevice(t *testing.T) {
	l, drv := installedDriver(t)
	if _, err := l.initialized(); err == nil {
		t.Skip("a CUDA device is present; this test is for machines without one")
	}
	var host [64]byte
	hp := unsafe.Pointer(&host[0])
	calls := map[string]func() error{
		"cuDeviceGetCount":             func() error { _, err := drv.DeviceGetCount(); return err },
		"cuDeviceGet":                  func() error { _, err := drv.DeviceGet(0); return err },
		"cuDeviceGetName":              func() error { _, err := drv.DeviceGetName(0); return err },
		"cuDeviceGetAttribute":         func() error { _, err := drv.DeviceGetAttribute(AttrMultiprocessorCount, 0); return err },
		"cuDeviceTotalMem_v2":          func() error { _, err := drv.DeviceTotalMem(0); return err },
		"cuDevicePrimaryCtxRetain":     func() error { _, err := drv.DevicePrimaryCtxRetain(0); return err },
		"cuDevicePrimaryCtxRelease_v2": func() error { return drv.DevicePrimaryCtxRelease(0) },
		"cuCtxSetCurrent":              func() error { return drv.CtxSetCurrent(CtxHandle{}) },
		"cuCtxSynchronize":             drv.CtxSynchronize,
		"cuModuleLoadDataEx":           func() error { _, _, err := drv.ModuleLoadData([]byte(".version 7.0"), true); return err },
		"cuModuleUnload":               func() error { return drv.ModuleUnload(Module{}) },
		"cuModuleGetFunction":          func() error { _, err := drv.ModuleGetFunction(Module{}, "k"); return err },
		"cuLaunchKernel": func() error {
			return drv.LaunchKernel(Function{}, Dim3{X: 1}, Dim3{X: 32}, 0, Stream{}, ArgPtr(0), ArgF32(2), ArgI32(3))
		},
		"cuStreamCreate":               func() error { _, err := drv.StreamCreate(StreamNonBlocking); return err },
		"cuStreamDestroy_v2":           func() error { return drv.StreamDestroy(Stream{}) },
		"cuStreamSynchronize":          func() error { return drv.StreamSynchronize(Stream{}) },
		"cuStreamQuery":                func() error { return drv.StreamQuery(Stream{}) },
		"cuEventCreate":                func() error { _, err := drv.EventCreate(EventDefault); return err },
		"cuEventRecord":                func() error { return drv.EventRecord(Event{}, Stream{}) },
		"cuEventSynchronize":           func() error { return drv.EventSynchronize(Event{}) },
		"cuEventElapsedTime":           func() error { _, err := drv.EventElapsedTime(Event{}, Event{}); return err },
		"cuEventDestroy_v2":            func() error { return drv.EventDestroy(Event{}) },
		"cuMemAlloc_v2":                func() error { _, err := drv.MemAlloc(1 << 20); return err },
		"cuMemFree_v2":                 func() error { return drv.MemFree(0) },
		"cuMemHostAlloc":               func() error { _, err := drv.MemHostAlloc(4096, MemHostAllocPortable|MemHostAllocDeviceMap); return err },
		"cuMemFreeHost":                func() error { return drv.MemFreeHost(nil) },
		"cuMemHostGetDevicePointer_v2": func() error { _, err := drv.MemHostGetDevicePointer(hp, 0); return err },
		"cuMemcpyHtoDAsync_v2":         func() error { return drv.MemcpyHtoDAsync(0, hp, 0, Stream{}) },
		"cuMemcpyDtoHAsync_v2":         func() error { return drv.MemcpyDtoHAsync(hp, 0, 0, Stream{}) },
		"cuMemGetInfo_v2":              func() error { _, _, err := drv.MemGetInfo(); return err },
		"cuInit":                       func() error { return drv.Init(0) },
		"cuDeviceGetDefaultMemPool":    func() error { _, err := drv.DeviceGetDefaultMemPool(0); return err },
		"cuMemPoolSetAttribute":        func() error { return drv.MemPoolSetReleaseThreshold(MemPool{}, 1) },
		"cuMemAllocFromPoolAsync":      func() error { _, err := drv.MemAllocFromPoolAsync(1, MemPool{}, Stream{}); return err },
		"cuMemFreeAsync":               func() error { return drv.MemFreeAsync(0, Stream{}) },
		"cuOccupancyMaxActiveBlocksPerMultiprocessor": func() error {
			_, err := drv.OccupancyMaxActiveBlocksPerMultiprocessor(Function{}, 32, 0)
			return err
		},
		"cuFuncGetAttribute": func() error { _, err := drv.FuncGetAttribute(Function{}, FuncAttrNumRegs); return err },
		"cuFuncSetAttribute": func() error {
			return drv.FuncSetAttribute(Function{}, FuncAttrPreferredSharedMemoryCarveout, SharedmemCarveoutMaxShared)
		},
		"cuCtxGetStreamPriorityRange": func() error { _, _, err := drv.CtxGetStreamPriorityRange(); return err },
		"cuStreamCreateWithPriority":  func() error { _, err := drv.StreamCreateWithPriority(StreamNonBlocking, -1); return err },
	}
	if !drv.HasStreamOrderedAlloc() {
		t.Errorf("%s lacks the stream-ordered allocator (optional symbols %v)", drv.Path(), optionalSymbolNames())
	}
	if got := optionalSymbolNames(); len(got) != 9 || got[2] != "cuMemAllocFromPoolAsync" || got[5] != "cuFuncGetAttribute" ||
		got[8] != "cuStreamCreateWithPriority" {
		t.Errorf("optional symbols %v", got)
	}
	for call, fn := range calls {
		err := fn()
		var de *DriverError
		if !errors.As(err, &de) || de.Call != call || !strings.HasPrefix(de.Name, "CUDA_ERROR_") || de.Message == "" {
			t.Errorf("%s: %v (%#v)", call, err, err)
			continue
		}
		t.Logf("%v", err)
	}
	args := make([]uint64, MaxKernelArgs+1)
	if err := drv.LaunchKernel(Function{}, Dim3{}, Dim3{}, 0, Stream{}, args...); !errors.Is(err, gpu.ErrDevice) {
		t.Errorf("LaunchKernel with %d args: %v", len(args), err)
	}
}
