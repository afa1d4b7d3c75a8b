package cuda

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ringactor/ringactor/gpu"
)

// ErrNoDeviceKernels says that the CUDA backend found a usable device but
// this build has no device implementation of the requested kernel yet: the
// one-shot PTX kernels of the orchestrator are not written. Calls go to the
// CPU until they are.
var ErrNoDeviceKernels = errors.New("cuda: no device implementation of this kernel in this build")

// Backend is the orchestrator's CUDA backend. It probes the driver once and
// reports, through Available, why it cannot run kernels (no library, no
// device, …). It runs the kernels whose spec carries a device implementation
// for gpu.KindCUDA; the built-in kernels have none yet, so on a machine with
// a GPU it is available but supports nothing, and the orchestrator keeps
// everything on the CPU.
type Backend struct {
	once   sync.Once
	report Report
}

// NewBackend returns the CUDA backend; the driver is probed on first use.
func NewBackend() *Backend { return &Backend{} }

var _ gpu.Backend = (*Backend)(nil)

func (b *Backend) probe() Report {
	b.once.Do(func() { b.report = Probe() })
	return b.report
}

// Report returns what the driver probe found.
func (b *Backend) Report() Report { return b.probe() }

// Name is "cuda:0".
func (b *Backend) Name() string { return "cuda:0" }

// Kind is gpu.KindCUDA.
func (b *Backend) Kind() gpu.Kind { return gpu.KindCUDA }

// Available is nil with a usable device, else the *gpu.DeviceError
// (DeviceUnavailable) saying why there is none.
func (b *Backend) Available() error {
	r := b.probe()
	if r.Err != nil {
		return r.Err
	}
	if len(r.Devices) == 0 {
		return &gpu.DeviceError{Kind: gpu.DeviceUnavailable, Backend: "cuda", Reason: "no device"}
	}
	return nil
}

// Supports reports whether spec has a CUDA implementation for dt.
func (b *Backend) Supports(spec *gpu.KernelSpec, dt gpu.DType) bool {
	return spec.Device[string(gpu.KindCUDA)] != nil && spec.Supports(dt)
}

// Execute runs spec's CUDA implementation.
func (b *Backend) Execute(ctx context.Context, spec *gpu.KernelSpec, in []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer, scalars []float64) error {
	if err := b.Available(); err != nil {
		return err
	}
	f := spec.Device[string(gpu.KindCUDA)]
	if f == nil {
		return &gpu.DeviceError{Kind: gpu.DeviceUnavailable, Backend: "cuda", Reason: fmt.Sprintf("kernel %q", spec.Name), Err: ErrNoDeviceKernels}
	}
	return f(ctx, in, out, scalars)
}

// ExecuteBatch runs the items one after the other.
func (b *Backend) ExecuteBatch(ctx context.Context, spec *gpu.KernelSpec, items [][]*gpu.UnifiedBuffer, outs []*gpu.UnifiedBuffer, scalars []float64) error {
	for i, in := range items {
		if err := b.Execute(ctx, spec, in, outs[i], scalars); err != nil {
			return err
		}
	}
	return nil
}

// Allocator is nil until device memory is implemented for one-shot kernels.
func (b *Backend) Allocator() gpu.Allocator { return nil }

// RunPTX loads ptx (cached per image) in the backend's context and runs its
// kernel entry over in and out with scalars, with the calling convention of
// run-time registered source kernels (see nvrtc.go).
func (b *Backend) RunPTX(ctx context.Context, ptx []byte, entry string, in []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer, scalars []float64) error {
	if err := b.Available(); err != nil {
		return err
	}
	return &gpu.DeviceError{Kind: gpu.DeviceUnavailable, Backend: "cuda", Reason: fmt.Sprintf("kernel %q", entry), Err: ErrNoDeviceKernels}
}
