package cuda

import (
	"context"
	"errors"
	"testing"

	"github.com/ringactor/ringactor/gpu"
)

// TestBackendReportsWhyUnavailable: on a machine without a device (this one,
// with or without libcuda1) the backend is unavailable with the probe's
// reason; with a device it is available and a kernel it has no device code
// for is ErrNoDeviceKernels.
func TestBackendReportsWhyUnavailable(t *testing.T) {
	b := NewBackend()
	defer b.Close() // with a device, stops the context's thread (goleak)
	spec := &gpu.KernelSpec{Name: "k", DTypes: []gpu.DType{gpu.F32}}
	if b.Supports(spec, gpu.F32) {
		t.Fatal("supports a kernel without a CUDA implementation")
	}
	err := b.Available()
	r := b.Report()
	if len(r.Devices) == 0 {
		if !errors.Is(err, gpu.ErrDeviceNotAvailable) || err.Error() == "" {
			t.Fatalf("no device, Available = %v", err)
		}
		if e := b.Execute(context.Background(), spec, nil, nil, nil); !errors.Is(e, gpu.ErrDeviceNotAvailable) {
			t.Fatalf("Execute without a device = %v", e)
		}
		t.Logf("cuda backend unavailable (expected here): %v", err)
		return
	}
	if err != nil {
		t.Fatalf("device present but Available = %v", err)
	}
	if e := b.Execute(context.Background(), spec, nil, nil, nil); !errors.Is(e, ErrNoDeviceKernels) {
		t.Fatalf("Execute of a kernel without CUDA code = %v", e)
	}
}
