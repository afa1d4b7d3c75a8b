package cpu

import (
	"context"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

const bench10M = 10_000_000

func benchF32(n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(i%1000) * 0.5
	}
	return s
}

// BenchmarkCopy10M is the memory-bandwidth baseline for BenchmarkAdd10M:
// a plain copy of the same 40 MB.
func BenchmarkCopy10M(b *testing.B) {
	src, dst := benchF32(bench10M), make([]float32, bench10M)
	b.SetBytes(4 * bench10M)
	b.ReportAllocs()
	for b.Loop() {
		copy(dst, src)
	}
}

func BenchmarkAdd10M(b *testing.B) {
	x, y, dst := benchF32(bench10M), benchF32(bench10M), make([]float32, bench10M)
	ctx := context.Background()
	b.SetBytes(4 * bench10M)
	b.ReportAllocs()
	for b.Loop() {
		if err := Add(ctx, dst, x, y); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAddSmall4K(b *testing.B) {
	x, y, dst := benchF32(4096), benchF32(4096), make([]float32, 4096)
	ctx := context.Background()
	b.SetBytes(4 * 4096)
	b.ReportAllocs()
	for b.Loop() {
		if err := Add(ctx, dst, x, y); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSumF32_10M(b *testing.B) {
	x := benchF32(bench10M)
	ctx := context.Background()
	b.SetBytes(4 * bench10M)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Sum(ctx, x); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMaxF32_10M(b *testing.B) {
	x := benchF32(bench10M)
	ctx := context.Background()
	b.SetBytes(4 * bench10M)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Max(ctx, x); err != nil {
			b.Fatal(err)
		}
	}
}

func benchMat(n int) []float64 {
	s := make([]float64, n*n)
	for i := range s {
		s[i] = float64(i%17) * 0.25
	}
	return s
}

func BenchmarkMatMulF64_1024(b *testing.B) {
	const n = 1024
	x, y, c := benchMat(n), benchMat(n), make([]float64, n*n)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := MatMul(ctx, c, x, y, n, n, n); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGonumGemm1024 is the baseline for BenchmarkMatMulF64_1024.
func BenchmarkGonumGemm1024(b *testing.B) {
	const n = 1024
	x, y, c := benchMat(n), benchMat(n), make([]float64, n*n)
	b.ReportAllocs()
	for b.Loop() {
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
			blas64.General{Rows: n, Cols: n, Stride: n, Data: x},
			blas64.General{Rows: n, Cols: n, Stride: n, Data: y},
			0, blas64.General{Rows: n, Cols: n, Stride: n, Data: c})
	}
}

func BenchmarkMatMulI32_512(b *testing.B) {
	const n = 512
	x, y, c := make([]int32, n*n), make([]int32, n*n), make([]int32, n*n)
	for i := range x {
		x[i], y[i] = int32(i%13), int32(i%7)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := MatMul(ctx, c, x, y, n, n, n); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGaussianBlurU8_1080p(b *testing.B) {
	const h, w, c = 1080, 1920, 3
	src, dst := make([]uint8, h*w*c), make([]uint8, h*w*c)
	for i := range src {
		src[i] = uint8(i * 7)
	}
	ctx := context.Background()
	b.SetBytes(h * w * c)
	b.ReportAllocs()
	for b.Loop() {
		if err := GaussianBlur(ctx, dst, src, h, w, c, 3, 1.5); err != nil {
			b.Fatal(err)
		}
	}
}
