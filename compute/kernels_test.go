package compute

import (
	"context"

	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cpu"
)

// randomBuffer fills a buffer of dt with small random values.
func randomBuffer(t *testing.T, rng *rand.Rand, dt gpu.DType, shape ...int) *gpu.UnifiedBuffer {
	t.Helper()
	n := gpu.Shape(shape).Len()
	var b *gpu.UnifiedBuffer
	var err error
	switch dt {
	case gpu.F32:
		b, err = gpu.NewBuffer(generate(n, func() float32 { return float32(rng.NormFloat64()) }), shape...)
	case gpu.F64:
		b, err = gpu.NewBuffer(generate(n, rng.NormFloat64), shape...)
	case gpu.S32:
		b, err = gpu.NewBuffer(generate(n, func() int32 { return int32(rng.IntN(200) - 100) }), shape...)
	case gpu.S64:
		b, err = gpu.NewBuffer(generate(n, func() int64 { return int64(rng.IntN(200) - 100) }), shape...)
	case gpu.U32:
		b, err = gpu.NewBuffer(generate(n, func() uint32 { return uint32(rng.IntN(200)) }), shape...)
	case gpu.U8:
		b, err = gpu.NewBuffer(generate(n, func() uint8 { return uint8(rng.IntN(256)) }), shape...)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func generate[T any](n int, f func() T) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = f()
	}
	return s
}

// direct computes what a built-in kernel should give by calling the CPU
// kernel functions on the buffers' slices.
func direct[T gpu.Number](t *testing.T, kernel string, in []*gpu.UnifiedBuffer, sc []float64) []T {
	t.Helper()
	ctx := context.Background()
	x := read[T](t, in[0])
	out := make([]T, len(x))
	var err error
	switch kernel {
	case "add":
		err = cpu.Add(ctx, out, x, read[T](t, in[1]))
	case "subtract":
		err = cpu.Sub(ctx, out, x, read[T](t, in[1]))
	case "multiply":
		err = cpu.Mul(ctx, out, x, read[T](t, in[1]))
	case "scale":
		err = cpu.Scale(ctx, out, x, T(sc[0]))
	case "relu":
		err = cpu.ReLU(ctx, out, x)
	case "sum":
		var v T
		v, err = cpu.Sum(ctx, x)
		out = []T{v}
	case "min":
		var v T
		v, err = cpu.Min(ctx, x)
		out = []T{v}
	case "max":
		var v T
		v, err = cpu.Max(ctx, x)
		out = []T{v}
	case "matmul":
		s := in[0].Shape()
		n := in[1].Shape()[1]
		out = make([]T, s[0]*n)
		err = cpu.MatMul(ctx, out, x, read[T](t, in[1]), s[0], s[1], n)
	case "blur":
		s := in[0].Shape()
		err = cpu.GaussianBlur(ctx, out, x, s[0], s[1], 1, int(sc[0]), sc[1])
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func checkKernel[T gpu.Number](t *testing.T, rt *Orchestrator, kernel string, in []*gpu.UnifiedBuffer, sc ...float64) {
	t.Helper()
	out, err := rt.Execute(testCtx(t), kernel, in, nil, WithScalars(sc...))
	if err != nil {
		t.Fatalf("%s %v: %v", kernel, in[0].DType(), err)
	}
	got, want := read[T](t, out), direct[T](t, kernel, in, sc)
	if !slices.EqualFunc(got, want, func(a, b T) bool { return a == b || a != a && b != b }) {
		t.Fatalf("%s %v: got %v, want %v", kernel, in[0].DType(), got[:min(8, len(got))], want[:min(8, len(want))])
	}
	_ = out.Free()
}

// TestBuiltinKernelsEveryDType runs each built-in kernel through Execute for
// every dtype it supports and compares with the CPU kernel called directly.
func TestBuiltinKernelsEveryDType(t *testing.T) {
	rt := newTestOrchestrator(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dt := range gpu.DTypes() {
		t.Run(dt.String(), func(t *testing.T) {
			run := func(kernel string, nIn int, shape []int, sc ...float64) {
				in := make([]*gpu.UnifiedBuffer, nIn)
				for i := range in {
					in[i] = randomBuffer(t, rng, dt, shape...)
				}
				if kernel == "matmul" {
					in[1] = randomBuffer(t, rng, dt, shape[1], 5)
				}
				switch dt {
				case gpu.F32:
					checkKernel[float32](t, rt, kernel, in, sc...)
				case gpu.F64:
					checkKernel[float64](t, rt, kernel, in, sc...)
				case gpu.S32:
					checkKernel[int32](t, rt, kernel, in, sc...)
				case gpu.S64:
					checkKernel[int64](t, rt, kernel, in, sc...)
				case gpu.U32:
					checkKernel[uint32](t, rt, kernel, in, sc...)
				case gpu.U8:
					checkKernel[uint8](t, rt, kernel, in, sc...)
				}
			}
			for _, k := range []string{"add", "subtract", "multiply"} {
				run(k, 2, []int{300_001})
			}
			run("scale", 1, []int{1000}, 3)
			run("relu", 1, []int{1000})
			for _, k := range []string{"sum", "min", "max"} {
				run(k, 1, []int{100_000})
			}
			run("matmul", 2, []int{7, 9})
			run("blur", 1, []int{17, 23}, 2, 1.5)
		})
	}
}

// TestKernelsListedWithBackends: every built-in kernel runs on the CPU
// backend for each dtype it declares.
func TestKernelsListedWithBackends(t *testing.T) {
	rt := newTestOrchestrator(t)
	names := map[string]bool{}
	for _, s := range rt.Kernels() {
		names[s.Name] = true
		for _, dt := range s.DTypes {
			if !rt.Backends()[0].Supports(s, dt) {
				t.Errorf("cpu does not support %s %v", s.Name, dt)
			}
		}
	}
	for _, want := range []string{"add", "subtract", "multiply", "scale", "relu", "leaky_relu", "matmul", "blur", "sum", "min", "max", "mean", "spmv"} {
		if !names[want] {
			t.Errorf("kernel %s missing", want)
		}
	}

}
