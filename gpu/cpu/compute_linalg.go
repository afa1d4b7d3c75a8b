package cpu

import (
	"context"
	"math"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// Cache blocking of the integer matmul: a kb×nb block of B (128×256 int64 =
// 256 KiB at most) is reused across the rows of a chunk.
const (
	mmBlockK = 128
	mmBlockN = 256
)

// MatMul computes the row-major product C[m×n] = A[m×k]·B[k×n] into dst,
// overwriting it. It needs len(a) == m*k, len(b) == k*n, len(dst) == m*n and
// m, k, n ≥ 0; dst must not share memory with a or b (a and b may alias each
// other). Violations return an error wrapping ErrKernelArgs. k == 0 zeroes
// dst.
//
// float64 calls gonum's blas64.Gemm and float32 blas32.Gemm (both already
// parallel and cache-blocked; ctx is checked once before the call, the call
// itself cannot be interrupted). Integer types use a cache-blocked i-k-j loop,
// parallel over rows of C, with wrap-around arithmetic in T; a cancelled ctx
// stops it between row chunks and returns ctx.Err(), leaving dst partly
// written.
func MatMul[T Number](ctx context.Context, dst, a, b []T, m, k, n int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if m < 0 || k < 0 || n < 0 {
		return argErr("MatMul", "negative dimension m=%d k=%d n=%d", m, k, n)
	}
	mk, ok1 := mulDims(m, k)
	kn, ok2 := mulDims(k, n)
	mn, ok3 := mulDims(m, n)
	if !ok1 || !ok2 || !ok3 {
		return argErr("MatMul", "dimensions overflow m=%d k=%d n=%d", m, k, n)
	}
	if len(a) != mk || len(b) != kn || len(dst) != mn {
		return argErr("MatMul", "shape mismatch: m=%d k=%d n=%d needs len(a)=%d len(b)=%d len(dst)=%d, got %d, %d, %d",
			m, k, n, mk, kn, mn, len(a), len(b), len(dst))
	}
	if overlaps(dst, a) || overlaps(dst, b) {
		return argErr("MatMul", "dst aliases an input")
	}
	if mn == 0 {
		return nil
	}
	if k == 0 {
		clear(dst)
		return nil
	}
	kind, size := kindOf[T]()
	if kind == kindFloat {
		if size == 8 {
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
				blas64.General{Rows: m, Cols: k, Stride: k, Data: reinterpret[float64](a)},
				blas64.General{Rows: k, Cols: n, Stride: n, Data: reinterpret[float64](b)},
				0, blas64.General{Rows: m, Cols: n, Stride: n, Data: reinterpret[float64](dst)})
		} else {
			blas32.Gemm(blas.NoTrans, blas.NoTrans, 1,
				blas32.General{Rows: m, Cols: k, Stride: k, Data: reinterpret[float32](a)},
				blas32.General{Rows: k, Cols: n, Stride: n, Data: reinterpret[float32](b)},
				0, blas32.General{Rows: m, Cols: n, Stride: n, Data: reinterpret[float32](dst)})
		}
		return nil
	}
	// Rows per chunk: enough multiply-adds (~256K) to amortise scheduling.
	grain := max(1, (256*1024)/max(1, k*n))
	return ParallelFor(ctx, m, grain, func(lo, hi int) {
		matmulRows(dst, a, b, lo, hi, k, n)
	})
}

// mulDims returns x*y for non-negative x, y and whether it fits in an int.
func mulDims(x, y int) (int, bool) {
	if x != 0 && y > math.MaxInt/x {
		return 0, false
	}
	return x * y, true
}

// matmulRows computes rows [lo,hi) of C = A·B with an i-k-j loop blocked
// over k and j.
func matmulRows[T Number](c, a, b []T, lo, hi, k, n int) {
	clear(c[lo*n : hi*n])
	for jj := 0; jj < n; jj += mmBlockN {
		je := min(jj+mmBlockN, n)
		for pp := 0; pp < k; pp += mmBlockK {
			pe := min(pp+mmBlockK, k)
			for i := lo; i < hi; i++ {
				crow := c[i*n+jj : i*n+je]
				arow := a[i*k+pp : i*k+pe]
				for p, aip := range arow {
					if aip == 0 {
						continue
					}
					off := (pp+p)*n + jj
					brow := b[off : off+len(crow)]
					for j := range crow {
						crow[j] += aip * brow[j]
					}
				}
			}
		}
	}
}

// SpMV computes y = A·x for a sparse matrix A in CSR form: row i holds the
// entries values[rowPtr[i]:rowPtr[i+1]] in the columns
// colIdx[rowPtr[i]:rowPtr[i+1]]. A has len(y) rows and len(x) columns.
//
// It validates, before writing anything, that len(rowPtr) == len(y)+1,
// rowPtr[0] == 0, rowPtr is non-decreasing, rowPtr[len(y)] == len(values)
// == len(colIdx), every column index is in [0, len(x)), and y shares no
// memory with x or values; a violation returns an error wrapping
// ErrKernelArgs. Each row is accumulated in float64 (so float32 data gets a
// float64 dot product) and rounded to T once. Rows run in parallel; a
// cancelled ctx returns ctx.Err() and may leave y partly written.
func SpMV[T Float](ctx context.Context, y []T, values []T, colIdx, rowPtr []int32, x []T) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	rows := len(y)
	if len(rowPtr) != rows+1 {
		return argErr("SpMV", "len(rowPtr)=%d, want len(y)+1=%d", len(rowPtr), rows+1)
	}
	if rowPtr[0] != 0 {
		return argErr("SpMV", "rowPtr[0]=%d, want 0", rowPtr[0])
	}
	for i := 1; i < len(rowPtr); i++ {
		if rowPtr[i] < rowPtr[i-1] {
			return argErr("SpMV", "rowPtr decreases at %d (%d < %d)", i, rowPtr[i], rowPtr[i-1])
		}
	}
	nnz := int(rowPtr[rows])
	if len(values) != nnz || len(colIdx) != nnz {
		return argErr("SpMV", "rowPtr[last]=%d, len(values)=%d, len(colIdx)=%d must be equal", nnz, len(values), len(colIdx))
	}
	if overlaps(y, x) || overlaps(y, values) {
		return argErr("SpMV", "y aliases x or values")
	}
	if err := checkCols(ctx, colIdx, len(x)); err != nil {
		return err
	}
	if rows == 0 {
		return nil
	}
	// Rows per chunk: about 16K nonzeros (and at least 64 rows).
	grain := max(64, 16*1024*rows/max(1, nnz))
	return ParallelFor(ctx, rows, grain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			s, e := rowPtr[i], rowPtr[i+1]
			vals := values[s:e]
			cols := colIdx[s:e]
			cols = cols[:len(vals)]
			var acc float64
			for j, v := range vals {
				acc += float64(v) * float64(x[cols[j]])
			}
			y[i] = T(acc)
		}
	})
}

// checkCols verifies that every column index is in [0, ncols), in parallel
// for large inputs, and reports the first bad position it finds.
func checkCols(ctx context.Context, colIdx []int32, ncols int) error {
	var bad atomic.Int64 // 1 + position of a bad index, 0 if none
	check := func(lo, hi int) {
		for p, c := range colIdx[lo:hi] {
			if c < 0 || int(c) >= ncols {
				bad.CompareAndSwap(0, int64(lo+p)+1)
				return
			}
		}
	}
	if err := ParallelFor(ctx, len(colIdx), elemGrain, check); err != nil {
		return err
	}
	if p := bad.Load(); p != 0 {
		return argErr("SpMV", "colIdx[%d]=%d out of range [0,%d)", p-1, colIdx[p-1], ncols)
	}
	return nil
}
