// Package driverapi holds the types of the CUDA driver API that every layer
// of the CUDA backend shares: the handles (Device, DevicePtr, CtxHandle,
// Module, Function, Stream, Event, MemPool), launch extents (Dim3), device
// attributes, the status codes (Result) and *DriverError, and DeviceAPI,
// the part of the driver a backend's device calls.
//
// It sits at the bottom of gpu/cuda so that the packages under it (the
// device core and the ring runtime, see gpu/cuda's package doc) can name
// these types without importing gpu/cuda, which imports them. Package
// gpu/cuda re-exports every name here as an alias (cuda.DevicePtr is
// driverapi.DevicePtr): users name the cuda ones.
package driverapi
