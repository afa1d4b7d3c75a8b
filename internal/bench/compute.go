package bench

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cpu"
)

// Sizes and sample counts of the compute measurements where a Config leaves
// them zero. The JSON keys elementwise_10m_f32_ratio_vs_copy and
// matmul_1024_f64_ratio_vs_gonum are named after the default sizes.
const (
	DefaultExecSamples        = 20_000
	DefaultElementwiseLen     = 10_000_000
	DefaultElementwiseSamples = 5
	DefaultMatMulN            = 1024
	DefaultMatMulSamples      = 3
)

// allocSamples is how many pooled tiny Executes the allocation count
// averages over.
const allocSamples = 2_000

// computeConfig is cfg's compute part with the defaults filled in.
func (cfg Config) computeConfig() Config {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&cfg.ExecSamples, DefaultExecSamples)
	def(&cfg.ElementwiseLen, DefaultElementwiseLen)
	def(&cfg.ElementwiseSamples, DefaultElementwiseSamples)
	def(&cfg.MatMulN, DefaultMatMulN)
	def(&cfg.MatMulSamples, DefaultMatMulSamples)
	cfg.WarmupRequests = max(cfg.WarmupRequests, 0)
	return cfg
}

// Compute measures the compute path of rt against direct calls of the same
// Go code, in this process, and fills res's compute fields:
//
//   - the overhead of Execute: the median of ExecSamples sequential Executes
//     of "add" on 1-element float32 buffers into a caller's buffer
//     (IntoBuffer), minus the median of as many direct cpu.Add calls on the
//     same slices (never below 0);
//   - sequential tiny Executes per second when each output comes from the
//     pool and is freed right away (the median of ten batches), and their
//     heap allocations per call;
//   - Execute "add" on ElementwiseLen float32 elements (into a caller's
//     buffer) against a Go copy of as many bytes, medians of
//     ElementwiseSamples;
//   - Execute "matmul" on MatMulN×MatMulN float64 matrices (into a caller's
//     buffer) against gonum's blas64.Gemm on the same data, medians of
//     MatMulSamples.
//
// Every result is checked against the direct computation.
func Compute(ctx context.Context, rt *actors.Runtime, cfg Config, res *Result) error {
	cfg = cfg.computeConfig()
	exec, direct, err := ExecuteTinyRTT(ctx, rt, cfg.WarmupRequests, cfg.ExecSamples)
	if err != nil {
		return err
	}
	res.ExecuteAddTinyP50 = percentile(exec, 50)
	res.DirectAddTinyP50 = percentile(direct, 50)
	res.ExecuteOverhead = max(0, res.ExecuteAddTinyP50-res.DirectAddTinyP50)
	if res.ExecutionsPerS, err = ExecutionsPerSecond(ctx, rt, cfg.WarmupRequests, cfg.ExecSamples); err != nil {
		return err
	}
	if res.ExecuteAllocsPerCall, err = executeAllocs(ctx, rt, allocSamples); err != nil {
		return err
	}

	res.ElementwiseLen = cfg.ElementwiseLen
	add, cp, err := ElementwiseVsCopy(ctx, rt, cfg.ElementwiseLen, cfg.ElementwiseSamples)
	if err != nil {
		return err
	}
	res.ExecuteAdd10M, res.Copy10M = int64(add), int64(cp)
	if cp > 0 {
		res.ElementwiseRatioVsCopy = float64(add) / float64(cp)
	}

	res.MatMulN = cfg.MatMulN
	mm, gemm, err := MatMulVsGemm(ctx, rt, cfg.MatMulN, cfg.MatMulSamples)
	if err != nil {
		return err
	}
	res.ExecuteMatMul1024, res.GonumGemm1024 = int64(mm), int64(gemm)
	if gemm > 0 {
		res.MatMulRatioVsGonum = float64(mm) / float64(gemm)
	}
	return nil
}

// tinyAdd is a 1-element float32 add: its slices and the buffers wrapping
// them.
type tinyAdd struct {
	a, b, dst []float32
	in        []*gpu.UnifiedBuffer
	out       *gpu.UnifiedBuffer
}

func newTinyAdd() (*tinyAdd, error) {
	t := &tinyAdd{a: []float32{1.5}, b: []float32{2.25}, dst: []float32{0}}
	a, err := gpu.NewBuffer(t.a)
	if err != nil {
		return nil, err
	}
	b, err := gpu.NewBuffer(t.b)
	if err != nil {
		return nil, err
	}
	if t.out, err = gpu.NewBuffer(t.dst); err != nil {
		return nil, err
	}
	t.in = []*gpu.UnifiedBuffer{a, b}
	return t, nil
}

// ExecuteTinyRTT times n sequential Executes of "add" on 1-element float32
// buffers into a caller's buffer (IntoBuffer), then n direct cpu.Add calls
// on the same slices, each call timed on its own, after warmup untimed
// calls of each.
func ExecuteTinyRTT(ctx context.Context, rt *actors.Runtime, warmup, n int) (exec, direct []time.Duration, err error) {
	t, err := newTinyAdd()
	if err != nil {
		return nil, nil, err
	}
	into := actors.IntoBuffer(t.out)
	for range warmup {
		if _, err := rt.Execute(ctx, "add", t.in, nil, into); err != nil {
			return nil, nil, err
		}
	}
	exec = make([]time.Duration, n)
	for i := range exec {
		start := time.Now()
		_, err := rt.Execute(ctx, "add", t.in, nil, into)
		exec[i] = time.Since(start)
		if err != nil {
			return nil, nil, err
		}
	}
	if t.dst[0] != 3.75 {
		return nil, nil, fmt.Errorf("bench: Execute add 1.5 + 2.25 = %v", t.dst[0])
	}
	t.dst[0] = 0
	for range warmup {
		if err := cpu.Add(ctx, t.dst, t.a, t.b); err != nil {
			return nil, nil, err
		}
	}
	direct = make([]time.Duration, n)
	for i := range direct {
		start := time.Now()
		err := cpu.Add(ctx, t.dst, t.a, t.b)
		direct[i] = time.Since(start)
		if err != nil {
			return nil, nil, err
		}
	}
	if t.dst[0] != 3.75 {
		return nil, nil, fmt.Errorf("bench: cpu.Add 1.5 + 2.25 = %v", t.dst[0])
	}
	return exec, direct, nil
}

// execBatches is how many batches ExecutionsPerSecond splits its calls
// into; the median batch gives the rate, so that a burst of load from
// elsewhere on the machine does not.
const execBatches = 10

// ExecutionsPerSecond runs n sequential Executes of "add" on 1-element
// float32 buffers, each output from the runtime's pool and freed right
// away, after warmup untimed ones, and returns calls per second: the rate
// of the median of execBatches equal batches (of the whole run when n is
// below execBatches).
func ExecutionsPerSecond(ctx context.Context, rt *actors.Runtime, warmup, n int) (float64, error) {
	t, err := newTinyAdd()
	if err != nil {
		return 0, err
	}
	for range warmup {
		if err := pooledAdd(ctx, rt, t.in); err != nil {
			return 0, err
		}
	}
	batches := min(execBatches, max(n, 1))
	per := max(n/batches, 1)
	times := make([]time.Duration, batches)
	for i := range times {
		start := time.Now()
		for range per {
			if err := pooledAdd(ctx, rt, t.in); err != nil {
				return 0, err
			}
		}
		times[i] = time.Since(start)
	}
	return float64(per) / time.Duration(percentile(times, 50)).Seconds(), nil
}

// pooledAdd is one Execute of "add" into a pooled output, freed at once.
func pooledAdd(ctx context.Context, rt *actors.Runtime, in []*gpu.UnifiedBuffer) error {
	out, err := rt.Execute(ctx, "add", in, nil)
	if err != nil {
		return err
	}
	return out.Free()
}

// executeAllocs counts heap allocations per pooled tiny Execute.
func executeAllocs(ctx context.Context, rt *actors.Runtime, n int) (float64, error) {
	t, err := newTinyAdd()
	if err != nil {
		return 0, err
	}
	if err := pooledAdd(ctx, rt, t.in); err != nil {
		return 0, err
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n {
		if err := pooledAdd(ctx, rt, t.in); err != nil {
			return 0, err
		}
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(n), nil
}

// ElementwiseVsCopy times Execute "add" on n float32 elements into a
// caller's buffer against a Go copy of n float32 (the memory-bandwidth
// floor), alternating them, and returns the median of samples of each
// after one untimed run of each.
func ElementwiseVsCopy(ctx context.Context, rt *actors.Runtime, n, samples int) (add, cp time.Duration, err error) {
	a, b, dst := make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range a {
		a[i], b[i] = float32(i%1000)*0.5, float32(i%7)
	}
	ba, err := gpu.NewBuffer(a)
	if err != nil {
		return 0, 0, err
	}
	bb, err := gpu.NewBuffer(b)
	if err != nil {
		return 0, 0, err
	}
	out, err := gpu.NewBuffer(dst)
	if err != nil {
		return 0, 0, err
	}
	in, into := []*gpu.UnifiedBuffer{ba, bb}, actors.IntoBuffer(out)
	execAdd := func() error { _, err := rt.Execute(ctx, "add", in, nil, into); return err }
	copyAll := func() error { copy(dst, a); return nil }
	adds, copies, err := alternate(ctx, samples, execAdd, copyAll)
	if err != nil {
		return 0, 0, err
	}
	if err := execAdd(); err != nil {
		return 0, 0, err
	}
	for _, i := range []int{0, n / 2, n - 1} {
		if want := a[i] + b[i]; dst[i] != want {
			return 0, 0, fmt.Errorf("bench: Execute add element %d = %v, want %v", i, dst[i], want)
		}
	}
	return time.Duration(percentile(adds, 50)), time.Duration(percentile(copies, 50)), nil
}

// MatMulVsGemm times Execute "matmul" of two n×n float64 matrices into a
// caller's buffer against gonum's blas64.Gemm on the same matrices,
// alternating them, and returns the median of samples of each after one
// untimed run of each.
func MatMulVsGemm(ctx context.Context, rt *actors.Runtime, n, samples int) (mm, gemm time.Duration, err error) {
	a, b := make([]float64, n*n), make([]float64, n*n)
	got, want := make([]float64, n*n), make([]float64, n*n)
	for i := range a {
		a[i], b[i] = float64(i%17)*0.25, float64(i%13)*0.5
	}
	ba, err := gpu.NewBuffer(a, n, n)
	if err != nil {
		return 0, 0, err
	}
	bb, err := gpu.NewBuffer(b, n, n)
	if err != nil {
		return 0, 0, err
	}
	out, err := gpu.NewBuffer(got, n, n)
	if err != nil {
		return 0, 0, err
	}
	in, into := []*gpu.UnifiedBuffer{ba, bb}, actors.IntoBuffer(out)
	execMatMul := func() error { _, err := rt.Execute(ctx, "matmul", in, nil, into); return err }
	gonumGemm := func() error {
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
			blas64.General{Rows: n, Cols: n, Stride: n, Data: a},
			blas64.General{Rows: n, Cols: n, Stride: n, Data: b},
			0, blas64.General{Rows: n, Cols: n, Stride: n, Data: want})
		return nil
	}
	mms, gemms, err := alternate(ctx, samples, execMatMul, gonumGemm)
	if err != nil {
		return 0, 0, err
	}
	for _, i := range []int{0, n*n/2 + n/3, n*n - 1} {
		if d := math.Abs(got[i] - want[i]); d > 1e-9*math.Max(1, math.Abs(want[i])) {
			return 0, 0, fmt.Errorf("bench: Execute matmul element %d = %v, gonum %v", i, got[i], want[i])
		}
	}
	return time.Duration(percentile(mms, 50)), time.Duration(percentile(gemms, 50)), nil
}

// alternate runs f and g once each untimed, then samples times each,
// alternating, and returns their timings. A collection first keeps the
// garbage of earlier measurements out of these.
func alternate(ctx context.Context, samples int, f, g func() error) (fs, gs []time.Duration, err error) {
	if err := f(); err != nil {
		return nil, nil, err
	}
	if err := g(); err != nil {
		return nil, nil, err
	}
	runtime.GC()
	fs, gs = make([]time.Duration, samples), make([]time.Duration, samples)
	for i := range samples {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		start := time.Now()
		if err := f(); err != nil {
			return nil, nil, err
		}
		fs[i] = time.Since(start)
		start = time.Now()
		if err := g(); err != nil {
			return nil, nil, err
		}
		gs[i] = time.Since(start)
	}
	return fs, gs, nil
}
