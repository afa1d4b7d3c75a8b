package cuda

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cpu"
)

// squareSpec is a valid source kernel: y = x² · scale for f32.
func squareSpec() SourceSpec {
	return SourceSpec{
		Name: "test_square", Code: squareSource, Entry: "rc_test_square",
		DTypes: []gpu.DType{gpu.F32}, Inputs: 1, Elementwise: true,
		Scalars: []gpu.ScalarSpec{{Name: "scale", Default: 1}},
	}
}

// squareCPU is the Go fallback of squareSpec.
func squareCPU(_ context.Context, in []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer, scalars []float64) error {
	x, err := gpu.HostSlice[float32](in[0])
	if err != nil {
		return err
	}
	y, err := gpu.HostSlice[float32](out)
	if err != nil {
		return err
	}
	for i := range x {
		y[i] = x[i] * x[i] * float32(scalars[0])
	}
	return nil
}

func TestSourceKernelRejectsBadSpecs(t *testing.T) {
	// Validation comes before compiling: no NVRTC needed.
	b := NewBackend()
	for _, tc := range []struct {
		name   string
		b      *Backend
		change func(*SourceSpec)
		reason string
	}{
		{"nil backend", nil, func(*SourceSpec) {}, "nil CUDA backend"},
		{"no name", b, func(s *SourceSpec) { s.Name = "" }, "empty name"},
		{"no code", b, func(s *SourceSpec) { s.Code = " " }, "no CUDA source code"},
		{"no entry", b, func(s *SourceSpec) { s.Entry = "" }, "no entry for dtype f32"},
		{"no dtypes", b, func(s *SourceSpec) { s.DTypes = nil }, "no supported dtypes"},
		{"no inputs", b, func(s *SourceSpec) { s.Inputs = 0 }, "at least one input"},
		{"invalid dtype", b, func(s *SourceSpec) { s.DTypes = []gpu.DType{gpu.DType(200)} }, "invalid dtype"},
		{"repeated dtype", b, func(s *SourceSpec) { s.DTypes = []gpu.DType{gpu.F32, gpu.F32} }, "listed twice"},
		{"entry for another dtype", b, func(s *SourceSpec) { s.Entries = map[gpu.DType]string{gpu.F64: "x"} }, "not in DTypes"},
		{"missing per-dtype entry", b, func(s *SourceSpec) {
			s.Entry, s.DTypes, s.Entries = "", []gpu.DType{gpu.F32, gpu.F64}, map[gpu.DType]string{gpu.F32: "x"}
		}, "no entry for dtype f64"},
		{"too many parameters", b, func(s *SourceSpec) {
			s.Scalars = nil
			for i := range MaxKernelArgs {
				s.Scalars = append(s.Scalars, gpu.ScalarSpec{Name: string(rune('a'+i%26)) + strings.Repeat("x", i/26)})
			}
		}, "kernel parameters"},
	} {
		spec := squareSpec()
		tc.change(&spec)
		ks, err := SourceKernel(context.Background(), tc.b, spec)
		var re *gpu.RegistrationError
		if ks != nil || !errors.As(err, &re) || !errors.Is(err, gpu.ErrRegistration) {
			t.Errorf("%s: %v, %v; want a *gpu.RegistrationError", tc.name, ks, err)
			continue
		}
		if !strings.Contains(re.Reason, tc.reason) {
			t.Errorf("%s: reason %q lacks %q", tc.name, re.Reason, tc.reason)
		}
	}
	// A repeated scalar name is caught (by KernelSpec.Validate, after
	// compiling) only where NVRTC is present.
	if _, err := LoadNVRTC(); err == nil {
		spec := squareSpec()
		spec.Scalars = append(spec.Scalars, spec.Scalars[0])
		spec.Code = strings.Replace(spec.Code, "double scale,", "double scale, double scale2,", 1)
		if _, err := SourceKernel(context.Background(), b, spec); !errors.Is(err, gpu.ErrRegistration) {
			t.Errorf("repeated scalar: %v", err)
		}
	}
}

func TestSourceKernelCallingConventionChecked(t *testing.T) {
	needNVRTC(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, code, entry, reason string
	}{
		{"int count", strings.Replace(squareSource, "unsigned long long n", "int n", 1), "rc_test_square", "(.u64, .u64, .f64, .u32)"},
		{"float scalar", strings.Replace(squareSource, "double scale", "float scale", 1), "rc_test_square", ".f32"},
		{"scalar not declared in the spec", squareSource, "rc_test_square", "(.u64, .u64, .f64, .u64) do not follow the calling convention (.u64, .u64, .u64)"},
	} {
		spec := squareSpec()
		spec.Code, spec.Entry = tc.code, tc.entry
		if tc.name == "scalar not declared in the spec" {
			spec.Scalars = nil
		}
		_, err := SourceKernel(ctx, NewBackend(), spec)
		var re *gpu.RegistrationError
		if !errors.As(err, &re) || !strings.Contains(re.Reason, tc.reason) {
			t.Errorf("%s: %v; want a *gpu.RegistrationError with %q", tc.name, err, tc.reason)
		}
	}
}

func TestSourceKernelCompilationError(t *testing.T) {
	needNVRTC(t)
	ctx := context.Background()
	spec := squareSpec()
	spec.Code += "\nstatic int oops = undeclared_name;\n"
	_, err := SourceKernel(ctx, NewBackend(), spec)
	var ce *gpu.CompilationError
	if !errors.As(err, &ce) || !errors.Is(err, gpu.ErrCompilation) {
		t.Fatalf("%T %v, want *gpu.CompilationError", err, err)
	}
	if ce.Kernel != spec.Name || !strings.Contains(ce.Log, "test_square.cu(") || !strings.Contains(ce.Log, "undeclared_name") {
		t.Errorf("Kernel %q, Log:\n%s", ce.Kernel, ce.Log)
	}
	// An entry that is not a __global__ function: NVRTC rejects its name
	// expression.
	spec = squareSpec()
	spec.Code += "extern \"C\" __device__ float rc_helper(float v) { return v; }\n"
	spec.Entry = "rc_helper"
	if _, err := SourceKernel(ctx, NewBackend(), spec); !errors.As(err, &ce) || !strings.Contains(ce.Log, "non-__global__") {
		t.Errorf("device function as entry: %v", err)
	}
	// An entry the source does not define.
	spec = squareSpec()
	spec.Entry = "rc_absent"
	if _, err := SourceKernel(ctx, NewBackend(), spec); !errors.As(err, &ce) || !strings.Contains(ce.Log, "rc_absent") {
		t.Errorf("absent entry: %v", err)
	}
	// Cancelled.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := SourceKernel(cctx, NewBackend(), squareSpec()); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestSourceKernelRuns registers a source kernel and runs its CUDA
// implementation: on a machine without a usable device it returns the
// backend's DeviceUnavailable error; with one, it computes.
func TestSourceKernelRuns(t *testing.T) {
	needNVRTC(t)
	ctx := context.Background()
	b := NewBackend()
	ks, err := SourceKernel(ctx, b, squareSpec())
	if err != nil {
		t.Fatal(err)
	}
	if ks.CPU != nil || ks.Device[string(gpu.KindCUDA)] == nil || !ks.Elementwise || ks.Name != "test_square" {
		t.Fatalf("spec %+v", ks)
	}
	if err := gpu.NewRegistry().Register(ks); err != nil {
		t.Fatal(err)
	}
	x, _ := gpu.NewBuffer([]float32{1, 2, 3})
	y, _ := gpu.NewBuffer([]float32{0, 0, 0})
	dev := ks.Device[string(gpu.KindCUDA)]

	// Wrong calls are argument errors, before the backend is asked.
	if err := dev(ctx, nil, y, []float64{2}); !errors.Is(err, gpu.ErrInputCount) {
		t.Errorf("no inputs: %v", err)
	}
	if err := dev(ctx, []*gpu.UnifiedBuffer{x}, y, nil); !errors.Is(err, gpu.ErrArgument) {
		t.Errorf("no scalars: %v", err)
	}
	xi, _ := gpu.NewBuffer([]int32{1, 2, 3})
	if err := dev(ctx, []*gpu.UnifiedBuffer{xi}, y, []float64{2}); !errors.Is(err, gpu.ErrUnsupportedDType) {
		t.Errorf("int32 input: %v", err)
	}

	err = dev(ctx, []*gpu.UnifiedBuffer{x}, y, []float64{2})
	if avail := b.Available(); avail != nil {
		var de *gpu.DeviceError
		if !errors.As(err, &de) || de.Kind != gpu.DeviceUnavailable || !errors.Is(err, gpu.ErrDeviceNotAvailable) {
			t.Fatalf("without a device: %v, want the backend's DeviceUnavailable error (%v)", err, avail)
		}
		if err := b.Execute(ctx, ks, []*gpu.UnifiedBuffer{x}, y, []float64{2}); !errors.Is(err, gpu.ErrDeviceNotAvailable) {
			t.Fatalf("Execute without a device: %v", err)
		}
		t.Logf("no device, as expected here: %v", err)
		return
	}
	if errors.Is(err, ErrNoDeviceKernels) {
		t.Skipf("this build's Backend.RunPTX does not run PTX yet: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	got, err := gpu.ToSlice[float32](ctx, y) // the device wrote y: copy it back
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []float32{2, 8, 18}) {
		t.Fatalf("y = %v, want [2 8 18]", got)
	}
}

// TestSourceKernelSelection checks what the orchestrator's selector does
// with source kernels: without a device, one with a Go fallback runs on the
// CPU and one without reports that no backend can run it.
func TestSourceKernelSelection(t *testing.T) {
	needNVRTC(t)
	ctx := context.Background()
	b := NewBackend()
	if b.Available() == nil {
		t.Skip("a CUDA device is usable: the no-device selection is not observable")
	}
	sel := gpu.NewSelector([]gpu.Backend{cpu.NewBackend(), b}, gpu.SelectionPolicy{Accelerator: gpu.PreferCUDA})

	deviceOnly, err := SourceKernel(ctx, b, squareSpec())
	if err != nil {
		t.Fatal(err)
	}
	_, err = sel.Choose(deviceOnly, gpu.F32, 1<<20, "")
	var de *gpu.DeviceError
	if !errors.As(err, &de) || de.Kind != gpu.DeviceUnavailable || !strings.Contains(err.Error(), "test_square") {
		t.Fatalf("device-only kernel without a device: %v", err)
	}
	if _, err := sel.Choose(deviceOnly, gpu.F32, 1<<20, "cuda"); !errors.Is(err, gpu.ErrDeviceNotAvailable) {
		t.Fatalf("forced cuda: %v", err)
	}

	spec := squareSpec()
	spec.Name, spec.CPU = "test_square_fallback", squareCPU
	withCPU, err := SourceKernel(ctx, b, spec)
	if err != nil {
		t.Fatal(err)
	}
	if withCPU.CPU == nil || withCPU.Device[string(gpu.KindCUDA)] == nil {
		t.Fatal("fallback spec lacks an implementation")
	}
	be, err := sel.Choose(withCPU, gpu.F32, 1<<20, "")
	if err != nil || be.Kind() != gpu.KindCPU {
		t.Fatalf("Choose = %v, %v; want the CPU", be, err)
	}
	x, _ := gpu.NewBuffer([]float32{1, 2, 3})
	y, _ := gpu.NewBuffer([]float32{0, 0, 0})
	if err := be.Execute(ctx, withCPU, []*gpu.UnifiedBuffer{x}, y, []float64{2}); err != nil {
		t.Fatal(err)
	}
	if got, _ := gpu.HostSlice[float32](y); !slices.Equal(got, []float32{2, 8, 18}) {
		t.Fatalf("y = %v", got)
	}
}

func TestSourceKernelTemplateEntries(t *testing.T) {
	needNVRTC(t)
	spec := SourceSpec{
		Name: "test_axpy", Inputs: 2, DTypes: []gpu.DType{gpu.F32, gpu.F64}, Elementwise: true,
		Scalars: []gpu.ScalarSpec{{Name: "a", Default: 1}},
		Entries: map[gpu.DType]string{gpu.F32: "axpy<float>", gpu.F64: "axpy<double>"},
		Headers: map[string]string{"index.cuh": "inline unsigned long long gid() { return blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; }\n"},
		Code: `#include "index.cuh"
template <typename T>
__global__ void axpy(const T *x, const T *y, T *out, double a, unsigned long long n) {
	unsigned long long i = gid();
	if (i < n) out[i] = (T)a * x[i] + y[i];
}
`,
	}
	ks, err := SourceKernel(context.Background(), NewBackend(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if ks.OutShape == nil || !strings.Contains(ks.Description, "axpy<double>") || !strings.Contains(ks.Description, "axpy<float>") {
		t.Fatalf("spec %+v", ks)
	}
	// The default output shape: every input has input 0's shape.
	if s, err := ks.OutShape([]gpu.Shape{{2, 3}, {2, 3}}, []float64{1}); err != nil || !s.Equal(gpu.Shape{2, 3}) {
		t.Errorf("OutShape = %v, %v", s, err)
	}
	if _, err := ks.OutShape([]gpu.Shape{{2, 3}, {3, 2}}, []float64{1}); !errors.Is(err, gpu.ErrShape) {
		t.Errorf("OutShape of mismatched inputs: %v", err)
	}
}

// TestCheckEntry checks the PTX parameter-list parser on hand-written PTX,
// so it runs without NVRTC.
func TestCheckEntry(t *testing.T) {
	const ptx = `
.func  (.param .b32 func_retval0) helper(
	.param .b32 helper_param_0
)
{ ret; }
.visible .entry good(
	.param .u64 .ptr .global .align 4 good_param_0,
	.param .b64 good_param_1,
	.param .f64 good_param_2,
	.param .u64 good_param_3
)
{ ret; }
.visible .entry bystruct(
	.param .align 8 .b8 bystruct_param_0[16]
)
{ ret; }
`
	for _, tc := range []struct {
		name            string
		inputs, scalars int
		err             string
	}{
		{"good", 1, 1, ""},
		{"good", 2, 0, "(.u64, .u64, .f64, .u64) do not follow the calling convention (.u64, .u64, .u64, .u64)"},
		{"helper", 1, 0, "device function"},
		{"absent", 1, 0, "no .entry absent"},
		{"bystruct", 1, 0, "parameters (.align) do not follow"},
	} {
		err := checkEntry([]byte(ptx), tc.name, tc.inputs, tc.scalars)
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s(%d, %d): %v, want %q", tc.name, tc.inputs, tc.scalars, err, tc.err)
		}
	}
}
