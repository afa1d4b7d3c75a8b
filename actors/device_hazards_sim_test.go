//go:build linux && cgo

package actors

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/cuda/simdevice"
	"github.com/ringactor/ringactor/gpu/ringmsg"
)

// hzAddSource is a source kernel with the calling convention of
// cuda.SourceKernel (inputs, output, n). Its entry has the name of the
// built-in rc_add_f64, so the simulated device, which runs host-compiled
// kernels by entry name, can run it.
const hzAddSource = `
extern "C" __global__ void rc_add_f64(const double *a, const double *b, double *out, unsigned long long n) {
	unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
	if (i < n) {
		out[i] = a[i] + b[i];
	}
}
`

func f64(t testing.TB, v ...float64) *gpu.UnifiedBuffer {
	t.Helper()
	b, err := gpu.NewBuffer(slices.Clone(v))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hzAddKernel registers hzAddSource as a run-time source kernel: compiled
// by NVRTC when it can be loaded, else the same entry of the built-in PTX
// (the registration then loads that module, as SourceKernel does).
func hzAddKernel(t *testing.T, ctx context.Context, b *cuda.Backend) *gpu.KernelSpec {
	t.Helper()
	ks, err := cuda.SourceKernel(ctx, b, cuda.SourceSpec{
		Name: "hz_add", Code: hzAddSource, Entry: "rc_add_f64", DTypes: []gpu.DType{gpu.F64}, Inputs: 2, Elementwise: true,
	})
	if err == nil {
		return ks
	}
	if !errors.Is(err, cuda.ErrNoNVRTC) {
		t.Fatal(err)
	}
	t.Logf("NVRTC not available (%v): registering the built-in PTX's rc_add_f64 instead", err)
	img := append(append([]byte(nil), cuda.OneShotPTX...), "\n// hz_add\n"...)
	if err := b.LoadPTX(ctx, img, "rc_add_f64"); err != nil {
		t.Fatal(err)
	}
	ks = &gpu.KernelSpec{Name: "hz_add", Inputs: 2, DTypes: []gpu.DType{gpu.F64}, Elementwise: true,
		OutShape: func(in []gpu.Shape, _ []float64) (gpu.Shape, error) { return in[0], nil },
		Device: map[string]gpu.KernelFunc{string(gpu.KindCUDA): func(ctx context.Context, in []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer, sc []float64) error {
			return b.RunPTX(ctx, img, "rc_add_f64", in, out, sc)
		}}}
	return ks
}

// TestDeviceHazards runs a live device ring kernel, under traffic, beside
// every operation that used to make a synchronising driver call while
// rings run — Execute, ExecuteBatch, device buffer alloc/free,
// RegisterKernel of a source kernel, a second device ring kernel's
// registration and launch, and Runtime.Close — on the simulated device in
// strict hazard mode, where any call that would wait forever beside a
// persistent kernel on a GPU fails at once (TestStrictHazardModelBites in
// gpu/cuda shows that it does). It passes because the backend allocates
// without synchronising (stream-ordered pool, pinned arena) and makes the
// unavoidable calls (module loads) in device epochs: the test checks
// that those paths were taken and that the model raised nothing, even an
// error absorbed on its way up.
func TestDeviceHazards(t *testing.T) {
	b := simdevice.NewBackend(64 << 20)
	hz := simdevice.Hazards(b)
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("closing the simulated backend: %v", err)
		}
	})
	rt := newTestRuntime(t, WithBackends(b))
	ctx := testCtx(t)
	noHazards := func(when string) {
		t.Helper()
		for _, e := range hz.Raised() {
			t.Errorf("%s: %v", when, e)
		}
		if t.Failed() {
			t.FailNow()
		}
	}

	// A live device ring kernel with traffic that checks every reply.
	def, err := NewDeviceKernel[ringmsg.ReduceMsg, ringmsg.ScalarReply]("hz-sum", ringmsg.Sum)
	if err != nil {
		t.Fatal(err)
	}
	ring1 := mustLaunch(t, rt, def, true)
	if ring1.Placement() != "cuda:sim" || len(hz.InFlight()) != 1 {
		t.Fatalf("placement %q, persistent launches %v", ring1.Placement(), hz.InFlight())
	}
	stop := make(chan struct{})
	var traffic sync.WaitGroup
	var sent int
	stopTraffic := sync.OnceFunc(func() { close(stop); traffic.Wait() })
	t.Cleanup(stopTraffic)
	traffic.Add(1)
	go func() {
		defer traffic.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				sent = i
				return
			default:
			}
			r := ringmsg.ReduceMsg{N: 2}
			r.X[0], r.X[1] = float32(i), 1
			got, err := ring1.Request(ctx, r)
			if err != nil || got.Value != float64(i+1) {
				t.Errorf("ring request %d: %v, %v", i, got.Value, err)
				sent = i
				return
			}
		}
	}()

	// Execute and ExecuteBatch on the device.
	var p ExecProfile
	out, err := rt.Execute(ctx, "relu", bufs(f32(t, -1, 2, -3)), nil, OnBackend("cuda:sim"), Profiled(&p))
	if err != nil || p.Backend != "cuda:sim" || !slices.Equal(read[float32](t, out), []float32{0, 2, 0}) {
		t.Fatalf("Execute beside a ring: %v on %q", err, p.Backend)
	}
	outs, err := rt.ExecuteBatch(ctx, "scale", [][]*gpu.UnifiedBuffer{bufs(f32(t, 1, 2)), bufs(f32(t, 3, 4))},
		WithScalars(2), OnBackend("cuda:sim"))
	if err != nil || len(outs) != 2 || !slices.Equal(read[float32](t, outs[0]), []float32{2, 4}) ||
		!slices.Equal(read[float32](t, outs[1]), []float32{6, 8}) {
		t.Fatalf("ExecuteBatch beside a ring: %v", err)
	}
	noHazards("Execute and ExecuteBatch")

	// Device buffers: allocate, copy, free.
	mem, err := b.Allocator().Alloc(ctx, 4096)
	if err != nil {
		t.Fatal(err)
	}
	buf, _ := gpu.NewBuffer([]float64{1, 2, 3})
	if _, err := buf.EnsureOnDevice(ctx, b.Allocator()); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(mem.Free(), buf.Free()); err != nil {
		t.Fatal(err)
	}
	noHazards("buffer alloc/free")

	// RegisterKernel of a source kernel, then run it on the device.
	epochs := b.EpochStats().Count
	if err := rt.RegisterKernel(ctx, hzAddKernel(t, ctx, b)); err != nil {
		t.Fatal(err)
	}
	sum, err := rt.Execute(ctx, "hz_add", bufs(f64(t, 1, 2), f64(t, 10, 20)), nil, OnBackend("cuda:sim"), Profiled(&p))
	if err != nil || p.Backend != "cuda:sim" || !slices.Equal(read[float64](t, sum), []float64{11, 22}) {
		t.Fatalf("source kernel beside a ring: %v on %q", err, p.Backend)
	}
	if got := b.EpochStats(); got.Count != epochs+1 || got.LastReason != "cuModuleLoadDataEx" {
		t.Fatalf("registering a source kernel beside a ring: epochs %d -> %+v", epochs, got)
	}
	noHazards("RegisterKernel")

	// A second module's load beside the live ring (a new image: the
	// one-shot PTX with a marker appended, so nothing is cached), then a
	// second device ring kernel's registration, which launches beside the
	// first.
	img := append(append([]byte(nil), cuda.OneShotPTX...), "\n// second device kernel\n"...)
	if err := b.LoadPTX(ctx, img, "rc_add_f32"); err != nil {
		t.Fatal(err)
	}
	def2, err := NewDeviceKernel[ringmsg.ReduceMsg, ringmsg.ScalarReply]("hz-max", ringmsg.Max)
	if err != nil {
		t.Fatal(err)
	}
	ring2 := mustLaunch(t, rt, def2, true)
	if len(hz.InFlight()) != 2 {
		t.Fatalf("persistent launches %v", hz.InFlight())
	}
	r := ringmsg.ReduceMsg{N: 3}
	r.X[0], r.X[1], r.X[2] = 4, 9, -1
	if got, err := ring2.Request(ctx, r); err != nil || got.Value != 9 {
		t.Fatalf("second ring: %v, %v", got.Value, err)
	}
	noHazards("second device kernel")

	// A device ring kernel of the user's own code: its registration
	// compiles its program and loads it, in a device epoch beside the live
	// rings, and it launches beside them.
	epochs3 := b.EpochStats().Count
	def3, err := NewDeviceRingKernel("hz-saxpy", DeviceSource{Code: saxpyCUDA, Entry: "saxpy"}, newSaxpyFallback("hz-saxpy"))
	if err != nil {
		t.Fatal(err)
	}
	ring3 := mustLaunch(t, rt, def3, true)
	if ring3.Placement() != "cuda:sim" || len(hz.InFlight()) != 3 {
		t.Fatalf("user device kernel: placement %q, persistent launches %v", ring3.Placement(), hz.InFlight())
	}
	if got := b.EpochStats(); got.Count <= epochs3 || got.LastReason != "cuModuleLoadDataEx" {
		t.Fatalf("registering a user device kernel beside rings: epochs %d -> %+v", epochs3, got)
	}
	q := saxpyReq{A: 2, N: 2}
	q.X[0], q.X[1], q.Y[0], q.Y[1] = 1, 2, 10, 20
	if got, err := ring3.Request(ctx, q); err != nil || got.N != 2 || got.Z[0] != 12 || got.Z[1] != 24 {
		t.Fatalf("user device kernel: %+v, %v", got.Z[:2], err)
	}
	noHazards("a user device kernel's registration")

	stopTraffic()
	if sent == 0 {
		t.Fatal("no traffic went through the first ring")
	}
	if got := b.EpochStats(); got.Count < epochs+2 || got.RingsParked < 2 {
		t.Fatalf("epoch stats %+v", got)
	}
	if n := ring1.Telemetry().Processed; n < uint64(sent) {
		t.Fatalf("processed %d of %d", n, sent)
	}
	if err := rt.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	noHazards("Runtime.Close")
	if len(hz.InFlight()) != 0 {
		t.Fatalf("persistent launches after Close: %v", hz.InFlight())
	}
	// The paths that make this pass: no cuMemAlloc/cuMemFree at all (the
	// pool), module loads only in epochs or before any ring.
	if hz.Calls("cuMemAlloc_v2") != 0 || hz.Calls("cuMemFree_v2") != 0 || hz.Calls("cuMemAllocFromPoolAsync") == 0 {
		t.Fatalf("allocations: cuMemAlloc %d, cuMemFree %d, pool %d", hz.Calls("cuMemAlloc_v2"), hz.Calls("cuMemFree_v2"),
			hz.Calls("cuMemAllocFromPoolAsync"))
	}
}
