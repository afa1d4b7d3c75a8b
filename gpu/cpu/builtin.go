package cpu

import (
	"context"
	"fmt"
	"math"

	"github.com/ringactor/ringactor/gpu"
)

var (
	allDTypes   = []gpu.DType{gpu.F32, gpu.F64, gpu.S32, gpu.S64, gpu.U32, gpu.U8}
	floatDTypes = []gpu.DType{gpu.F32, gpu.F64}
)

// BuiltinKernels returns the named kernels of the orchestrator with their
// CPU implementations:
//
//   - add, subtract, multiply: elementwise, inputs of equal shape; integers
//     wrap around (two's complement), floats follow IEEE 754 (NaN propagates);
//   - scale (factor): elementwise a×factor; integer dtypes need an integral
//     factor and wrap around;
//   - relu: max(x, 0), NaN stays NaN, the identity on unsigned dtypes;
//   - leaky_relu (slope): x > 0 ? x : slope×x, floats only;
//   - matmul: 2-D row-major [m×k]·[k×n] (gonum BLAS for floats);
//   - blur (radius, sigma): separable Gaussian on H×W or H×W×C images, edges
//     replicated; integer images are rounded and saturated;
//   - sum, min, max: to one element of the input's dtype (sum wraps for
//     integers; min and max propagate NaN); mean: to one float64;
//   - spmv: CSR sparse matrix × vector (values, column indices s32, row
//     pointers s32, x), floats only — PageRank's step.
func BuiltinKernels() []*gpu.KernelSpec {
	return []*gpu.KernelSpec{
		binarySpec("add", "elementwise a + b", binaryFuncs{Add[float32], Add[float64], Add[int32], Add[int64], Add[uint32], Add[uint8]}),
		binarySpec("subtract", "elementwise a − b", binaryFuncs{Sub[float32], Sub[float64], Sub[int32], Sub[int64], Sub[uint32], Sub[uint8]}),
		binarySpec("multiply", "elementwise a × b", binaryFuncs{Mul[float32], Mul[float64], Mul[int32], Mul[int64], Mul[uint32], Mul[uint8]}),
		{
			Name: "scale", Description: "elementwise a × factor", Inputs: 1, DTypes: allDTypes, Elementwise: true, Cost: 1,
			Scalars: []gpu.ScalarSpec{{Name: "factor", Default: 1}}, OutShape: sameShape, CPU: scaleKernel,
		},
		{
			Name: "relu", Description: "elementwise max(x, 0)", Inputs: 1, DTypes: allDTypes, Elementwise: true, Cost: 1,
			OutShape: sameShape, CPU: unaryKernel(unaryFuncs{ReLU[float32], ReLU[float64], ReLU[int32], ReLU[int64], ReLU[uint32], ReLU[uint8]}),
		},
		{
			Name: "leaky_relu", Description: "elementwise x > 0 ? x : slope·x", Inputs: 1, DTypes: floatDTypes, Elementwise: true, Cost: 1,
			Scalars: []gpu.ScalarSpec{{Name: "slope", Default: 0.01}}, OutShape: sameShape, CPU: leakyKernel,
		},
		{
			Name: "matmul", Description: "2-D matrix product [m×k]·[k×n]", Inputs: 2, DTypes: allDTypes,
			OutShape: matmulShape, CPU: matmulKernel, Cost: 64,
		},
		{
			Name: "blur", Description: "2-D Gaussian blur of H×W or H×W×C images", Inputs: 1, DTypes: allDTypes, Cost: 16,
			Scalars: []gpu.ScalarSpec{{Name: "radius", Default: 1}, {Name: "sigma", Default: 1}}, OutShape: blurShape, CPU: blurKernel,
		},
		reduceSpec("sum", "sum of all elements", reduceFuncs{Sum[float32], Sum[float64], Sum[int32], Sum[int64], Sum[uint32], Sum[uint8]}),
		reduceSpec("min", "smallest element (NaN if any is NaN)", reduceFuncs{Min[float32], Min[float64], Min[int32], Min[int64], Min[uint32], Min[uint8]}),
		reduceSpec("max", "largest element (NaN if any is NaN)", reduceFuncs{Max[float32], Max[float64], Max[int32], Max[int64], Max[uint32], Max[uint8]}),
		{
			Name: "mean", Description: "mean of all elements, as float64", Inputs: 1, DTypes: allDTypes, Cost: 1,
			OutDType: func(gpu.DType) gpu.DType { return gpu.F64 }, OutShape: scalarShape, CPU: meanKernel,
		},
		{
			Name: "spmv", Description: "CSR sparse matrix × vector: values, col (s32), rowptr (s32), x", Inputs: 4, DTypes: floatDTypes, Cost: 4,
			InputDTypes: func(dt gpu.DType) []gpu.DType { return []gpu.DType{dt, gpu.S32, gpu.S32, dt} },
			OutShape:    spmvShape, CPU: spmvKernel,
		},
	}
}

// sameShape is the output shape of unary elementwise kernels. (Output
// shapes are copied into the output buffer; no need to clone here.)
func sameShape(in []gpu.Shape, _ []float64) (gpu.Shape, error) { return in[0], nil }

// scalarShape is the output shape of reductions.
func scalarShape([]gpu.Shape, []float64) (gpu.Shape, error) { return gpu.Shape{1}, nil }

func equalShapes(in []gpu.Shape, _ []float64) (gpu.Shape, error) {
	for i, s := range in[1:] {
		if !s.Equal(in[0]) {
			return nil, &gpu.ShapeError{Shape: s.Clone(), Reason: fmt.Sprintf("input %d must have input 0's shape %v", i+1, in[0])}
		}
	}
	return in[0], nil
}

func matmulShape(in []gpu.Shape, _ []float64) (gpu.Shape, error) {
	a, b := in[0], in[1]
	if len(a) != 2 || len(b) != 2 {
		return nil, &gpu.ShapeError{Shape: a.Clone(), Reason: fmt.Sprintf("matmul takes 2-D inputs, got %v and %v", a, b)}
	}
	if a[1] != b[0] {
		return nil, &gpu.ShapeError{Shape: b.Clone(), Reason: fmt.Sprintf("inner dimensions differ: %v · %v", a, b)}
	}
	return gpu.Shape{a[0], b[1]}, nil
}

func blurShape(in []gpu.Shape, sc []float64) (gpu.Shape, error) {
	if len(in[0]) != 2 && len(in[0]) != 3 {
		return nil, &gpu.ShapeError{Shape: in[0].Clone(), Reason: "blur takes an H×W or H×W×C image"}
	}
	if r := sc[0]; r < 0 || r != math.Trunc(r) || r > 1<<16 {
		return nil, &gpu.ArgumentError{Kernel: "blur", Arg: "radius", Reason: fmt.Sprintf("%v is not an integer in [0, 65536]", r), Err: gpu.ErrArgument}
	}
	if s := sc[1]; !(s > 0) || math.IsInf(s, 0) {
		return nil, &gpu.ArgumentError{Kernel: "blur", Arg: "sigma", Reason: fmt.Sprintf("%v is not a positive finite number", s), Err: gpu.ErrArgument}
	}
	return in[0].Clone(), nil
}

func spmvShape(in []gpu.Shape, _ []float64) (gpu.Shape, error) {
	for i, s := range in {
		if len(s) != 1 {
			return nil, &gpu.ShapeError{Shape: s.Clone(), Reason: fmt.Sprintf("spmv input %d must be 1-D", i)}
		}
	}
	if in[0][0] != in[1][0] {
		return nil, &gpu.ShapeError{Shape: in[1].Clone(), Reason: "values and column indices differ in length"}
	}
	if in[2][0] < 2 {
		return nil, &gpu.ShapeError{Shape: in[2].Clone(), Reason: "row pointers need at least 2 entries"}
	}
	return gpu.Shape{in[2][0] - 1}, nil
}

// byDType holds a kernel's instantiation for each dtype, in the order of
// allDTypes (unsigned 8-bit last).
type byDType [6]gpu.KernelFunc

// on returns the instantiation for dt: the one switch over dtypes.
func (k byDType) on(dt gpu.DType) gpu.KernelFunc {
	switch dt {
	case gpu.F32:
		return k[0]
	case gpu.F64:
		return k[1]
	case gpu.S32:
		return k[2]
	case gpu.S64:
		return k[3]
	case gpu.U32:
		return k[4]
	default:
		return k[5]
	}
}

// run runs the instantiation of the output's dtype.
func (k byDType) run(ctx context.Context, in []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer, sc []float64) error {
	return k.on(out.DType())(ctx, in, out, sc)
}

// binaryFuncs are one elementwise binary kernel's instantiations.
type binaryFuncs struct {
	f32 func(context.Context, []float32, []float32, []float32) error
	f64 func(context.Context, []float64, []float64, []float64) error
	s32 func(context.Context, []int32, []int32, []int32) error
	s64 func(context.Context, []int64, []int64, []int64) error
	u32 func(context.Context, []uint32, []uint32, []uint32) error
	u8  func(context.Context, []uint8, []uint8, []uint8) error
}

func binarySpec(name, desc string, f binaryFuncs) *gpu.KernelSpec {
	k := byDType{binary(f.f32), binary(f.f64), binary(f.s32), binary(f.s64), binary(f.u32), binary(f.u8)}
	return &gpu.KernelSpec{
		Name: name, Description: desc, Inputs: 2, DTypes: allDTypes, Elementwise: true, Cost: 1, OutShape: equalShapes,
		CPU: k.run,
	}
}

// binary is the kernel of an elementwise binary function of T.
func binary[T gpu.Number](f func(context.Context, []T, []T, []T) error) gpu.KernelFunc {
	return func(ctx context.Context, in []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer, _ []float64) error {
		a, b, dst, err := views2[T](in[0], in[1], out)
		if err != nil {
			return err
		}
		err = f(ctx, dst, a, b)
		out.MarkHostDirty()
		return err
	}
}

// views2 returns the host views of two inputs and an output.
func views2[T gpu.Number](x, y, out *gpu.UnifiedBuffer) (a, b, dst []T, err error) {
	if a, err = gpu.HostSlice[T](x); err != nil {
		return
	}
	if b, err = gpu.HostSlice[T](y); err != nil {
		return
	}
	dst, err = gpu.HostSlice[T](out)
	return
}

// unaryFuncs are one elementwise unary kernel's instantiations.
type unaryFuncs struct {
	f32 func(context.Context, []float32, []float32) error
	f64 func(context.Context, []float64, []float64) error
	s32 func(context.Context, []int32, []int32) error
	s64 func(context.Context, []int64, []int64) error
	u32 func(context.Context, []uint32, []uint32) error
	u8  func(context.Context, []uint8, []uint8) error
}

func unaryKernel(f unaryFuncs) gpu.KernelFunc {
	k := byDType{unaryOf(f.f32), unaryOf(f.f64), unaryOf(f.s32), unaryOf(f.s64), unaryOf(f.u32), unaryOf(f.u8)}
	return k.run
}

// unaryOf is the kernel of an elementwise unary function of T.
func unaryOf[T gpu.Number](f func(context.Context, []T, []T) error) gpu.KernelFunc {
	return func(ctx context.Context, in []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer, _ []float64) error {
		return unary(ctx, in[0], out, f)
	}
}

func unary[T gpu.Number](ctx context.Context, x, out *gpu.UnifiedBuffer, f func(context.Context, []T, []T) error) error {
	a, err := gpu.HostSlice[T](x)
	if err != nil {
		return err
	}
	dst, err := gpu.HostSlice[T](out)
	if err != nil {
		return err
	}
	err = f(ctx, dst, a)
	out.MarkHostDirty()
	return err
}

// scaleKernel multiplies by the factor, which must be integral for integers.
func scaleKernel(ctx context.Context, in []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer, sc []float64) error {
	s := sc[0]
	if !out.DType().IsFloat() && (s != math.Trunc(s) || math.IsInf(s, 0) || math.IsNaN(s)) {
		return &gpu.ArgumentError{Kernel: "scale", Arg: "factor", Reason: fmt.Sprintf("%v is not integral, as %v needs", s, out.DType()), Err: gpu.ErrArgument}
	}
	return scaleKernels.run(ctx, in, out, sc)
}

var scaleKernels = byDType{scaleOf[float32], scaleOf[float64], scaleOf[int32], scaleOf[int64], scaleOf[uint32], scaleOf[uint8]}

// scaleOf scales by sc[0], converted to T (through int64 for an integer
// dtype, so that it wraps around).
func scaleOf[T gpu.Number](ctx context.Context, in []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer, sc []float64) error {
	var f T
	if out.DType().IsFloat() {
		f = T(sc[0])
	} else {
		f = T(int64(sc[0]))
	}
	return unary(ctx, in[0], out, func(ctx context.Context, d, a []T) error { return Scale(ctx, d, a, f) })
}

func leakyKernel(ctx context.Context, in []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer, sc []float64) error {
	if out.DType() == gpu.F32 {
		return unary(ctx, in[0], out, func(ctx context.Context, d, a []float32) error { return LeakyReLU(ctx, d, a, float32(sc[0])) })
	}
	return unary(ctx, in[0], out, func(ctx context.Context, d, a []float64) error { return LeakyReLU(ctx, d, a, sc[0]) })
}

var matmulKernel = byDType{matmul[float32], matmul[float64], matmul[int32], matmul[int64], matmul[uint32], matmul[uint8]}.run

func matmul[T gpu.Number](ctx context.Context, in []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer, _ []float64) error {
	as, bs := in[0].Shape(), in[1].Shape()
	m, k, n := as[0], as[1], bs[1]
	a, b, dst, err := views2[T](in[0], in[1], out)
	if err != nil {
		return err
	}
	err = MatMul(ctx, dst, a, b, m, k, n)
	out.MarkHostDirty()
	return err
}

var blurKernel = byDType{blurT[float32], blurT[float64], blurT[int32], blurT[int64], blurT[uint32], blurT[uint8]}.run

func blurT[T gpu.Number](ctx context.Context, in []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer, sc []float64) error {
	s := in[0].Shape()
	h, w, c := s[0], s[1], 1
	if len(s) == 3 {
		c = s[2]
	}
	r, sigma := int(sc[0]), sc[1]
	return unary(ctx, in[0], out, func(ctx context.Context, d, a []T) error { return GaussianBlur(ctx, d, a, h, w, c, r, sigma) })
}

// reduceFuncs are one reduction's instantiations.
type reduceFuncs struct {
	f32 func(context.Context, []float32) (float32, error)
	f64 func(context.Context, []float64) (float64, error)
	s32 func(context.Context, []int32) (int32, error)
	s64 func(context.Context, []int64) (int64, error)
	u32 func(context.Context, []uint32) (uint32, error)
	u8  func(context.Context, []uint8) (uint8, error)
}

func reduceSpec(name, desc string, f reduceFuncs) *gpu.KernelSpec {
	k := byDType{reduce(f.f32), reduce(f.f64), reduce(f.s32), reduce(f.s64), reduce(f.u32), reduce(f.u8)}
	return &gpu.KernelSpec{
		Name: name, Description: desc, Inputs: 1, DTypes: allDTypes, Cost: 1, OutShape: scalarShape,
		CPU: k.run,
	}
}

// reduce is the kernel of a reduction of T to one element of T.
func reduce[T gpu.Number](f func(context.Context, []T) (T, error)) gpu.KernelFunc {
	return func(ctx context.Context, in []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer, _ []float64) error {
		a, err := gpu.HostSlice[T](in[0])
		if err != nil {
			return err
		}
		dst, err := gpu.HostSlice[T](out)
		if err != nil {
			return err
		}
		v, err := f(ctx, a)
		dst[0] = v
		out.MarkHostDirty()
		return err
	}
}

// meanKernel picks the instantiation of the input's dtype (the output is
// float64 for all).
func meanKernel(ctx context.Context, in []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer, sc []float64) error {
	return meanKernels.on(in[0].DType())(ctx, in, out, sc)
}

var meanKernels = byDType{meanOf[float32], meanOf[float64], meanOf[int32], meanOf[int64], meanOf[uint32], meanOf[uint8]}

func meanOf[T gpu.Number](ctx context.Context, in []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer, _ []float64) error {
	a, err := gpu.HostSlice[T](in[0])
	if err != nil {
		return err
	}
	v, err := Mean(ctx, a)
	if err != nil {
		return err
	}
	dst, err := gpu.HostSlice[float64](out)
	if err != nil {
		return err
	}
	dst[0] = v
	out.MarkHostDirty()
	return nil
}

func spmvKernel(ctx context.Context, in []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer, _ []float64) error {
	if out.DType() == gpu.F32 {
		return spmv[float32](ctx, in, out)
	}
	return spmv[float64](ctx, in, out)
}

func spmv[T gpu.Float](ctx context.Context, in []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer) error {
	vals, err := gpu.HostSlice[T](in[0])
	if err != nil {
		return err
	}
	col, err := gpu.HostSlice[int32](in[1])
	if err != nil {
		return err
	}
	rowPtr, err := gpu.HostSlice[int32](in[2])
	if err != nil {
		return err
	}
	x, err := gpu.HostSlice[T](in[3])
	if err != nil {
		return err
	}
	y, err := gpu.HostSlice[T](out)
	if err != nil {
		return err
	}
	err = SpMV(ctx, y, vals, col, rowPtr, x)
	out.MarkHostDirty()
	return err
}
