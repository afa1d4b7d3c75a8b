package gpu

import (
	"context"
)

// BackendKind names a family of backends (not a kind of device: see
// DeviceKind).
type BackendKind string

// Backend kinds.
const (
	KindCPU  BackendKind = "cpu"
	KindCUDA BackendKind = "cuda"
)

// Backend runs one-shot compute kernels on a device. The CPU backend
// (gpu/cpu) runs them on the host; a device backend (gpu/cuda) moves buffers
// to its memory through its Allocator.
type Backend interface {
	// Name identifies the backend instance, e.g. "cpu" or "cuda:0".
	Name() string
	// Kind is its family.
	Kind() BackendKind
	// Available is nil when the backend can run kernels, or a *DeviceError
	// (DeviceUnavailable) saying why not.
	Available() error
	// Supports reports whether the backend implements the kernel for dt.
	Supports(spec *KernelSpec, dt DType) bool
	// Execute runs the kernel once. Errors are classified with the
	// hierarchy of errors.go (transient, out of memory, device failure…).
	Execute(ctx context.Context, spec *KernelSpec, in []*UnifiedBuffer, out *UnifiedBuffer, scalars []float64) error
	// ExecuteBatch runs the kernel on several independent items at once; a
	// device backend allocates for the whole batch and may answer
	// ErrOutOfMemory, which the orchestrator handles by splitting the batch.
	ExecuteBatch(ctx context.Context, spec *KernelSpec, items [][]*UnifiedBuffer, outs []*UnifiedBuffer, scalars []float64) error
	// Allocator gives device memory; nil for a backend that computes on
	// host memory.
	Allocator() Allocator
}
