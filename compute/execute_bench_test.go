package compute

import (
	"fmt"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cpu"
)

// Sizes of the Execute benchmarks: a 10M-element elementwise add against a
// copy of the same 40 MB, and a 1024×1024 float64 matmul against gonum.
const (
	execBench10M  = 10_000_000
	execBenchMatN = 1024
)

// benchBuffer wraps data in a buffer, failing the benchmark on error.
func benchBuffer[T gpu.Number](b *testing.B, data []T, shape ...int) *gpu.UnifiedBuffer {
	b.Helper()
	buf, err := gpu.NewBuffer(data, shape...)
	if err != nil {
		b.Fatal(err)
	}
	return buf
}

// tinyAddBench is a 1-element float32 add: the slices and their buffers.
func tinyAddBench(b *testing.B) (x, y, dst []float32, in []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer) {
	x, y, dst = []float32{1.5}, []float32{2.25}, []float32{0}
	return x, y, dst, []*gpu.UnifiedBuffer{benchBuffer(b, x), benchBuffer(b, y)}, benchBuffer(b, dst)
}

// BenchmarkExecuteAddTiny is Execute's fixed cost: "add" on 1-element
// float32 buffers into the caller's buffer (IntoBuffer).
func BenchmarkExecuteAddTiny(b *testing.B) {
	rt, ctx := newTestOrchestrator(b), testCtx(b)
	_, _, dst, in, out := tinyAddBench(b)
	into := IntoBuffer(out)
	b.ReportAllocs()
	cpu := startCPU()
	for b.Loop() {
		if _, err := rt.Execute(ctx, "add", in, nil, into); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report(b, b.N, "op")
	if dst[0] != 3.75 {
		b.Fatalf("1.5 + 2.25 = %v", dst[0])
	}
}

// BenchmarkExecuteAddTinyPooled is the realistic tiny call: the output
// comes from the runtime's pool and is freed right away.
func BenchmarkExecuteAddTinyPooled(b *testing.B) {
	rt, ctx := newTestOrchestrator(b), testCtx(b)
	_, _, _, in, _ := tinyAddBench(b)
	b.ReportAllocs()
	cpu := startCPU()
	for b.Loop() {
		out, err := rt.Execute(ctx, "add", in, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := out.Free(); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report(b, b.N, "item")
}

// BenchmarkDirectAddTiny is the baseline of the tiny Executes: the same
// CPU kernel called directly on the same slices.
func BenchmarkDirectAddTiny(b *testing.B) {
	ctx := testCtx(b)
	x, y, dst, _, _ := tinyAddBench(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := cpu.Add(ctx, dst, x, y); err != nil {
			b.Fatal(err)
		}
	}
}

// benchVec10M returns 10M float32 values, every page touched.
func benchVec10M(scale float32) []float32 {
	s := make([]float32, execBench10M)
	for i := range s {
		s[i] = float32(i%1000) * scale
	}
	return s
}

// BenchmarkExecuteAdd10M is Execute "add" on 10M float32 into the
// caller's buffer; compare with BenchmarkCopy10M.
func BenchmarkExecuteAdd10M(b *testing.B) {
	rt, ctx := newTestOrchestrator(b), testCtx(b)
	x, y, dst := benchVec10M(0.5), benchVec10M(0.25), make([]float32, execBench10M)
	in, into := []*gpu.UnifiedBuffer{benchBuffer(b, x), benchBuffer(b, y)}, IntoBuffer(benchBuffer(b, dst))
	b.SetBytes(4 * execBench10M)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rt.Execute(ctx, "add", in, nil, into); err != nil {
			b.Fatal(err)
		}
	}
	if i := execBench10M - 1; dst[i] != x[i]+y[i] {
		b.Fatalf("element %d = %v, want %v", i, dst[i], x[i]+y[i])
	}
}

// BenchmarkCopy10M is the memory-bandwidth floor of BenchmarkExecuteAdd10M:
// a Go copy of the same 40 MB.
func BenchmarkCopy10M(b *testing.B) {
	src, dst := benchVec10M(0.5), make([]float32, execBench10M)
	b.SetBytes(4 * execBench10M)
	b.ReportAllocs()
	for b.Loop() {
		copy(dst, src)
	}
}

// benchMatrices returns two n×n float64 matrices and an output.
func benchMatrices(n int) (x, y, dst []float64) {
	x, y, dst = make([]float64, n*n), make([]float64, n*n), make([]float64, n*n)
	for i := range x {
		x[i], y[i] = float64(i%17)*0.25, float64(i%13)*0.5
	}
	return x, y, dst
}

// BenchmarkExecuteMatMul1024 is Execute "matmul" of two 1024×1024 float64
// matrices into the caller's buffer; compare with BenchmarkGonumGemm1024.
func BenchmarkExecuteMatMul1024(b *testing.B) {
	const n = execBenchMatN
	rt, ctx := newTestOrchestrator(b), testCtx(b)
	x, y, dst := benchMatrices(n)
	in := []*gpu.UnifiedBuffer{benchBuffer(b, x, n, n), benchBuffer(b, y, n, n)}
	into := IntoBuffer(benchBuffer(b, dst, n, n))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rt.Execute(ctx, "matmul", in, nil, into); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGonumGemm1024 is BenchmarkExecuteMatMul1024's baseline: gonum's
// blas64.Gemm on the same matrices.
func BenchmarkGonumGemm1024(b *testing.B) {
	const n = execBenchMatN
	x, y, dst := benchMatrices(n)
	b.ReportAllocs()
	for b.Loop() {
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
			blas64.General{Rows: n, Cols: n, Stride: n, Data: x},
			blas64.General{Rows: n, Cols: n, Stride: n, Data: y},
			0, blas64.General{Rows: n, Cols: n, Stride: n, Data: dst})
	}
}

// BenchmarkExecuteAddTinyTelemetry is BenchmarkExecuteAddTiny with
// telemetry on, as `ringactor bench` runs it.
func BenchmarkExecuteAddTinyTelemetry(b *testing.B) {
	rt, ctx := newTestOrchestrator(b, telemetryIf(b, true)), testCtx(b)
	_, _, dst, in, out := tinyAddBench(b)
	into := IntoBuffer(out)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rt.Execute(ctx, "add", in, nil, into); err != nil {
			b.Fatal(err)
		}
	}
	if dst[0] != 3.75 {
		b.Fatalf("1.5 + 2.25 = %v", dst[0])
	}
}

// BenchmarkExecuteBatchTiny is ExecuteBatch of 16 and of 256 1-element
// adds, each output pooled and freed; it reports the time per item, to
// compare with BenchmarkExecuteAddTinyPooled's per call (the same work,
// one item per call). Both report cpu-ns/item too: the benchmark thread's
// CPU time per item, which a loaded machine's preemptions do not inflate.
func BenchmarkExecuteBatchTiny(b *testing.B) {
	for _, items := range []int{16, 256} {
		b.Run(fmt.Sprintf("items=%d", items), func(b *testing.B) {
			rt, ctx := newTestOrchestrator(b), testCtx(b)
			batch := make([][]*gpu.UnifiedBuffer, items)
			for i := range batch {
				_, _, _, in, _ := tinyAddBench(b)
				batch[i] = in
			}
			b.ReportAllocs()
			cpu := startCPU()
			for b.Loop() {
				outs, err := rt.ExecuteBatch(ctx, "add", batch)
				if err != nil {
					b.Fatal(err)
				}
				for _, o := range outs {
					if err := o.Free(); err != nil {
						b.Fatal(err)
					}
				}
			}
			cpu.report(b, b.N*items, "item")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*items), "ns/item")
		})
	}
}
