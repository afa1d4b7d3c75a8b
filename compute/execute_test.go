package compute

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/supervision"
)

// fakeDevice is a device backend for tests: it computes with the kernels'
// CPU implementations and injects failures, delays and wrong results.
type fakeDevice struct {
	mu       sync.Mutex
	failures []error // returned by the next calls, in order
	oomAbove int     // a batch of more items fails with out-of-memory
	delay    time.Duration
	corrupt  bool
	calls    int
	batches  []int
}

func (*fakeDevice) Name() string          { return "fake:0" }
func (*fakeDevice) Kind() gpu.BackendKind { return gpu.KindCUDA }
func (*fakeDevice) Available() error      { return nil }
func (*fakeDevice) Supports(s *gpu.KernelSpec, dt gpu.DType) bool {
	return s.CPU != nil && s.Supports(dt)
}
func (*fakeDevice) Allocator() gpu.Allocator { return nil }

func (f *fakeDevice) Execute(ctx context.Context, s *gpu.KernelSpec, in []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer, sc []float64) error {
	return f.ExecuteBatch(ctx, s, [][]*gpu.UnifiedBuffer{in}, []*gpu.UnifiedBuffer{out}, sc)
}

func (f *fakeDevice) ExecuteBatch(ctx context.Context, s *gpu.KernelSpec, items [][]*gpu.UnifiedBuffer, outs []*gpu.UnifiedBuffer, sc []float64) error {
	f.mu.Lock()
	f.calls++
	f.batches = append(f.batches, len(items))
	var fail error
	if len(f.failures) > 0 {
		fail, f.failures = f.failures[0], f.failures[1:]
	}
	oom := f.oomAbove > 0 && len(items) > f.oomAbove
	delay, corrupt := f.delay, f.corrupt
	f.mu.Unlock()
	if delay > 0 {
		time.Sleep(delay) // simulated device time, not synchronisation
	}
	switch {
	case fail != nil:
		return fail
	case oom:
		return &gpu.DeviceError{Kind: gpu.DeviceOutOfMemory, Backend: "fake", Reason: "batch too large"}
	}
	for i, in := range items {
		if err := s.CPU(ctx, in, outs[i], sc); err != nil {
			return err
		}
		if corrupt {
			if v, err := gpu.HostSlice[float32](outs[i]); err == nil {
				v[0]++
			}
		}
	}
	return nil
}

func (f *fakeDevice) set(fn func(*fakeDevice)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

var transient = &gpu.DeviceError{Kind: gpu.DeviceBusyTransient, Backend: "fake", Reason: "busy"}

func TestExecuteNamedKernels(t *testing.T) {
	rt := newTestOrchestrator(t)
	ctx := testCtx(t)
	out, err := rt.Execute(ctx, "add", bufs(f32(t, 1, 2, 3), f32(t, 10, 20, 30)), gpu.Shape{3})
	if err != nil || !slices.Equal(read[float32](t, out), []float32{11, 22, 33}) {
		t.Fatalf("add: %v", err)
	}
	out, err = rt.Execute(ctx, "scale", bufs(f32(t, 1, -2)), nil, WithScalars(3))
	if err != nil || !slices.Equal(read[float32](t, out), []float32{3, -6}) {
		t.Fatalf("scale: %v", err)
	}
	i32, _ := gpu.NewBuffer([]int32{math.MaxInt32, -5})
	one, _ := gpu.NewBuffer([]int32{1, 1})
	out, err = rt.Execute(ctx, "add", bufs(i32, one), nil)
	if err != nil || !slices.Equal(read[int32](t, out), []int32{math.MinInt32, -4}) {
		t.Fatalf("add wraps: %v %v", read[int32](t, out), err)
	}
	a, _ := gpu.NewBuffer([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	b, _ := gpu.NewBuffer([]float64{1, 0, 0, 1, 1, 1}, 3, 2)
	out, err = rt.Execute(ctx, "matmul", bufs(a, b), gpu.Shape{2, 2})
	if err != nil || !slices.Equal(read[float64](t, out), []float64{4, 5, 10, 11}) {
		t.Fatalf("matmul: %v %v", out, err)
	}
	s, err := Reduce[float32](ctx, rt, "sum", f32(t, 1, 2, 3.5))
	if err != nil || s != 6.5 {
		t.Fatalf("sum: %v %v", s, err)
	}
	m, err := Reduce[float64](ctx, rt, "mean", i32)
	if err != nil || m != (float64(math.MaxInt32)-5)/2 {
		t.Fatalf("mean: %v %v", m, err)
	}
	_, err = Reduce[int32](ctx, rt, "mean", i32)
	wantErr(t, err, gpu.ErrDTypeMismatch)
	// CSR [[1 2] [0 3]] · [1 1] = [3 3]
	vals, _ := gpu.NewBuffer([]float64{1, 2, 3})
	col, _ := gpu.NewBuffer([]int32{0, 1, 1})
	ptr, _ := gpu.NewBuffer([]int32{0, 2, 3})
	x, _ := gpu.NewBuffer([]float64{1, 1})
	out, err = rt.Execute(ctx, "spmv", bufs(vals, col, ptr, x), nil)
	if err != nil || !slices.Equal(read[float64](t, out), []float64{3, 3}) {
		t.Fatalf("spmv: %v", err)
	}
	img, _ := gpu.NewBuffer([]uint8{9, 9, 9, 9, 9, 9}, 2, 3)
	out, err = rt.Execute(ctx, "blur", bufs(img), nil, WithScalars(1, 0.8))
	if err != nil || !slices.Equal(read[uint8](t, out), []uint8{9, 9, 9, 9, 9, 9}) {
		t.Fatalf("blur: %v", err)
	}
}

func TestExecuteBadInput(t *testing.T) {
	rt := newTestOrchestrator(t)
	ctx := testCtx(t)
	a, b := f32(t, 1, 2, 3), f32(t, 1, 2, 3)
	_, err := rt.Execute(ctx, "nope", bufs(a), nil)
	wantErr(t, err, gpu.ErrUnknownKernel)
	s32, _ := gpu.NewBuffer([]int32{1, 2, 3})
	_, err = rt.Execute(ctx, "leaky_relu", bufs(s32), nil)
	wantErr(t, err, gpu.ErrUnsupportedDType)
	_, err = rt.Execute(ctx, "add", bufs(a, f32(t, 1, 2)), nil)
	wantErr(t, err, gpu.ErrShape)
	_, err = rt.Execute(ctx, "add", bufs(a, b), gpu.Shape{4})
	wantErr(t, err, gpu.ErrShape)
	_, err = rt.Execute(ctx, "add", bufs(a, b), gpu.Shape{3, 0})
	wantErr(t, err, gpu.ErrShape)
	_, err = rt.Execute(ctx, "add", bufs(a, b), gpu.Shape{-3})
	wantErr(t, err, gpu.ErrShape)
	_, err = rt.Execute(ctx, "add", bufs(a), nil)
	wantErr(t, err, gpu.ErrInputCount)
	_, err = rt.Execute(ctx, "add", bufs(a, s32), nil)
	wantErr(t, err, gpu.ErrDTypeMismatch)
	_, err = rt.Execute(ctx, "matmul", bufs(a, b), nil)
	wantErr(t, err, gpu.ErrShape)
	_, err = rt.Execute(ctx, "scale", bufs(s32), nil, WithScalars(0.5))
	wantErr(t, err, gpu.ErrArgument)
	_, err = rt.Execute(ctx, "scale", bufs(a), nil, WithScalars(1, 2))
	wantErr(t, err, gpu.ErrArgument)
	_, err = rt.Execute(ctx, "blur", bufs(a), nil)
	wantErr(t, err, gpu.ErrShape)
	freed := f32(t, 1, 2, 3)
	_ = freed.Free()
	_, err = rt.Execute(ctx, "add", bufs(freed, b), nil)
	wantErr(t, err, gpu.ErrFreed)
	wantErr(t, err, gpu.ErrMemory)
	_, err = rt.Execute(ctx, "add", bufs(a, b), nil, IntoBuffer(s32))
	wantErr(t, err, gpu.ErrDTypeMismatch)
	_, err = rt.Execute(ctx, "add", bufs(a, nil), nil)
	wantErr(t, err, gpu.ErrArgument)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = rt.Execute(cancelled, "add", bufs(a, b), nil)
	wantErr(t, err, context.Canceled)
	// Bad CSR data the shapes cannot rule out: a column index out of range.
	vals, _ := gpu.NewBuffer([]float64{1})
	col, _ := gpu.NewBuffer([]int32{5})
	ptr, _ := gpu.NewBuffer([]int32{0, 1})
	x, _ := gpu.NewBuffer([]float64{1})
	_, err = rt.Execute(ctx, "spmv", bufs(vals, col, ptr, x), nil)
	wantErr(t, err, gpu.ErrArgument)
	// Nothing failed leaked a pooled buffer.
	if p := rt.Profile(); p.Pool.HeldBytes < 0 {
		t.Fatal("negative pool")
	}
}

func TestPoolSteadyState(t *testing.T) {
	rt := newTestOrchestrator(t)
	ctx := testCtx(t)
	a, b := f32(t, make([]float32, 1000)...), f32(t, make([]float32, 1000)...)
	for i := 0; i < 10; i++ {
		out, err := rt.Execute(ctx, "add", bufs(a, b), nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = out.Free()
	}
	before := rt.Pool().Stats().Misses
	for i := 0; i < 1000; i++ {
		out, err := rt.Execute(ctx, "add", bufs(a, b), nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = out.Free()
	}
	if st := rt.Pool().Stats(); st.Misses != before || st.Hits < 1000 {
		t.Fatalf("steady state allocated new buffers: %+v (misses before %d)", st, before)
	}
}

func deviceOrchestrator(t *testing.T, dev *fakeDevice, opts ...Option) *Orchestrator {
	return newTestOrchestrator(t, append([]Option{WithBackends(dev), WithMinDeviceWork(0), WithAdaptiveSelection(false),
		WithRecovery(supervision.Recovery{Enabled: true, Retries: 3, Fallback: true, SplitOnOOM: true,
			Backoff: supervision.Backoff{Initial: 10 * time.Microsecond, Max: time.Millisecond, Multiplier: 2}})}, opts...)...)
}

func TestRecoveryRetriesTransient(t *testing.T) {
	dev := &fakeDevice{failures: []error{transient, transient}}
	rt := deviceOrchestrator(t, dev)
	var p ExecProfile
	out, err := rt.Execute(testCtx(t), "add", bufs(f32(t, 1), f32(t, 2)), nil, Profiled(&p))
	if err != nil || read[float32](t, out)[0] != 3 {
		t.Fatal(err)
	}
	if p.Retries != 2 || p.Backend != "fake:0" || p.Fallback {
		t.Fatalf("%+v", p)
	}
}

func TestRecoveryFallsBackAfterRetries(t *testing.T) {
	dev := &fakeDevice{failures: []error{transient, transient, transient, transient}}
	rt := deviceOrchestrator(t, dev)
	var p ExecProfile
	out, err := rt.Execute(testCtx(t), "add", bufs(f32(t, 1), f32(t, 2)), nil, Profiled(&p))
	if err != nil || read[float32](t, out)[0] != 3 {
		t.Fatal(err)
	}
	if p.Retries != 3 || p.Backend != "cpu" || !p.Fallback || dev.calls != 4 {
		t.Fatalf("%+v calls %d", p, dev.calls)
	}
}

func TestRecoveryDeviceLostFallsBack(t *testing.T) {
	dev := &fakeDevice{failures: []error{&gpu.DeviceError{Kind: gpu.DeviceFailed, Backend: "fake", Reason: "device lost"}}}
	rt := deviceOrchestrator(t, dev)
	var p ExecProfile
	out, err := rt.Execute(testCtx(t), "add", bufs(f32(t, 1), f32(t, 2)), nil, Profiled(&p))
	if err != nil || read[float32](t, out)[0] != 3 || p.Backend != "cpu" || !p.Fallback || p.Retries != 0 {
		t.Fatalf("%v %+v", err, p)
	}
	if prof := rt.Profile(); prof.Kernels[0].Fallbacks != 1 {
		t.Fatalf("%+v", prof)
	}
}

func TestRecoveryCompilationNotRetried(t *testing.T) {
	dev := &fakeDevice{failures: []error{&gpu.CompilationError{Kernel: "add", Log: "error: bad", Err: errors.New("nvrtc")}}}
	rt := deviceOrchestrator(t, dev)
	var p ExecProfile
	_, err := rt.Execute(testCtx(t), "add", bufs(f32(t, 1), f32(t, 2)), nil, Profiled(&p))
	wantErr(t, err, gpu.ErrCompilation)
	if p.Retries != 0 || p.Fallback || dev.calls != 1 {
		t.Fatalf("%+v", p)
	}
}

func TestRecoveryDisabled(t *testing.T) {
	dev := &fakeDevice{failures: []error{transient}}
	rt := deviceOrchestrator(t, dev, WithRecovery(supervision.Recovery{}))
	_, err := rt.Execute(testCtx(t), "add", bufs(f32(t, 1), f32(t, 2)), nil)
	if !gpu.IsTransient(err) || dev.calls != 1 {
		t.Fatalf("%v", err)
	}
}

func TestRecoveryOOMSplitsBatch(t *testing.T) {
	dev := &fakeDevice{oomAbove: 2}
	rt := deviceOrchestrator(t, dev)
	var items [][]*gpu.UnifiedBuffer
	for i := 0; i < 8; i++ {
		items = append(items, bufs(f32(t, float32(i), 1), f32(t, 1, float32(i))))
	}
	var p ExecProfile
	outs, err := rt.ExecuteBatch(testCtx(t), "add", items, Profiled(&p))
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range outs {
		if v := read[float32](t, o); v[0] != float32(i)+1 || v[1] != float32(i)+1 {
			t.Fatalf("item %d = %v", i, v)
		}
	}
	if p.Splits != 3 || p.Backend != "fake:0" || p.Fallback {
		t.Fatalf("%+v batches %v", p, dev.batches)
	}
	if !slices.Equal(dev.batches, []int{8, 4, 2, 2, 4, 2, 2}) {
		t.Fatalf("batches %v", dev.batches)
	}
}

func TestOverrideBackend(t *testing.T) {
	dev := &fakeDevice{}
	rt := deviceOrchestrator(t, dev)
	var p ExecProfile
	if _, err := rt.Execute(testCtx(t), "add", bufs(f32(t, 1), f32(t, 2)), nil, OnBackend("cpu"), Profiled(&p)); err != nil || p.Backend != "cpu" {
		t.Fatalf("%v %+v", err, p)
	}
	_, err := rt.Execute(testCtx(t), "add", bufs(f32(t, 1), f32(t, 2)), nil, OnBackend("tpu"))
	wantErr(t, err, gpu.ErrArgument)
	// A pinned backend is not fallen back from.
	dev.set(func(d *fakeDevice) { d.failures = []error{&gpu.DeviceError{Kind: gpu.DeviceFailed, Backend: "fake"}} })
	_, err = rt.Execute(testCtx(t), "add", bufs(f32(t, 1), f32(t, 2)), nil, OnBackend("cuda"))
	wantErr(t, err, gpu.ErrDevice)
}

func TestAdaptiveSelectionLearns(t *testing.T) {
	dev := &fakeDevice{delay: 3 * time.Millisecond}
	rt := deviceOrchestrator(t, dev, WithAdaptiveSelection(true))
	ctx := testCtx(t)
	a := f32(t, make([]float32, 4096)...)
	choose := func() string {
		var p ExecProfile
		out, err := rt.Execute(ctx, "add", bufs(a, a), nil, Profiled(&p))
		if err != nil {
			t.Fatal(err)
		}
		_ = out.Free()
		return p.Backend
	}
	for i := 0; i < 8; i++ { // measure both
		choose()
	}
	// The timings are wall-clock: on a loaded machine one CPU run stalled
	// past the device's 3 ms poisons the CPU's mean until exploration pulls
	// it back. So the test asks that the selector learns, not that no stall
	// happens: some window of 40 calls must choose the CPU at least 38 times
	// (a selector that ignored timings would choose the device every time
	// in every window).
	fewest := 40
	for window := 0; window < 10; window++ {
		cpuRuns := 0
		for i := 0; i < 40; i++ {
			if choose() == "cpu" {
				cpuRuns++
			}
		}
		if cpuRuns >= 38 {
			return
		}
		fewest = min(fewest, 40-cpuRuns)
		t.Logf("window %d: the device was chosen %d/40 times", window, 40-cpuRuns)
	}
	t.Fatalf("a device 3 ms slower was chosen at least %d/40 times in every one of 10 windows", fewest)
}

func TestValidation(t *testing.T) {
	dev := &fakeDevice{corrupt: true}
	rt := deviceOrchestrator(t, dev, WithValidation(Validation{Enabled: true, Strict: true}))
	ctx := testCtx(t)
	_, err := rt.Execute(ctx, "add", bufs(f32(t, 1, 2), f32(t, 1, 2)), nil)
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Index != 0 || ve.Got != 3 || ve.Want != 2 || ve.Backend != "fake:0" {
		t.Fatalf("%v", err)
	}
	// A correct device passes; non-strict mode returns the result and counts.
	dev.set(func(d *fakeDevice) { d.corrupt = false })
	var p ExecProfile
	if _, err := rt.Execute(ctx, "add", bufs(f32(t, 1, 2), f32(t, 1, 2)), nil, Profiled(&p)); err != nil || !p.Validated {
		t.Fatalf("%v %+v", err, p)
	}
	rt2 := deviceOrchestrator(t, &fakeDevice{corrupt: true}, WithValidation(Validation{Enabled: true}))
	out, err := rt2.Execute(ctx, "add", bufs(f32(t, 1, 2), f32(t, 1, 2)), nil)
	if err != nil || read[float32](t, out)[0] != 3 {
		t.Fatalf("non-strict: %v", err)
	}
	if k := rt2.Profile().Kernels[0]; k.Mismatches != 1 || k.Validations != 1 {
		t.Fatalf("%+v", k)
	}
	// Sampling: validate never at rate ~0 unless forced.
	rt3 := deviceOrchestrator(t, &fakeDevice{corrupt: true}, WithValidation(Validation{Enabled: true, Strict: true, SampleRate: 1e-12}))
	if _, err := rt3.Execute(ctx, "add", bufs(f32(t, 1), f32(t, 1)), nil); err != nil {
		t.Fatal(err)
	}
	_, err = rt3.Execute(ctx, "add", bufs(f32(t, 1), f32(t, 1)), nil, CrossValidate(true))
	wantErr(t, err, ErrValidation)
}

func TestSubmitPollWait(t *testing.T) {
	dev := &fakeDevice{delay: 20 * time.Millisecond}
	rt := deviceOrchestrator(t, dev)
	ctx := testCtx(t)
	j := rt.Submit(ctx, "add", bufs(f32(t, 1), f32(t, 2)), nil)
	if s := j.Poll(); s != JobPending {
		t.Fatalf("state %v", s)
	}
	out, err := j.Wait(ctx)
	if err != nil || read[float32](t, out)[0] != 3 || j.Poll() != JobCompleted {
		t.Fatal(err)
	}
	j = rt.Submit(ctx, "nope", nil, nil)
	<-j.Done()
	if j.Poll() != JobFailed {
		t.Fatal("unknown kernel job did not fail")
	}
	j = rt.Submit(ctx, "add", bufs(f32(t, 1), f32(t, 2)), nil)
	j.Cancel()
	if _, err := j.Wait(ctx); err == nil && j.Poll() != JobCompleted {
		t.Fatal("cancel")
	}
}

func TestPipelineAndMap(t *testing.T) {
	rt := newTestOrchestrator(t)
	ctx := testCtx(t)
	bias := f32(t, 1, 1, 1, 1)
	p := rt.NewPipeline().Then("scale", nil, WithScalars(2)).Then("relu", nil).Then("add", bufs(bias))
	puts := rt.Pool().Stats().Puts
	out, err := p.Run(ctx, f32(t, -1, 0, 1, 2))
	if err != nil || !slices.Equal(read[float32](t, out), []float32{1, 1, 3, 5}) {
		t.Fatalf("pipeline: %v %v", err, out)
	}
	if got := rt.Pool().Stats().Puts - puts; got != 2 {
		t.Fatalf("%d intermediates returned to the pool, want 2", got)
	}
	_, err = rt.NewPipeline().Then("scale", nil).Then("nope", nil).Run(ctx, f32(t, 1))
	wantErr(t, err, gpu.ErrUnknownKernel)

	n := 300_000
	a, b := make([]float32, n), make([]float32, n)
	for i := range a {
		a[i], b[i] = float32(i), 1
	}
	ab, _ := gpu.NewBuffer(a)
	bb, _ := gpu.NewBuffer(b)
	got, err := rt.Map(ctx, "add", bufs(ab, bb), 10_000)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range read[float32](t, got) {
		if v != float32(i)+1 {
			t.Fatalf("Map[%d] = %v", i, v)
		}
	}
	_, err = rt.Map(ctx, "sum", bufs(ab), 0)
	wantErr(t, err, gpu.ErrArgument)
}

func TestRegisterKernelAtRunTime(t *testing.T) {
	rt := newTestOrchestrator(t)
	ctx := testCtx(t)
	square := &gpu.KernelSpec{
		Name: "square", Inputs: 1, DTypes: []gpu.DType{gpu.F64}, Elementwise: true,
		OutShape: func(in []gpu.Shape, _ []float64) (gpu.Shape, error) { return in[0].Clone(), nil },
		CPU: func(_ context.Context, in []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer, _ []float64) error {
			x, _ := gpu.HostSlice[float64](in[0])
			y, _ := gpu.HostSlice[float64](out)
			for i := range x {
				y[i] = x[i] * x[i]
			}
			return nil
		},
	}
	if err := rt.RegisterKernel(ctx, square); err != nil {
		t.Fatal(err)
	}
	x, _ := gpu.NewBuffer([]float64{3, 4})
	out, err := rt.Execute(ctx, "square", bufs(x), nil)
	if err != nil || !slices.Equal(read[float64](t, out), []float64{9, 16}) {
		t.Fatal(err)
	}
	wantErr(t, rt.RegisterKernel(ctx, square), gpu.ErrRegistration)
	wantErr(t, rt.RegisterKernel(ctx, &gpu.KernelSpec{Name: "bad"}), gpu.ErrRegistration)
	found := false
	for _, s := range rt.Kernels() {
		found = found || s.Name == "square"
	}
	if !found {
		t.Fatal("square not listed")
	}
}
