package cpu

import (
	"context"
	"errors"
	"runtime"

	"github.com/ringactor/ringactor/gpu"
)

// Backend is the CPU compute backend: kernels run on the host, on the
// buffers' host memory, parallel across GOMAXPROCS cores.
type Backend struct{}

// NewBackend returns the CPU backend.
func NewBackend() *Backend { return &Backend{} }

var _ gpu.Backend = (*Backend)(nil)

// Name is "cpu".
func (*Backend) Name() string { return string(gpu.KindCPU) }

// Kind is gpu.KindCPU.
func (*Backend) Kind() gpu.BackendKind { return gpu.KindCPU }

// Available is always nil: the CPU is always there.
func (*Backend) Available() error { return nil }

// Cores is how many cores kernels spread over.
func (*Backend) Cores() int { return runtime.GOMAXPROCS(0) }

// Supports reports whether spec has a CPU implementation for dt.
func (*Backend) Supports(spec *gpu.KernelSpec, dt gpu.DType) bool {
	return spec.CPU != nil && spec.Supports(dt)
}

// Execute runs spec's CPU implementation.
func (*Backend) Execute(ctx context.Context, spec *gpu.KernelSpec, in []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer, scalars []float64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := spec.CPU(ctx, in, out, scalars)
	if errors.Is(err, ErrKernelArgs) { // data the shapes could not rule out (a CSR index out of range, …)
		return &gpu.ArgumentError{Kernel: spec.Name, Arg: "data", Reason: err.Error(), Err: gpu.ErrArgument}
	}
	return err
}

// ExecuteBatch runs the items one after the other (each is parallel).
func (b *Backend) ExecuteBatch(ctx context.Context, spec *gpu.KernelSpec, items [][]*gpu.UnifiedBuffer, outs []*gpu.UnifiedBuffer, scalars []float64) error {
	for i, in := range items {
		if err := b.Execute(ctx, spec, in, outs[i], scalars); err != nil {
			return err
		}
	}
	return nil
}

// Allocator is nil: the CPU computes on host memory.
func (*Backend) Allocator() gpu.Allocator { return nil }
