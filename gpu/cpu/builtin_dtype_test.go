package cpu

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/ringactor/ringactor/gpu"
)

// builtinSpec returns the built-in kernel named name.
func builtinSpec(t *testing.T, name string) *gpu.KernelSpec {
	t.Helper()
	for _, s := range BuiltinKernels() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no built-in kernel %q", name)
	return nil
}

// runBuiltin runs a built-in kernel on the CPU on inputs of T into an
// output of outShape and dtype out (the inputs' when zero).
func runBuiltin[T gpu.Number, O gpu.Number](t *testing.T, name string, outShape gpu.Shape, sc []float64, in ...[]T) ([]O, error) {
	t.Helper()
	bufs := make([]*gpu.UnifiedBuffer, len(in))
	for i, v := range in {
		b, err := gpu.NewBuffer(v, len(v))
		if err != nil {
			t.Fatal(err)
		}
		bufs[i] = b
	}
	out, err := gpu.NewBuffer(make([]O, outShape.Len()), outShape...)
	if err != nil {
		t.Fatal(err)
	}
	if err := builtinSpec(t, name).CPU(context.Background(), bufs, out, sc); err != nil {
		return nil, err
	}
	return gpu.HostSlice[O](out)
}

// checkEveryDType runs add, scale by 3, sum and mean on [1 2 3] of T: each
// picks T's instantiation (a wrong one fails on the buffer's dtype).
func checkEveryDType[T gpu.Number](t *testing.T) {
	t.Run(gpu.DTypeOf[T]().String(), func(t *testing.T) {
		x := []T{1, 2, 3}
		if got, err := runBuiltin[T, T](t, "add", gpu.Shape{3}, nil, x, x); err != nil || !slices.Equal(got, []T{2, 4, 6}) {
			t.Errorf("add = %v, %v", got, err)
		}
		if got, err := runBuiltin[T, T](t, "scale", gpu.Shape{3}, []float64{3}, x); err != nil || !slices.Equal(got, []T{3, 6, 9}) {
			t.Errorf("scale 3 = %v, %v", got, err)
		}
		if got, err := runBuiltin[T, T](t, "sum", gpu.Shape{1}, nil, x); err != nil || got[0] != 6 {
			t.Errorf("sum = %v, %v", got, err)
		}
		if got, err := runBuiltin[T, float64](t, "mean", gpu.Shape{1}, nil, x); err != nil || got[0] != 2 {
			t.Errorf("mean = %v, %v", got, err)
		}
	})
}

// TestBuiltinsEveryDType runs the dtype-generic built-ins on each dtype.
func TestBuiltinsEveryDType(t *testing.T) {
	checkEveryDType[float32](t)
	checkEveryDType[float64](t)
	checkEveryDType[int32](t)
	checkEveryDType[int64](t)
	checkEveryDType[uint32](t)
	checkEveryDType[uint8](t)
}

// TestScaleWrapsIntegers: an integer scale converts the factor through
// int64, so a negative factor wraps an unsigned dtype; a fractional one is
// refused before anything runs.
func TestScaleWrapsIntegers(t *testing.T) {
	got, err := runBuiltin[uint8, uint8](t, "scale", gpu.Shape{2}, []float64{-1}, []uint8{1, 2})
	if err != nil || !slices.Equal(got, []uint8{255, 254}) {
		t.Fatalf("uint8 scale -1 = %v, %v", got, err)
	}
	if _, err := runBuiltin[int32, int32](t, "scale", gpu.Shape{2}, []float64{0.5}, []int32{1, 2}); !errors.Is(err, gpu.ErrArgument) {
		t.Fatalf("int32 scale 0.5 = %v, want ErrArgument", err)
	}
	got32, err := runBuiltin[float32, float32](t, "scale", gpu.Shape{2}, []float64{0.5}, []float32{1, 2})
	if err != nil || !slices.Equal(got32, []float32{0.5, 1}) {
		t.Fatalf("float32 scale 0.5 = %v, %v", got32, err)
	}
}
