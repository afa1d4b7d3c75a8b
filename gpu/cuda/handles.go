package cuda

import "unsafe"

// The raw values of the driver's handles: the CUmodule, CUfunction,
// CUstream, CUevent or CUmemoryPool pointer a handle wraps, for passing a
// handle to another CUDA library (a CUstream to cuBLAS, say) and for a
// [DeviceAPI] that is not the driver (a [HostDevice]), whose handles
// point at objects of its own. A handle made from a raw value is valid
// only for the DeviceAPI that issued that value.

// Raw returns the CUmodule m wraps.
func (m Module) Raw() unsafe.Pointer { return m.p }

// ModuleFromRaw wraps a CUmodule.
func ModuleFromRaw(p unsafe.Pointer) Module { return Module{p} }

// Raw returns the CUfunction f wraps.
func (f Function) Raw() unsafe.Pointer { return f.p }

// FunctionFromRaw wraps a CUfunction.
func FunctionFromRaw(p unsafe.Pointer) Function { return Function{p} }

// Raw returns the CUstream s wraps (nil: the legacy default stream).
func (s Stream) Raw() unsafe.Pointer { return s.p }

// StreamFromRaw wraps a CUstream (nil: the legacy default stream).
func StreamFromRaw(p unsafe.Pointer) Stream { return Stream{p} }

// Raw returns the CUevent e wraps.
func (e Event) Raw() unsafe.Pointer { return e.p }

// EventFromRaw wraps a CUevent.
func EventFromRaw(p unsafe.Pointer) Event { return Event{p} }

// Raw returns the CUmemoryPool p wraps.
func (p MemPool) Raw() unsafe.Pointer { return p.p }

// MemPoolFromRaw wraps a CUmemoryPool.
func MemPoolFromRaw(p unsafe.Pointer) MemPool { return MemPool{p} }

// Norm returns d with every zero extent made 1, as a launch reads it.
func (d Dim3) Norm() Dim3 {
	if d.X == 0 {
		d.X = 1
	}
	if d.Y == 0 {
		d.Y = 1
	}
	if d.Z == 0 {
		d.Z = 1
	}
	return d
}
