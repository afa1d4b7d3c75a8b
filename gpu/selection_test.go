package gpu_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ringactor/ringactor/gpu"
)

// selFake is a backend that runs nothing: Supports follows the spec's dtypes
// (or supports, when set), Available returns avail.
type selFake struct {
	name     string
	kind     gpu.BackendKind
	avail    error
	supports func(*gpu.KernelSpec, gpu.DType) bool
}

func (b *selFake) Name() string          { return b.name }
func (b *selFake) Kind() gpu.BackendKind { return b.kind }
func (b *selFake) Available() error      { return b.avail }
func (b *selFake) Supports(spec *gpu.KernelSpec, dt gpu.DType) bool {
	if b.supports != nil {
		return b.supports(spec, dt)
	}
	return spec.Supports(dt)
}
func (b *selFake) Execute(context.Context, *gpu.KernelSpec, []*gpu.UnifiedBuffer, *gpu.UnifiedBuffer, []float64) error {
	return nil
}
func (b *selFake) ExecuteBatch(context.Context, *gpu.KernelSpec, [][]*gpu.UnifiedBuffer, []*gpu.UnifiedBuffer, []float64) error {
	return nil
}
func (b *selFake) Allocator() gpu.Allocator { return nil }

var _ gpu.Backend = (*selFake)(nil)

func selCPU() *selFake  { return &selFake{name: "cpu", kind: gpu.KindCPU} }
func selCUDA() *selFake { return &selFake{name: "cuda:0", kind: gpu.KindCUDA} }

func selUnavailable() error {
	return &gpu.DeviceError{Kind: gpu.DeviceUnavailable, Backend: "cuda", Reason: "no driver"}
}

// selSpec is a valid kernel spec on f32 only.
func selSpec(name string) *gpu.KernelSpec {
	return &gpu.KernelSpec{
		Name:     name,
		Inputs:   1,
		DTypes:   []gpu.DType{gpu.F32},
		OutShape: func(in []gpu.Shape, _ []float64) (gpu.Shape, error) { return in[0], nil },
		CPU: func(context.Context, []*gpu.UnifiedBuffer, *gpu.UnifiedBuffer, []float64) error {
			return nil
		},
	}
}

func mustChoose(t *testing.T, s *gpu.Selector, spec *gpu.KernelSpec, dt gpu.DType, n int, override string) gpu.Backend {
	t.Helper()
	b, err := s.Choose(spec, dt, n, override)
	if err != nil {
		t.Fatalf("Choose(%s, %v, %d, %q): %v", spec.Name, dt, n, override, err)
	}
	return b
}

func TestSelectorBackendLookup(t *testing.T) {
	cpu, cuda := selCPU(), selCUDA()
	s := gpu.NewSelector([]gpu.Backend{cpu, cuda}, gpu.SelectionPolicy{})
	if got := s.Backends(); len(got) != 2 || got[0] != cpu || got[1] != cuda {
		t.Errorf("Backends() = %v", got)
	}
	for name, want := range map[string]gpu.Backend{"cpu": cpu, "cuda:0": cuda, "cuda": cuda} {
		if b, ok := s.Backend(name); !ok || b != want {
			t.Errorf("Backend(%q) = %v, %v; want %v", name, b, ok, want.Name())
		}
	}
	if b, ok := s.Backend("tpu"); ok || b != nil {
		t.Errorf("Backend(tpu) = %v, %v", b, ok)
	}
	if b, ok := s.CPU(); !ok || b != cpu {
		t.Errorf("CPU() = %v, %v", b, ok)
	}
	if _, ok := gpu.NewSelector([]gpu.Backend{cuda}, gpu.SelectionPolicy{}).CPU(); ok {
		t.Error("CPU() found a CPU backend among [cuda:0]")
	}
}

func TestChooseOverride(t *testing.T) {
	cpu, cuda := selCPU(), selCUDA()
	s := gpu.NewSelector([]gpu.Backend{cpu, cuda}, gpu.SelectionPolicy{Accelerator: gpu.PreferCPU})
	spec := selSpec("add")
	for override, want := range map[string]gpu.Backend{"cuda:0": cuda, "cuda": cuda, "cpu": cpu} {
		if got := mustChoose(t, s, spec, gpu.F32, 1, override); got != want {
			t.Errorf("override %q chose %s, want %s", override, got.Name(), want.Name())
		}
	}
}

func TestChooseOverrideUnknown(t *testing.T) {
	s := gpu.NewSelector([]gpu.Backend{selCPU(), selCUDA()}, gpu.SelectionPolicy{})
	b, err := s.Choose(selSpec("add"), gpu.F32, 10, "tpu")
	var ae *gpu.ArgumentError
	if b != nil || !errors.Is(err, gpu.ErrArgument) || !errors.As(err, &ae) {
		t.Fatalf("Choose(override tpu) = %v, %v; want *ArgumentError(ErrArgument)", b, err)
	}
	if ae.Kernel != "add" || ae.Arg != "backend" {
		t.Errorf("ArgumentError = %+v", ae)
	}
}

func TestChooseOverrideUnavailable(t *testing.T) {
	cuda := selCUDA()
	cuda.avail = selUnavailable()
	s := gpu.NewSelector([]gpu.Backend{selCPU(), cuda}, gpu.SelectionPolicy{})
	b, err := s.Choose(selSpec("add"), gpu.F32, 10, "cuda")
	if b != nil || err != cuda.avail {
		t.Fatalf("Choose(override unavailable cuda) = %v, %v; want the backend's own error %v", b, err, cuda.avail)
	}
	if !errors.Is(err, gpu.ErrDeviceNotAvailable) {
		t.Errorf("error %v is not ErrDeviceNotAvailable", err)
	}
}

func TestChooseOverrideUnsupportedDType(t *testing.T) {
	s := gpu.NewSelector([]gpu.Backend{selCPU(), selCUDA()}, gpu.SelectionPolicy{})
	b, err := s.Choose(selSpec("add"), gpu.F64, 10, "cpu")
	var ae *gpu.ArgumentError
	if b != nil || !errors.Is(err, gpu.ErrUnsupportedDType) || !errors.As(err, &ae) {
		t.Fatalf("Choose(f64 on f32-only kernel) = %v, %v; want *ArgumentError(ErrUnsupportedDType)", b, err)
	}
}

func TestChooseNoCandidates(t *testing.T) {
	spec := selSpec("add")
	// The kernel has no f64: a bad argument, not a missing device.
	s := gpu.NewSelector([]gpu.Backend{selCPU(), selCUDA()}, gpu.SelectionPolicy{})
	if b, err := s.Choose(spec, gpu.F64, 10, ""); b != nil || !errors.Is(err, gpu.ErrUnsupportedDType) {
		t.Errorf("unsupported everywhere: Choose = %v, %v; want ErrUnsupportedDType", b, err)
	}
	// Nothing available.
	cpu, cuda := selCPU(), selCUDA()
	cpu.avail, cuda.avail = selUnavailable(), selUnavailable()
	s = gpu.NewSelector([]gpu.Backend{cpu, cuda}, gpu.SelectionPolicy{})
	b, err := s.Choose(spec, gpu.F32, 10, "")
	var de *gpu.DeviceError
	if b != nil || !errors.Is(err, gpu.ErrDeviceNotAvailable) || !errors.As(err, &de) {
		t.Errorf("nothing available: Choose = %v, %v; want *DeviceError(ErrDeviceNotAvailable)", b, err)
	}
	// No backends at all.
	if b, err := gpu.NewSelector(nil, gpu.SelectionPolicy{}).Choose(spec, gpu.F32, 10, ""); b != nil || !errors.Is(err, gpu.ErrDeviceNotAvailable) {
		t.Errorf("no backends: Choose = %v, %v", b, err)
	}
}

func TestChooseSingleCandidate(t *testing.T) {
	spec := selSpec("add")
	cpu := selCPU()
	for _, acc := range []gpu.Accelerator{gpu.Auto, gpu.PreferCPU, gpu.PreferCUDA} {
		s := gpu.NewSelector([]gpu.Backend{cpu}, gpu.SelectionPolicy{Accelerator: acc})
		if got := mustChoose(t, s, spec, gpu.F32, 1<<30, ""); got != cpu {
			t.Errorf("%v, only cpu: chose %s", acc, got.Name())
		}
	}
	cuda := selCUDA()
	s := gpu.NewSelector([]gpu.Backend{cuda}, gpu.SelectionPolicy{Accelerator: gpu.PreferCPU, MinDeviceWork: 1 << 20})
	if got := mustChoose(t, s, spec, gpu.F32, 1, ""); got != cuda {
		t.Errorf("PreferCPU, only cuda: chose %s", got.Name())
	}
}

func TestChoosePreferences(t *testing.T) {
	spec := selSpec("add")
	cpu, cuda := selCPU(), selCUDA()
	backends := []gpu.Backend{cuda, cpu} // order must not matter
	s := gpu.NewSelector(backends, gpu.SelectionPolicy{Accelerator: gpu.PreferCPU})
	if got := mustChoose(t, s, spec, gpu.F32, 1<<30, ""); got != cpu {
		t.Errorf("PreferCPU chose %s", got.Name())
	}
	s = gpu.NewSelector(backends, gpu.SelectionPolicy{Accelerator: gpu.PreferCUDA, MinDeviceWork: gpu.DefaultMinDeviceWork})
	if got := mustChoose(t, s, spec, gpu.F32, 1, ""); got != cuda {
		t.Errorf("PreferCUDA chose %s", got.Name())
	}
	cuda.avail = selUnavailable()
	if got := mustChoose(t, s, spec, gpu.F32, 1, ""); got != cpu {
		t.Errorf("PreferCUDA with cuda unavailable chose %s", got.Name())
	}
}

func TestChooseAutoByWork(t *testing.T) {
	spec := selSpec("add")
	cpu, cuda := selCPU(), selCUDA()
	s := gpu.NewSelector([]gpu.Backend{cpu, cuda}, gpu.SelectionPolicy{MinDeviceWork: 1000})
	if got := mustChoose(t, s, spec, gpu.F32, 999, ""); got != cpu {
		t.Errorf("work 999 < 1000 chose %s", got.Name())
	}
	if got := mustChoose(t, s, spec, gpu.F32, 1000, ""); got != cuda {
		t.Errorf("work 1000 chose %s", got.Name())
	}
	heavy := selSpec("matmul")
	heavy.Cost = 4
	if got := mustChoose(t, s, heavy, gpu.F32, 250, ""); got != cuda {
		t.Errorf("work 250×4 chose %s", got.Name())
	}
	if got := mustChoose(t, s, heavy, gpu.F32, 249, ""); got != cpu {
		t.Errorf("work 249×4 chose %s", got.Name())
	}
	cuda.avail = selUnavailable()
	if got := mustChoose(t, s, spec, gpu.F32, 1<<30, ""); got != cpu {
		t.Errorf("device unavailable chose %s", got.Name())
	}
	// MinDeviceWork 0 sends everything to the device.
	s = gpu.NewSelector([]gpu.Backend{cpu, selCUDA()}, gpu.SelectionPolicy{})
	if got := mustChoose(t, s, spec, gpu.F32, 1, ""); got.Kind() != gpu.KindCUDA {
		t.Errorf("MinDeviceWork 0 chose %s", got.Name())
	}
}

func TestSelectorObserveIgnoredWhenNotAdaptive(t *testing.T) {
	spec, cpu := selSpec("add"), selCPU()
	s := gpu.NewSelector([]gpu.Backend{cpu, selCUDA()}, gpu.SelectionPolicy{})
	s.Observe(spec, 1000, cpu, time.Millisecond)
	if d, n := s.Estimate(spec, 1000, "cpu"); d != 0 || n != 0 {
		t.Errorf("Estimate after Observe on a non-adaptive selector = %v, %d", d, n)
	}
}

func TestSelectorAdaptiveExploresThenExploits(t *testing.T) {
	spec := selSpec("add")
	cpu, cuda := selCPU(), selCUDA()
	const every = 8
	s := gpu.NewSelector([]gpu.Backend{cpu, cuda}, gpu.SelectionPolicy{Adaptive: true, MinSamples: 3, ExploreEvery: every})
	const n = 4096
	latency := map[string]time.Duration{"cpu": time.Millisecond, "cuda:0": 10 * time.Millisecond}
	run := func() gpu.Backend {
		b := mustChoose(t, s, spec, gpu.F32, n, "")
		s.Observe(spec, n, b, latency[b.Name()])
		return b
	}

	// Exploration: each candidate until it has MinSamples timings.
	picks := map[string]int{}
	for range 6 {
		picks[run().Name()]++
	}
	if picks["cpu"] != 3 || picks["cuda:0"] != 3 {
		t.Fatalf("first 6 calls picked %v, want 3 each", picks)
	}
	if d, k := s.Estimate(spec, n, "cpu"); d != time.Millisecond || k != 3 {
		t.Errorf("Estimate(cpu) = %v, %d; want 1ms, 3", d, k)
	}
	if d, k := s.Estimate(spec, n, "cuda:0"); d != 10*time.Millisecond || k != 3 {
		t.Errorf("Estimate(cuda) = %v, %d; want 10ms, 3", d, k)
	}

	// Exploitation: cpu, except every ExploreEvery-th call re-measures cuda.
	for call := 1; call <= 8*every; call++ {
		got := run()
		want := cpu
		if call%every == 0 {
			want = cuda
		}
		if got != want {
			t.Fatalf("judged call %d chose %s, want %s", call, got.Name(), want.Name())
		}
	}
}

func TestSelectorAdaptiveFlipsWhenDeviceGetsFaster(t *testing.T) {
	spec := selSpec("add")
	cpu, cuda := selCPU(), selCUDA()
	const every = 16
	s := gpu.NewSelector([]gpu.Backend{cpu, cuda}, gpu.SelectionPolicy{Adaptive: true, MinSamples: 3, ExploreEvery: every})
	const n = 1 << 16
	for range 3 {
		s.Observe(spec, n, cpu, time.Millisecond)
		s.Observe(spec, n, cuda, 10*time.Millisecond)
	}
	for i := range 2 * every {
		if got := mustChoose(t, s, spec, gpu.F32, n, ""); got != cpu && (i+1)%every != 0 {
			t.Fatalf("call %d chose %s before cuda got faster", i+1, got.Name())
		}
	}

	// cuda now takes 0.1 ms. The mean moves 30 % of the way per sample:
	// 0.1 + 9.9×0.7^k < 1 from k = 7 on; allow a few more.
	const bound = 10
	flipped := 0
	for k := 1; k <= bound && flipped == 0; k++ {
		s.Observe(spec, n, cuda, 100*time.Microsecond)
		// Two calls: at most one of them is an exploration call.
		first := mustChoose(t, s, spec, gpu.F32, n, "")
		second := mustChoose(t, s, spec, gpu.F32, n, "")
		if first == cuda && second == cuda {
			flipped = k
		}
	}
	if flipped == 0 {
		d, _ := s.Estimate(spec, n, "cuda:0")
		t.Fatalf("still not choosing cuda after %d samples of 0.1ms (cuda mean %v)", bound, d)
	}
	if flipped < 7 {
		t.Errorf("flipped after %d samples; the cuda mean cannot be below 1ms before 7", flipped)
	}
	// From now on cuda, except on exploration calls (which measure cpu).
	for i := range 3 * every {
		if got := mustChoose(t, s, spec, gpu.F32, n, ""); got != cuda && got != cpu {
			t.Fatalf("call %d chose %s", i, got.Name())
		}
	}
	cudaPicks := 0
	for range every {
		if mustChoose(t, s, spec, gpu.F32, n, "") == cuda {
			cudaPicks++
		}
	}
	if cudaPicks != every-1 {
		t.Errorf("after the flip cuda got %d of %d calls, want %d", cudaPicks, every, every-1)
	}
}

func TestSelectorAdaptiveSkipsUnavailable(t *testing.T) {
	spec := selSpec("add")
	cpu, cuda := selCPU(), selCUDA()
	s := gpu.NewSelector([]gpu.Backend{cpu, cuda}, gpu.SelectionPolicy{Adaptive: true})
	cuda.avail = selUnavailable()
	for range 10 {
		if got := mustChoose(t, s, spec, gpu.F32, 1, ""); got != cpu {
			t.Fatalf("chose unavailable %s", got.Name())
		}
	}
}

func TestSelectorSizeClassesAreSeparate(t *testing.T) {
	spec := selSpec("add")
	cpu, cuda := selCPU(), selCUDA()
	s := gpu.NewSelector([]gpu.Backend{cpu, cuda}, gpu.SelectionPolicy{Adaptive: true, MinSamples: 2, ExploreEvery: 1000})
	for range 5 {
		s.Observe(spec, 1000, cpu, 50*time.Millisecond)
		s.Observe(spec, 1000, cuda, time.Millisecond)
	}
	if got := mustChoose(t, s, spec, gpu.F32, 1000, ""); got != cuda {
		t.Errorf("n=1000 chose %s after cuda measured faster", got.Name())
	}
	// Same size class (1000 and 1023 both have 10 bits): same statistics.
	if d, k := s.Estimate(spec, 1023, "cuda:0"); d != time.Millisecond || k != 5 {
		t.Errorf("Estimate(n=1023) = %v, %d; want n=1000's 1ms, 5", d, k)
	}
	big := 1 << 20
	for _, name := range []string{"cpu", "cuda:0"} {
		if d, k := s.Estimate(spec, big, name); d != 0 || k != 0 {
			t.Errorf("Estimate(n=1<<20, %s) = %v, %d; want nothing measured", name, d, k)
		}
	}
	// n=1<<20 is unmeasured: exploration starts from the first backend.
	if got := mustChoose(t, s, spec, gpu.F32, big, ""); got != cpu {
		t.Errorf("n=1<<20 first call chose %s, want cpu (exploring)", got.Name())
	}
	// Other kernels have their own statistics too.
	if d, k := s.Estimate(selSpec("mul"), 1000, "cuda:0"); d != 0 || k != 0 {
		t.Errorf("Estimate(mul) = %v, %d", d, k)
	}
}

// BUG (selection.go:182-197, adaptive): the candidate loop skips unavailable
// backends but not those that do not implement the kernel for the dtype
// (adaptive is not even given dt), so with a third backend lacking the
// kernel, adaptive selection returns it — first as the least-measured
// candidate, and forever after, since nothing can ever be measured on it.
func TestSelectorAdaptiveNeverChoosesUnsupportedBackend(t *testing.T) {
	spec := selSpec("add")
	cpu, cuda := selCPU(), selCUDA()
	noKernel := &selFake{name: "cuda:1", kind: gpu.KindCUDA, supports: func(*gpu.KernelSpec, gpu.DType) bool { return false }}
	s := gpu.NewSelector([]gpu.Backend{cpu, cuda, noKernel}, gpu.SelectionPolicy{Adaptive: true, MinSamples: 2, ExploreEvery: 4})
	for call := 1; call <= 20; call++ {
		b := mustChoose(t, s, spec, gpu.F32, 1000, "")
		if !b.Supports(spec, gpu.F32) {
			t.Fatalf("call %d: Choose returned %s, which does not implement %q for f32", call, b.Name(), spec.Name)
		}
		s.Observe(spec, 1000, b, time.Millisecond)
	}
}

func TestAcceleratorParseAndString(t *testing.T) {
	for _, a := range []gpu.Accelerator{gpu.Auto, gpu.PreferCPU, gpu.PreferCUDA} {
		got, err := gpu.ParseAccelerator(a.String())
		if err != nil || got != a {
			t.Errorf("ParseAccelerator(%q) = %v, %v; want %v", a.String(), got, err, a)
		}
	}
	for s, want := range map[string]gpu.Accelerator{"auto": gpu.Auto, "cpu": gpu.PreferCPU, "cuda": gpu.PreferCUDA} {
		if got, err := gpu.ParseAccelerator(s); err != nil || got != want || got.String() != s {
			t.Errorf("ParseAccelerator(%q) = %v, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "gpu", "tpu", "accelerator(7)"} {
		got, err := gpu.ParseAccelerator(s)
		if !errors.Is(err, gpu.ErrArgument) || got != gpu.Auto {
			t.Errorf("ParseAccelerator(%q) = %v, %v; want Auto, ErrArgument", s, got, err)
		}
	}
	if got := gpu.Accelerator(7).String(); got != "accelerator(7)" {
		t.Errorf("Accelerator(7).String() = %q", got)
	}
}

func TestNewSelectorDefaults(t *testing.T) {
	// MinSamples defaults to 3: three timings each before judging.
	spec := selSpec("add")
	cpu, cuda := selCPU(), selCUDA()
	s := gpu.NewSelector([]gpu.Backend{cpu, cuda}, gpu.SelectionPolicy{Adaptive: true})
	for range 2 {
		s.Observe(spec, 10, cpu, time.Millisecond)
		s.Observe(spec, 10, cuda, 10*time.Millisecond)
	}
	s.Observe(spec, 10, cpu, time.Millisecond)
	if got := mustChoose(t, s, spec, gpu.F32, 10, ""); got != cuda {
		t.Errorf("with cuda at 2 of 3 samples chose %s, want cuda (exploring)", got.Name())
	}
	s.Observe(spec, 10, cuda, 10*time.Millisecond)
	s.Observe(spec, 10, cpu, time.Millisecond) // cpu ahead in samples: cuda is the one to explore
	// ExploreEvery defaults to 64.
	for call := 1; call <= 128; call++ {
		got := mustChoose(t, s, spec, gpu.F32, 10, "")
		want := cpu
		if call%64 == 0 {
			want = cuda
		}
		if got != want {
			t.Fatalf("call %d chose %s, want %s", call, got.Name(), want.Name())
		}
	}
}

// BenchmarkSelectorObserve is the per-Execute cost of recording a timing,
// two backends and three kernels known.
func BenchmarkSelectorObserve(b *testing.B) {
	cpu, dev := selCPU(), selCUDA()
	s := gpu.NewSelector([]gpu.Backend{cpu, dev}, gpu.SelectionPolicy{Adaptive: true})
	specs := []*gpu.KernelSpec{selSpec("add"), selSpec("mul"), selSpec("scale")}
	for _, sp := range specs {
		s.Observe(sp, 1, cpu, time.Microsecond)
		s.Observe(sp, 1<<20, dev, time.Microsecond)
	}
	b.ReportAllocs()
	for b.Loop() {
		s.Observe(specs[0], 1, cpu, time.Microsecond)
	}
	if d, n := s.Estimate(specs[0], 1, "cpu"); d != time.Microsecond || n < 2 {
		b.Fatalf("estimate %v from %d samples", d, n)
	}
}
