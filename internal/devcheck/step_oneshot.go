package devcheck

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/gpu"
)

// oneshotStep runs the built-in one-shot kernels on the device and on
// gpu/cpu at sizes well beyond the simulated runs and compares them:
// elementwise kernels bit for bit, reductions, matmul and blur within a
// tolerance. It also times staged copies to and from device memory.
var oneshotStep = Step{
	Name:    "oneshot",
	Checks:  "one-shot kernels (add, subtract, multiply, scale, relu, leaky_relu, min, max, sum, matmul, blur; f32 and f64) equal gpu/cpu's at large sizes; staged copies round-trip",
	Timeout: 90 * time.Second,
	run:     runOneshot,
}

type float interface{ float32 | float64 }

func runOneshot(ctx context.Context, e *Env) error {
	rt, b, err := e.Runtime()
	if err != nil {
		return err
	}
	n := pick(e, 4096, 4<<20, 16<<20)
	mm := pick(e, 32, 512, 1024)
	img := pick(e, 32, 1024, 2048)
	e.Set("elements", n)
	e.Set("matmul_n", mm)
	e.Set("blur_side", img)
	if err := oneshotType[float32](ctx, e, rt, b.Name(), n, mm, img); err != nil {
		return fmt.Errorf("f32: %w", err)
	}
	if err := oneshotType[float64](ctx, e, rt, b.Name(), n, mm, img); err != nil {
		return fmt.Errorf("f64: %w", err)
	}

	size := pick(e, 1<<20, 64<<20, 256<<20)
	e.Progress("staged copies of %d MiB", size>>20)
	src := make([]byte, size)
	for i := range src {
		src[i] = byte(i*7 + i>>12)
	}
	mem, err := b.Allocator().Alloc(ctx, size)
	if err != nil {
		return err
	}
	defer mem.Free()
	t0 := time.Now()
	if err := mem.CopyFromHost(ctx, src); err != nil {
		return err
	}
	t1 := time.Now()
	dst := make([]byte, size)
	if err := mem.CopyToHost(ctx, dst); err != nil {
		return err
	}
	t2 := time.Now()
	if !bytes.Equal(src, dst) {
		return fmt.Errorf("a %d-byte copy to the device and back differs", size)
	}
	e.Set("copy_bytes", size)
	e.Set("copy_h2d_gb_s", float64(size)/t1.Sub(t0).Seconds()/1e9)
	e.Set("copy_d2h_gb_s", float64(size)/t2.Sub(t1).Seconds()/1e9)
	return nil
}

// oneshotType checks every kernel for one dtype.
func oneshotType[T float](ctx context.Context, e *Env, rt *actors.Runtime, dev string, n, mm, img int) error {
	rng := rand.New(rand.NewPCG(28, uint64(n)))
	vec := func(k int) []T {
		v := make([]T, k)
		for i := range v {
			v[i] = T(rng.Float64()*2 - 1)
		}
		return v
	}
	eps := float64(math.Nextafter32(1, 2) - 1)
	if _, ok := any(T(0)).(float64); ok {
		eps = math.Nextafter(1, 2) - 1
	}
	a, bv := vec(n), vec(n)
	type run struct {
		kernel  string
		inputs  [][]T
		shapes  [][]int
		scalars []float64
		tol     float64 // 0: bit for bit
	}
	runs := []run{
		{kernel: "add", inputs: [][]T{a, bv}},
		{kernel: "subtract", inputs: [][]T{a, bv}},
		{kernel: "multiply", inputs: [][]T{a, bv}},
		{kernel: "scale", inputs: [][]T{a}, scalars: []float64{0.5}},
		{kernel: "relu", inputs: [][]T{a}},
		{kernel: "leaky_relu", inputs: [][]T{a}, scalars: []float64{0.125}},
		{kernel: "min", inputs: [][]T{a}},
		{kernel: "max", inputs: [][]T{a}},
		{kernel: "sum", inputs: [][]T{a}, tol: 2 * eps * float64(n)},
		{kernel: "matmul", inputs: [][]T{vec(mm * mm), vec(mm * mm)}, shapes: [][]int{{mm, mm}, {mm, mm}}, tol: 4 * eps * float64(mm)},
		{kernel: "blur", inputs: [][]T{vec(img * img)}, shapes: [][]int{{img, img}}, scalars: []float64{2, 1.5}, tol: 256 * eps},
	}
	for _, r := range runs {
		e.Progress("%s %T on %s and cpu", r.kernel, T(0), dev)
		var outs [2][]T
		var took [2]time.Duration
		for side, backend := range []string{dev, "cpu"} {
			bufs := make([]*gpu.UnifiedBuffer, len(r.inputs))
			for i, in := range r.inputs {
				var shape []int
				if r.shapes != nil {
					shape = r.shapes[i]
				}
				buf, err := gpu.NewBuffer(in, shape...)
				if err != nil {
					return err
				}
				bufs[i] = buf
			}
			var p actors.ExecProfile
			start := time.Now()
			out, err := rt.Execute(ctx, r.kernel, bufs, nil, actors.WithScalars(r.scalars...), actors.OnBackend(backend), actors.Profiled(&p))
			if err != nil {
				return fmt.Errorf("%s on %s: %w", r.kernel, backend, err)
			}
			took[side] = time.Since(start)
			if p.Backend != backend {
				return fmt.Errorf("%s ran on %q, want %s", r.kernel, p.Backend, backend)
			}
			if outs[side], err = gpu.ToSlice[T](ctx, out); err != nil {
				return err
			}
			for _, buf := range append(bufs, out) {
				_ = buf.Free()
			}
		}
		if err := compareOut(r.kernel, outs[0], outs[1], r.tol); err != nil {
			return err
		}
		if r.kernel == "matmul" {
			e.Set(fmt.Sprintf("matmul_%T_ms", T(0)), ms(took[0]))
			e.Set(fmt.Sprintf("matmul_%T_cpu_ms", T(0)), ms(took[1]))
		}
	}
	return nil
}

// compareOut compares the device's output with the CPU's: bit for bit when
// tol is 0, else within tol·(1 + |cpu|) per element.
func compareOut[T float](kernel string, dev, cpu []T, tol float64) error {
	if len(dev) != len(cpu) {
		return fmt.Errorf("%s: %d elements from the device, %d from the cpu", kernel, len(dev), len(cpu))
	}
	for i := range dev {
		d, c := float64(dev[i]), float64(cpu[i])
		if tol == 0 {
			if d != c && !(math.IsNaN(d) && math.IsNaN(c)) {
				return fmt.Errorf("%s element %d: device %v, cpu %v (want bit-equal)", kernel, i, d, c)
			}
			continue
		}
		if math.Abs(d-c) > tol*(1+math.Abs(c)) {
			return fmt.Errorf("%s element %d: device %v, cpu %v (beyond %.3g)", kernel, i, d, c, tol*(1+math.Abs(c)))
		}
	}
	return nil
}
