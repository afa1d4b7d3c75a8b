//go:build linux && cgo

package cuda

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cpu"
	"github.com/ringactor/ringactor/gpu/cuda/internal/devcore"
)

func builtin(t testing.TB, name string) *gpu.KernelSpec {
	t.Helper()
	for _, s := range cpu.BuiltinKernels() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no built-in kernel %q", name)
	return nil
}

func randBuf[T float32 | float64](t testing.TB, rng *rand.Rand, shape ...int) *gpu.UnifiedBuffer {
	t.Helper()
	n := 1
	for _, d := range shape {
		n *= d
	}
	s := make([]T, n)
	for i := range s {
		s[i] = T(rng.NormFloat64() * 10)
	}
	b, err := gpu.NewBuffer(s, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// cloneHost returns an independent host-only copy of b (for the CPU
// reference), after bringing b to the host.
func cloneHost(t testing.TB, b *gpu.UnifiedBuffer) *gpu.UnifiedBuffer {
	t.Helper()
	raw, err := b.Bytes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c, err := gpu.FromBytes(b.DType(), b.Shape(), raw)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func values(t testing.TB, b *gpu.UnifiedBuffer) []float64 {
	t.Helper()
	ctx := context.Background()
	switch b.DType() {
	case gpu.F32:
		s, err := gpu.ToSlice[float32](ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float64, len(s))
		for i, v := range s {
			out[i] = float64(v)
		}
		return out
	case gpu.F64:
		s, err := gpu.ToSlice[float64](ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	t.Fatalf("dtype %s", b.DType())
	return nil
}

// runBoth runs spec on the simulated device through the backend and on the
// CPU, and compares the outputs within tol (relative).
func runBoth(t *testing.T, b *Backend, spec *gpu.KernelSpec, in []*gpu.UnifiedBuffer, scalars []float64, tol float64) {
	t.Helper()
	ctx := context.Background()
	dt := in[0].DType()
	if !b.Supports(spec, dt) {
		t.Fatalf("Supports(%s, %s) = false", spec.Name, dt)
	}
	shapes := make([]gpu.Shape, len(in))
	ref := make([]*gpu.UnifiedBuffer, len(in))
	for i, buf := range in {
		shapes[i] = buf.Shape()
		ref[i] = cloneHost(t, buf)
	}
	sc, err := spec.ResolveScalars(scalars, nil)
	if err != nil {
		t.Fatal(err)
	}
	shape, err := spec.OutShape(shapes, sc)
	if err != nil {
		t.Fatal(err)
	}
	got, err := gpu.Zeros(spec.OutputDType(dt), shape)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Free()
	want, _ := gpu.Zeros(spec.OutputDType(dt), shape)
	if err := b.Execute(ctx, spec, in, got, scalars); err != nil {
		t.Fatalf("%s %s: Execute: %v", spec.Name, dt, err)
	}
	if !got.DeviceDirty() || got.Device() == nil {
		t.Fatalf("%s: output not left on the device (dirty %v)", spec.Name, got.DeviceDirty())
	}
	if err := spec.CPU(ctx, ref, want, sc); err != nil {
		t.Fatal(err)
	}
	g, w := values(t, got), values(t, want)
	for i := range w {
		if d := math.Abs(g[i] - w[i]); d > tol*math.Max(1, math.Abs(w[i])) && !(math.IsNaN(g[i]) && math.IsNaN(w[i])) {
			t.Fatalf("%s %s %v: [%d] device %v, cpu %v", spec.Name, dt, shape, i, g[i], w[i])
		}
	}
}

func testBuiltins[T float32 | float64](t *testing.T, b *Backend, tol float64) {
	rng := rand.New(rand.NewPCG(1, 2))
	var free []*gpu.UnifiedBuffer
	buf := func(shape ...int) *gpu.UnifiedBuffer {
		x := randBuf[T](t, rng, shape...)
		free = append(free, x)
		return x
	}
	defer func() {
		for _, x := range free {
			if err := x.Free(); err != nil {
				t.Error(err)
			}
		}
	}()
	for _, n := range []int{1, 255, 1000, 5003} {
		for _, name := range []string{"add", "subtract", "multiply"} {
			runBoth(t, b, builtin(t, name), []*gpu.UnifiedBuffer{buf(n), buf(n)}, nil, 0)
		}
		runBoth(t, b, builtin(t, "scale"), []*gpu.UnifiedBuffer{buf(n)}, []float64{-2.5}, 0)
		runBoth(t, b, builtin(t, "relu"), []*gpu.UnifiedBuffer{buf(n)}, nil, 0)
		runBoth(t, b, builtin(t, "leaky_relu"), []*gpu.UnifiedBuffer{buf(n)}, []float64{0.1}, 0)
		runBoth(t, b, builtin(t, "sum"), []*gpu.UnifiedBuffer{buf(n)}, nil, tol)
		runBoth(t, b, builtin(t, "min"), []*gpu.UnifiedBuffer{buf(n)}, nil, 0)
		runBoth(t, b, builtin(t, "max"), []*gpu.UnifiedBuffer{buf(n)}, nil, 0)
	}
	for _, mkn := range [][3]int{{1, 1, 1}, {17, 33, 9}, {40, 16, 35}} {
		runBoth(t, b, builtin(t, "matmul"), []*gpu.UnifiedBuffer{buf(mkn[0], mkn[1]), buf(mkn[1], mkn[2])}, nil, tol)
	}
	runBoth(t, b, builtin(t, "blur"), []*gpu.UnifiedBuffer{buf(19, 23)}, []float64{2, 1.5}, tol)
	runBoth(t, b, builtin(t, "blur"), []*gpu.UnifiedBuffer{buf(9, 7, 3)}, []float64{3, 0.8}, tol)
	runBoth(t, b, builtin(t, "blur"), []*gpu.UnifiedBuffer{buf(5, 4)}, []float64{0, 1}, tol)
}

// TestSimulatedDeviceBuiltins runs every built-in kernel the PTX has
// through the real backend code (allocation, staging copies, argument
// packing, launch shapes from device attributes, two-pass reductions)
// on the simulated device, and compares with gpu/cpu.
func TestSimulatedDeviceBuiltins(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	if err := b.Available(); err != nil {
		t.Fatal(err)
	}
	t.Run("f32", func(t *testing.T) { testBuiltins[float32](t, b, 1e-5) })
	t.Run("f64", func(t *testing.T) { testBuiltins[float64](t, b, 1e-12) })
}

func TestSimulatedSupports(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	for _, spec := range cpu.BuiltinKernels() {
		for _, dt := range []gpu.DType{gpu.F32, gpu.F64, gpu.S32, gpu.U8} {
			_, want := builtinOps[spec.Name]
			want = want && (dt == gpu.F32 || dt == gpu.F64) && spec.Supports(dt)
			if got := b.Supports(spec, dt); got != want {
				t.Errorf("Supports(%s, %s) = %v, want %v", spec.Name, dt, got, want)
			}
		}
	}
	custom := &gpu.KernelSpec{Name: "add", Inputs: 3, DTypes: []gpu.DType{gpu.F32}}
	if b.Supports(custom, gpu.F32) {
		t.Error("a 3-input kernel named add is taken for the built-in")
	}
	ctx := context.Background()
	x := randBuf[float32](t, rand.New(rand.NewPCG(1, 1)), 4)
	defer x.Free()
	y, _ := gpu.Zeros(gpu.F32, gpu.Shape{1})
	defer y.Free()
	if err := b.Execute(ctx, builtin(t, "mean"), []*gpu.UnifiedBuffer{x}, y, nil); !errors.Is(err, ErrNoDeviceKernels) {
		t.Errorf("mean on the device = %v, want ErrNoDeviceKernels", err)
	}
}

// TestSimulatedBatchAndResidency: ExecuteBatch runs every item in one
// hand-off; an input already on the device is not copied again, and a
// host change (MarkHostDirty) is.
func TestSimulatedBatchAndResidency(t *testing.T) {
	b, fd := newSimBackend(t, nil)
	ctx := context.Background()
	spec := builtin(t, "add")
	var items [][]*gpu.UnifiedBuffer
	var outs []*gpu.UnifiedBuffer
	for i := range 5 {
		x, _ := gpu.NewBuffer([]float64{float64(i), 1, 2})
		y, _ := gpu.NewBuffer([]float64{10, 20, float64(30 * i)})
		o, _ := gpu.Zeros(gpu.F64, gpu.Shape{3})
		items = append(items, []*gpu.UnifiedBuffer{x, y})
		outs = append(outs, o)
	}
	defer func() {
		for i := range items {
			items[i][0].Free()
			items[i][1].Free()
			outs[i].Free()
		}
	}()
	if err := b.ExecuteBatch(ctx, spec, items, outs, nil); err != nil {
		t.Fatal(err)
	}
	if n := fd.Sim().Launches("rc_add_f64"); n != 5 {
		t.Fatalf("%d launches, want 5", n)
	}
	for i, o := range outs {
		got := values(t, o)
		want := []float64{float64(i) + 10, 21, 2 + float64(30*i)}
		for j := range want {
			if got[j] != want[j] {
				t.Fatalf("item %d: %v, want %v", i, got, want)
			}
		}
	}
	// Change an input on the host: the next run must see it.
	x := items[0][0]
	hs, _ := gpu.HostSlice[float64](x)
	hs[0] = 100
	x.MarkHostDirty()
	if err := b.Execute(ctx, spec, items[0], outs[0], nil); err != nil {
		t.Fatal(err)
	}
	if got := values(t, outs[0]); got[0] != 110 {
		t.Fatalf("after a host change: %v", got)
	}
	// Aliasing: out is input 0.
	if err := b.Execute(ctx, spec, []*gpu.UnifiedBuffer{x, x}, x, nil); err != nil {
		t.Fatal(err)
	}
	if got := values(t, x); got[0] != 200 || got[2] != 4 {
		t.Fatalf("x+x into x: %v", got)
	}
}

// TestSimulatedOutOfMemory: running out of device memory is a
// *gpu.DeviceError of kind DeviceOutOfMemory wrapping the driver's error.
func TestSimulatedOutOfMemory(t *testing.T) {
	b, fd := newSimBackend(t, newFakeDevice(1<<12))
	ctx := context.Background()
	big := make([]float32, 4096)
	x, _ := gpu.NewBuffer(big)
	defer x.Free()
	out, _ := gpu.Zeros(gpu.F32, gpu.Shape{4096})
	defer out.Free()
	err := b.Execute(ctx, builtin(t, "relu"), []*gpu.UnifiedBuffer{x}, out, nil)
	var de *gpu.DeviceError
	if !errors.As(err, &de) || de.Kind != gpu.DeviceOutOfMemory || !errors.Is(err, gpu.ErrOutOfMemory) {
		t.Fatalf("Execute beyond device memory = %v", err)
	}
	var drv *DriverError
	if !errors.As(err, &drv) || drv.Result() != ErrOutOfMemory {
		t.Fatalf("no driver error inside %v", err)
	}
	if allocs, _ := fd.Sim().Used(); allocs != 0 {
		t.Fatalf("%d allocations after a failed execute", allocs)
	}
}

// TestSimulatedModuleLoadFailure: a one-shot module that does not load
// leaves the backend unavailable with a typed error carrying the JIT log.
func TestSimulatedModuleLoadFailure(t *testing.T) {
	saved := OneShotPTX
	OneShotPTX = []byte("garbage")
	defer func() { OneShotPTX = saved }()
	b, _ := newSimBackend(t, nil)
	err := b.Available()
	var de *gpu.DeviceError
	var ml *ModuleLoadError
	if !errors.As(err, &de) || de.Kind != gpu.DeviceUnavailable || !errors.As(err, &ml) {
		t.Fatalf("Available with a bad module = %v", err)
	}
	if !strings.Contains(ml.Log.Error, "syntax error") || !strings.Contains(err.Error(), "syntax error") {
		t.Fatalf("JIT log missing: %v", err)
	}
	if b.Supports(builtin(t, "add"), gpu.F32) {
		t.Fatal("supports kernels without a module")
	}
}

// TestSimulatedRunPTX runs a PTX entry with the source-kernel calling
// convention (inputs, output, scalars as double, n): rc_add_f64 of
// OneShotPTX has it. The module is loaded once per image.
func TestSimulatedRunPTX(t *testing.T) {
	b, fd := newSimBackend(t, nil)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	x, y := randBuf[float64](t, rng, 1000), randBuf[float64](t, rng, 1000)
	defer x.Free()
	defer y.Free()
	out, _ := gpu.Zeros(gpu.F64, gpu.Shape{1000})
	defer out.Free()
	if err := b.Available(); err != nil {
		t.Fatal(err)
	}
	loads := fd.ModuleLoads()
	ptx := append([]byte(nil), OneShotPTX...)
	for range 2 {
		if err := b.RunPTX(ctx, ptx, "rc_add_f64", []*gpu.UnifiedBuffer{x, y}, out, nil); err != nil {
			t.Fatal(err)
		}
	}
	if fd.ModuleLoads() != loads+1 {
		t.Fatalf("%d module loads for one image run twice", fd.ModuleLoads()-loads)
	}
	xs, ys, got := values(t, x), values(t, y), values(t, out)
	for i := range got {
		if got[i] != xs[i]+ys[i] {
			t.Fatalf("[%d] %v, want %v", i, got[i], xs[i]+ys[i])
		}
	}
	err := b.RunPTX(ctx, []byte("garbage"), "k", []*gpu.UnifiedBuffer{x}, out, nil)
	var ce *gpu.CompilationError
	var ml *ModuleLoadError
	if !errors.As(err, &ce) || !errors.As(err, &ml) || !strings.Contains(ce.Log, "syntax error") {
		t.Fatalf("bad PTX = %v", err)
	}
	err = b.RunPTX(ctx, ptx, "no_such_entry", []*gpu.UnifiedBuffer{x}, out, nil)
	var drv *DriverError
	if !errors.As(err, &drv) || drv.Result() != ErrNotFound || !errors.Is(err, gpu.ErrDevice) {
		t.Fatalf("unknown entry = %v", err)
	}
	// Wrong parameter count for the entry: the launch fails, reported at
	// the stream synchronisation as an asynchronous error would be.
	err = b.RunPTX(ctx, ptx, "rc_add_f64", []*gpu.UnifiedBuffer{x}, out, nil)
	if !errors.As(err, &drv) || drv.Result() != ErrLaunchFailed {
		t.Fatalf("bad launch = %v", err)
	}
}

// TestSimulatedCopiesLargerThanStaging moves a buffer bigger than one
// staging chunk both ways.
func TestSimulatedCopiesLargerThanStaging(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	ctx := context.Background()
	n := devcore.StagingChunk/8 + 1234
	s := make([]float64, n)
	for i := range s {
		s[i] = float64(i)
	}
	x, _ := gpu.NewBuffer(s)
	defer x.Free()
	out, _ := gpu.Zeros(gpu.F64, gpu.Shape{n})
	defer out.Free()
	if err := b.Execute(ctx, builtin(t, "scale"), []*gpu.UnifiedBuffer{x}, out, []float64{2}); err != nil {
		t.Fatal(err)
	}
	got, err := gpu.ToSlice[float64](ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] != 2*float64(i) {
			t.Fatalf("[%d] = %v", i, got[i])
		}
	}
}

// TestSimulatedClosedBackend: after Close the backend is unavailable and
// calls fail cleanly.
func TestSimulatedClosedBackend(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	if err := b.Available(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Available(); !errors.Is(err, gpu.ErrDeviceNotAvailable) {
		t.Fatalf("Available after Close = %v", err)
	}
	x, _ := gpu.NewBuffer([]float32{1})
	if _, err := x.EnsureOnDevice(context.Background(), b.Allocator()); !errors.Is(err, gpu.ErrDeviceNotAvailable) {
		t.Fatalf("Alloc after Close = %v", err)
	}
}

// TestSimulatedWatchdogRefusesPersistent: a device with a kernel execution
// timeout refuses persistent kernels with a typed error but still runs
// one-shot kernels.
func TestSimulatedWatchdogRefusesPersistent(t *testing.T) {
	fd := newFakeDevice(1 << 20)
	fd.SetAttribute(AttrKernelExecTimeout, 1)
	b, _ := newSimBackend(t, fd)
	err := b.CheckPersistent()
	var we *WatchdogError
	if !errors.As(err, &we) || !errors.Is(err, ErrKernelExecTimeout) || !errors.Is(err, gpu.ErrDeviceNotAvailable) ||
		!strings.Contains(err.Error(), "KERNEL_EXEC_TIMEOUT") {
		t.Fatalf("CheckPersistent on a watchdog device = %v", err)
	}
	x := randBuf[float32](t, rand.New(rand.NewPCG(9, 9)), 100)
	defer x.Free()
	runBoth(t, b, builtin(t, "relu"), []*gpu.UnifiedBuffer{x}, nil, 0)

	b2, _ := newSimBackend(t, nil)
	if err := b2.CheckPersistent(); err != nil {
		t.Fatalf("CheckPersistent without a watchdog = %v", err)
	}
}
