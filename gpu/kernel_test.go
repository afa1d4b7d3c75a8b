package gpu_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/ringactor/ringactor/gpu"
)

func TestResolveScalars(t *testing.T) {
	spec := selSpec("clamp")
	spec.Scalars = []gpu.ScalarSpec{{Name: "lo", Default: -1}, {Name: "hi", Default: 1}, {Name: "eps", Default: 0.5}}
	cases := []struct {
		given, want []float64
	}{
		{nil, []float64{-1, 1, 0.5}},
		{[]float64{}, []float64{-1, 1, 0.5}},
		{[]float64{-9}, []float64{-9, 1, 0.5}},
		{[]float64{-9, 9}, []float64{-9, 9, 0.5}},
		{[]float64{-9, 9, 0}, []float64{-9, 9, 0}},
	}
	for _, c := range cases {
		got, err := spec.ResolveScalars(c.given, nil)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ResolveScalars(%v) = %v, %v; want %v", c.given, got, err, c.want)
		}
	}

	// dst is reused: stale contents are overwritten, its array kept.
	dst := make([]float64, 5, 8)
	for i := range dst {
		dst[i] = 42
	}
	got, err := spec.ResolveScalars([]float64{7}, dst)
	if err != nil || !slices.Equal(got, []float64{7, 1, 0.5}) {
		t.Fatalf("ResolveScalars into dst = %v, %v", got, err)
	}
	if &got[0] != &dst[0] {
		t.Error("ResolveScalars did not reuse dst")
	}
}

func TestResolveScalarsTooMany(t *testing.T) {
	spec := selSpec("scale")
	spec.Scalars = []gpu.ScalarSpec{{Name: "factor", Default: 1}}
	got, err := spec.ResolveScalars([]float64{1, 2}, nil)
	var ae *gpu.ArgumentError
	if got != nil || !errors.Is(err, gpu.ErrArgument) || !errors.As(err, &ae) {
		t.Fatalf("ResolveScalars(2 for 1) = %v, %v; want *ArgumentError(ErrArgument)", got, err)
	}
	if ae.Kernel != "scale" || ae.Arg != "scalars" {
		t.Errorf("ArgumentError = %+v", ae)
	}

	// A kernel without scalars takes none.
	if _, err := selSpec("neg").ResolveScalars([]float64{1}, nil); !errors.Is(err, gpu.ErrArgument) {
		t.Errorf("scalar for a kernel without scalars: %v", err)
	}
	if got, err := selSpec("neg").ResolveScalars(nil, nil); err != nil || len(got) != 0 {
		t.Errorf("no scalars: %v, %v", got, err)
	}
}

func TestKernelSpecDTypes(t *testing.T) {
	plain := selSpec("add")
	plain.Inputs = 2
	for _, dt := range []gpu.DType{gpu.F32, gpu.S64} {
		if plain.InputDType(dt, 0) != dt || plain.InputDType(dt, 1) != dt || plain.OutputDType(dt) != dt {
			t.Errorf("%v: without funcs every dtype should be the primary one", dt)
		}
	}

	// Input 1 is an index (u32) whatever the primary dtype; the output s64.
	mixed := selSpec("mixed")
	mixed.Inputs = 2
	mixed.DTypes = []gpu.DType{gpu.F32, gpu.F64}
	mixed.InputDTypes = func(p gpu.DType) []gpu.DType { return []gpu.DType{p, gpu.U32} }
	mixed.OutDType = func(gpu.DType) gpu.DType { return gpu.S64 }
	if got := mixed.InputDType(gpu.F64, 0); got != gpu.F64 {
		t.Errorf("InputDType(f64, 0) = %v", got)
	}
	if got := mixed.InputDType(gpu.F64, 1); got != gpu.U32 {
		t.Errorf("InputDType(f64, 1) = %v", got)
	}
	if got := mixed.OutputDType(gpu.F32); got != gpu.S64 {
		t.Errorf("OutputDType(f32) = %v", got)
	}
}

func TestKernelSpecSupports(t *testing.T) {
	spec := selSpec("k")
	spec.DTypes = []gpu.DType{gpu.F32, gpu.U8}
	for _, dt := range gpu.DTypes() {
		want := dt == gpu.F32 || dt == gpu.U8
		if spec.Supports(dt) != want {
			t.Errorf("Supports(%v) = %v", dt, !want)
		}
	}
	if spec.Supports(gpu.DTypeInvalid) {
		t.Error("Supports(invalid)")
	}
}

func TestKernelSpecValidate(t *testing.T) {
	if err := selSpec("ok").Validate(); err != nil {
		t.Errorf("Validate(valid) = %v", err)
	}
	var nilSpec *gpu.KernelSpec
	if err := nilSpec.Validate(); !errors.Is(err, gpu.ErrRegistration) {
		t.Errorf("Validate(nil) = %v", err)
	}
}
