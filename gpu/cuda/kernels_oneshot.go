package cuda

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ringactor/ringactor/gpu"
)

// The built-in kernels of the orchestrator (gpu/cpu.BuiltinKernels) that
// kernels/oneshot.cu implements, for f32 and f64.

type opKind uint8

const (
	opBinary opKind = iota // entry(a, b, out, n)
	opUnary                // entry(a, out, p, n); p is scalar 0 or 0
	opReduce               // entry_partial(in, partials, n), twice
	opMatmul               // entry(A, B, C, m, k, n)
	opBlur                 // entry_rows(src, tmp, w, h, wd, c, r), entry_cols(tmp, dst, w, …)
)

type builtinOp struct {
	kind   opKind
	inputs int
	entry  [2]string // f32, f64 (rows for blur, partial for reduce)
	entry2 [2]string // blur cols
	scalar bool      // unary: takes scalar 0 as p
}

func mkOp(kind opKind, inputs int, base string, scalar bool) builtinOp {
	op := builtinOp{kind: kind, inputs: inputs, scalar: scalar}
	for i, t := range []string{"f32", "f64"} {
		switch kind {
		case opReduce:
			op.entry[i] = base + "_" + t + "_partial"
		case opBlur:
			op.entry[i] = base + "_rows_" + t
			op.entry2[i] = base + "_cols_" + t
		default:
			op.entry[i] = base + "_" + t
		}
	}
	return op
}

var builtinOps = map[string]builtinOp{
	"add":        mkOp(opBinary, 2, "rc_add", false),
	"subtract":   mkOp(opBinary, 2, "rc_sub", false),
	"multiply":   mkOp(opBinary, 2, "rc_mul", false),
	"scale":      mkOp(opUnary, 1, "rc_scale", true),
	"relu":       mkOp(opUnary, 1, "rc_relu", false),
	"leaky_relu": mkOp(opUnary, 1, "rc_leaky_relu", true),
	"sum":        mkOp(opReduce, 1, "rc_sum", false),
	"min":        mkOp(opReduce, 1, "rc_min", false),
	"max":        mkOp(opReduce, 1, "rc_max", false),
	"matmul":     mkOp(opMatmul, 2, "rc_matmul", false),
	"blur":       mkOp(opBlur, 1, "rc_blur", false),
}

// tile is RC_TILE of oneshot.cu: matmul blocks are tile × tile threads.
const tile = 16

// oneShotEntries lists every entry point of OneShotPTX the backend uses.
func oneShotEntries() []string {
	names := []string{smemProbeEntry}
	for _, op := range builtinOps {
		for i := range 2 {
			names = append(names, op.entry[i])
			if op.entry2[i] != "" {
				names = append(names, op.entry2[i])
			}
		}
	}
	return names
}

// deviceDType is the index of dt in builtinOp.entry, or -1.
func deviceDType(dt gpu.DType) int {
	switch dt {
	case gpu.F32:
		return 0
	case gpu.F64:
		return 1
	}
	return -1
}

// builtinFor returns the device implementation of spec for dt, if any.
func builtinFor(spec *gpu.KernelSpec, dt gpu.DType) (builtinOp, bool) {
	op, ok := builtinOps[spec.Name]
	if !ok || op.inputs != spec.Inputs || deviceDType(dt) < 0 || !spec.Supports(dt) {
		return op, false
	}
	return op, true
}

func argErr(spec *gpu.KernelSpec, arg, format string, a ...any) error {
	return &gpu.ArgumentError{Kernel: spec.Name, Arg: arg, Reason: fmt.Sprintf(format, a...), Err: gpu.ErrArgument}
}

// execute runs a built-in kernel over items (one Do, one stream
// synchronisation) and marks the outputs device-dirty.
func (d *device) execute(ctx context.Context, spec *gpu.KernelSpec, op builtinOp, items [][]*gpu.UnifiedBuffer, outs []*gpu.UnifiedBuffer, scalars []float64) error {
	sc, err := spec.ResolveScalars(scalars, nil)
	if err != nil {
		return err
	}
	if len(items) != len(outs) {
		return argErr(spec, "outputs", "%d items, %d outputs", len(items), len(outs))
	}
	for i, in := range items {
		if err := checkCall(spec, op, in, outs[i]); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	err = d.Do(func() error {
		return d.InBatch(func() error {
			for i, in := range items {
				if err := d.launch(ctx, spec, op, in, outs[i], sc); err != nil {
					return err
				}
			}
			return nil
		})
	})
	if err != nil {
		return deviceErr(d.Ordinal, err)
	}
	for _, out := range outs {
		out.MarkDeviceDirty()
	}
	return nil
}

// checkCall checks what the kernels rely on (the orchestrator has checked
// shapes already; a direct caller may not have).
func checkCall(spec *gpu.KernelSpec, op builtinOp, in []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer) error {
	if len(in) != op.inputs {
		return &gpu.ArgumentError{Kernel: spec.Name, Arg: "inputs", Reason: fmt.Sprintf("takes %d inputs, got %d", op.inputs, len(in)), Err: gpu.ErrInputCount}
	}
	if out == nil {
		return argErr(spec, "output", "nil output")
	}
	all := make([]*gpu.UnifiedBuffer, 0, 3)
	all = append(append(all, in...), out)
	for i, b := range all {
		if b == nil {
			return argErr(spec, "inputs", "nil buffer %d", i)
		}
	}
	dt := in[0].DType()
	for _, b := range all {
		if b.DType() != dt {
			return &gpu.ArgumentError{Kernel: spec.Name, Arg: "buffers", Reason: fmt.Sprintf("%s and %s", b.DType(), dt), Err: gpu.ErrDTypeMismatch}
		}
	}
	if deviceDType(dt) < 0 {
		return &gpu.ArgumentError{Kernel: spec.Name, Arg: "dtype", Reason: dt.String() + " has no CUDA implementation", Err: gpu.ErrUnsupportedDType}
	}
	switch op.kind {
	case opBinary, opUnary:
		for _, b := range in {
			if b.Len() != out.Len() {
				return argErr(spec, "inputs", "%d and %d elements", b.Len(), out.Len())
			}
		}
	case opReduce:
		if out.Len() != 1 {
			return argErr(spec, "output", "a reduction has one output element, not %d", out.Len())
		}
	case opMatmul:
		a, b := in[0].ShapeRef(), in[1].ShapeRef()
		if len(a) != 2 || len(b) != 2 || a[1] != b[0] || out.Len() != a[0]*b[1] {
			return argErr(spec, "inputs", "matmul of %v and %v into %d elements", a, b, out.Len())
		}
		if a[0] > math.MaxInt32 || a[1] > math.MaxInt32 || b[1] > math.MaxInt32 {
			return argErr(spec, "inputs", "dimensions of %v · %v exceed int32", a, b)
		}
	case opBlur:
		s := in[0].ShapeRef()
		if (len(s) != 2 && len(s) != 3) || out.Len() != in[0].Len() || in[0].Len() > math.MaxInt32 {
			return argErr(spec, "input", "blur of a %v image into %d elements", s, out.Len())
		}
	}
	return nil
}

// launch enqueues one call of a built-in kernel (inside Do, in a batch).
func (d *device) launch(ctx context.Context, spec *gpu.KernelSpec, op builtinOp, in []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer, sc []float64) error {
	t := deviceDType(out.DType())
	var ptrs [2]DevicePtr
	for i, b := range in {
		p, err := d.devicePtr(ctx, b)
		if err != nil {
			return err
		}
		ptrs[i] = p
	}
	outPtr, err := d.devicePtr(ctx, out)
	if err != nil {
		return err
	}
	n := uint64(out.Len())
	f := d.fns[op.entry[t]]
	switch op.kind {
	case opBinary:
		block := d.Attrs.Block1D()
		return d.launchOneShot(f, Dim3{X: d.Attrs.Grid1D(n, block)}, Dim3{X: block}, 0, d.Stream,
			ArgPtr(ptrs[0]), ArgPtr(ptrs[1]), ArgPtr(outPtr), ArgU64(n))
	case opUnary:
		p := 0.0
		if op.scalar {
			p = sc[0]
		}
		pa := ArgF64(p)
		if t == 0 {
			pa = ArgF32(float32(p))
		}
		block := d.Attrs.Block1D()
		return d.launchOneShot(f, Dim3{X: d.Attrs.Grid1D(n, block)}, Dim3{X: block}, 0, d.Stream,
			ArgPtr(ptrs[0]), ArgPtr(outPtr), pa, ArgU64(n))
	case opReduce:
		return d.reduce(spec.Name, t, f, ptrs[0], uint64(in[0].Len()), outPtr)
	case opMatmul:
		a, b := in[0].ShapeRef(), in[1].ShapeRef()
		m, k, nn := a[0], a[1], b[1]
		grid := Dim3{X: uint32((nn + tile - 1) / tile), Y: uint32((m + tile - 1) / tile)}
		if d.Attrs.MaxThreadsPerBlock < tile*tile || int(grid.Y) > d.Attrs.MaxGridY || int(grid.X) > d.Attrs.MaxGridX {
			return &gpu.DeviceError{Kind: gpu.DeviceFailed, Backend: BackendName, Device: d.Ordinal,
				Reason: fmt.Sprintf("matmul %dx%d·%dx%d does not fit one launch (grid %d×%d)", m, k, k, nn, grid.X, grid.Y)}
		}
		return d.launchOneShot(f, grid, Dim3{X: tile, Y: tile}, 0, d.Stream,
			ArgPtr(ptrs[0]), ArgPtr(ptrs[1]), ArgPtr(outPtr), ArgI32(int32(m)), ArgI32(int32(k)), ArgI32(int32(nn)))
	case opBlur:
		return d.blur(op, t, in[0].ShapeRef(), ptrs[0], outPtr, sc)
	}
	return fmt.Errorf("cuda: unknown op kind %d", op.kind)
}

// reduce runs the two passes of rc_<op>_<t>_partial: a grid of blocks
// writes one partial each, then one block reduces the partials into out.
// Sums accumulate in double; an f32 sum is rounded on the host and copied
// back (4 bytes).
func (d *device) reduce(name string, t int, f Function, in DevicePtr, n uint64, out DevicePtr) error {
	block := d.Attrs.Block1D()
	grid := d.Attrs.Grid1D(n, block)
	sum := name == "sum"
	partSize := uint64(4 << t) // f32 or f64 partials for min and max
	final := f
	if sum {
		partSize = 8
		final = d.fns["rc_sum_f64_partial"]
	}
	parts, err := d.Scratch(uint64(grid) * partSize)
	if err != nil {
		return err
	}
	if err := d.launchOneShot(f, Dim3{X: grid}, Dim3{X: block}, 0, d.Stream, ArgPtr(in), ArgPtr(parts), ArgU64(n)); err != nil {
		return err
	}
	if !sum || t == 1 {
		return d.launchOneShot(final, Dim3{X: 1}, Dim3{X: block}, 0, d.Stream, ArgPtr(parts), ArgPtr(out), ArgU64(uint64(grid)))
	}
	total, err := d.Scratch(8)
	if err != nil {
		return err
	}
	if err := d.launchOneShot(final, Dim3{X: 1}, Dim3{X: block}, 0, d.Stream, ArgPtr(parts), ArgPtr(total), ArgU64(uint64(grid))); err != nil {
		return err
	}
	var buf [8]byte
	if err := d.CopyOut(buf[:], total); err != nil {
		return err
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(buf[:]))
	binary.LittleEndian.PutUint32(buf[:4], math.Float32bits(float32(v)))
	return d.CopyIn(out, buf[:4])
}

// blur runs the separable Gaussian: rows into a double scratch image,
// then columns into out. The taps are computed here, like the CPU's.
func (d *device) blur(op builtinOp, t int, shape gpu.Shape, src, dst DevicePtr, sc []float64) error {
	h, w, c := shape[0], shape[1], 1
	if len(shape) == 3 {
		c = shape[2]
	}
	radius, sigma := int(sc[0]), sc[1]
	if sc[0] < 0 || sc[0] != math.Trunc(sc[0]) || radius > 1<<16 || !(sigma > 0) || math.IsInf(sigma, 0) {
		return &gpu.ArgumentError{Kernel: "blur", Arg: "radius, sigma", Reason: fmt.Sprintf("%v, %v", sc[0], sigma), Err: gpu.ErrArgument}
	}
	taps := gaussianTaps(radius, sigma)
	raw := make([]byte, 8*len(taps))
	for i, v := range taps {
		binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(v))
	}
	wts, err := d.Scratch(uint64(len(raw)))
	if err != nil {
		return err
	}
	if err := d.CopyIn(wts, raw); err != nil {
		return err
	}
	total := uint64(h) * uint64(w) * uint64(c)
	tmp, err := d.Scratch(8 * total)
	if err != nil {
		return err
	}
	block := d.Attrs.Block1D()
	grid := Dim3{X: d.Attrs.Grid1D(total, block)}
	geom := []uint64{ArgI32(int32(h)), ArgI32(int32(w)), ArgI32(int32(c)), ArgI32(int32(radius))}
	if err := d.launchOneShot(d.fns[op.entry[t]], grid, Dim3{X: block}, 0, d.Stream,
		append([]uint64{ArgPtr(src), ArgPtr(tmp), ArgPtr(wts)}, geom...)...); err != nil {
		return err
	}
	return d.launchOneShot(d.fns[op.entry2[t]], grid, Dim3{X: block}, 0, d.Stream,
		append([]uint64{ArgPtr(tmp), ArgPtr(dst), ArgPtr(wts)}, geom...)...)
}

// gaussianTaps returns the 2*radius+1 normalised weights
// exp(-t²/(2σ²)), as gpu/cpu computes them.
func gaussianTaps(radius int, sigma float64) []float64 {
	w := make([]float64, 2*radius+1)
	inv := -1 / (2 * sigma * sigma)
	var sum float64
	for t := -radius; t <= radius; t++ {
		v := math.Exp(float64(t) * float64(t) * inv)
		w[t+radius] = v
		sum += v
	}
	for i := range w {
		w[i] /= sum
	}
	return w
}
