package driverapi

import "unsafe"

// Device is a CUdevice: a driver device handle, not necessarily equal to
// the ordinal it was obtained from.
type Device int32

// DevicePtr is a CUdeviceptr: an address in the device's (unified) address
// space. It is a number, never dereferenced on the host.
type DevicePtr uint64

// CtxHandle is a CUcontext.
type CtxHandle struct{ p unsafe.Pointer }

// IsNil reports whether h is the null context.
func (h CtxHandle) IsNil() bool { return h.p == nil }

// Module is a CUmodule: loaded PTX or cubin.
type Module struct{ p unsafe.Pointer }

// IsNil reports whether m is the null module.
func (m Module) IsNil() bool { return m.p == nil }

// Function is a CUfunction: a kernel entry point of a Module.
type Function struct{ p unsafe.Pointer }

// IsNil reports whether f is the null function.
func (f Function) IsNil() bool { return f.p == nil }

// Stream is a CUstream. The zero Stream is the legacy default stream.
type Stream struct{ p unsafe.Pointer }

// IsDefault reports whether s is the default (null) stream.
func (s Stream) IsDefault() bool { return s.p == nil }

// Event is a CUevent.
type Event struct{ p unsafe.Pointer }

// IsNil reports whether e is the null event.
func (e Event) IsNil() bool { return e.p == nil }

// Dim3 is a grid or block extent for the driver's LaunchKernel. A zero
// component is treated as 1.
type Dim3 struct {
	X, Y, Z uint32 // extents; 0 means 1
}

// DeviceAttribute is a CUdevice_attribute.
type DeviceAttribute int32

// JITLog is the output of the PTX JIT compiler for the driver's ModuleLoadData.
type JITLog struct {
	Info  string // informational log (register use, with verbose)
	Error string // error log; set when loading failed
}

// Flags of cuStreamCreate (gpu/cuda re-exports them).
const (
	StreamDefault     uint32 = 0x0 // CU_STREAM_DEFAULT
	StreamNonBlocking uint32 = 0x1 // CU_STREAM_NON_BLOCKING
)
