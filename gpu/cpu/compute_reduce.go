package cpu

import "context"

// redBlock is the block size, in elements, of the reductions. The blocks are
// fixed (independent of GOMAXPROCS and scheduling) and their partial results
// are combined in order, so a reduction's result is deterministic.
const redBlock = 64 * 1024

// blockPartials reduces each redBlock-sized block of a with f, in parallel,
// and returns the per-block results in order. len(a) must be > redBlock.
func blockPartials[T Number, R any](ctx context.Context, a []T, f func([]T) R) ([]R, error) {
	nb := (len(a) + redBlock - 1) / redBlock
	parts := make([]R, nb)
	err := ParallelFor(ctx, nb, 1, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			parts[i] = f(a[i*redBlock : min((i+1)*redBlock, len(a))])
		}
	})
	return parts, err
}

// Sum returns the sum of a; an empty slice sums to 0.
//
// Integer types add with wrap-around in T (two's complement for signed
// types), exactly as a sequential loop in T would. Floating-point types
// accumulate in float64 by pairwise summation over fixed blocks (so float32
// sums are far more accurate than a float32 loop, e.g. 1e7 ones give exactly
// 1e7) and the float64 result is rounded to T once. NaN propagates, and +Inf
// plus -Inf gives NaN. The result does not depend on GOMAXPROCS.
// A cancelled ctx returns ctx.Err().
func Sum[T Number](ctx context.Context, a []T) (T, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if k, _ := kindOf[T](); k == kindFloat {
		s, err := sumFloat64(ctx, a)
		return T(s), err
	}
	if len(a) <= redBlock {
		return sumWrap(a), nil
	}
	parts, err := blockPartials(ctx, a, sumWrap[T])
	if err != nil {
		return 0, err
	}
	return sumWrap(parts), nil
}

// Mean returns the arithmetic mean of a as float64. Every element is
// widened to float64 and summed pairwise in float64 (exact for integer data
// while partial sums stay below 2^53), then divided by len(a). NaN
// propagates. An empty slice returns an error wrapping ErrKernelArgs; a
// cancelled ctx returns ctx.Err().
func Mean[T Number](ctx context.Context, a []T) (float64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if len(a) == 0 {
		return 0, argErr("Mean", "empty input")
	}
	s, err := sumFloat64(ctx, a)
	if err != nil {
		return 0, err
	}
	return s / float64(len(a)), nil
}

// Min returns the smallest element of a. If any element is NaN the result
// is NaN (like numpy.min). An empty slice returns an error wrapping
// ErrKernelArgs; a cancelled ctx returns ctx.Err().
func Min[T Number](ctx context.Context, a []T) (T, error) {
	return reduceBlocks(ctx, "Min", a, minK[T])
}

// Max returns the largest element of a, with the same NaN, empty-input and
// cancellation rules as Min.
func Max[T Number](ctx context.Context, a []T) (T, error) {
	return reduceBlocks(ctx, "Max", a, maxK[T])
}

// reduceBlocks applies an associative, order-insensitive reduction k to
// fixed blocks of a in parallel and then to the block results, so the
// result does not depend on GOMAXPROCS. Empty input is an argument error.
func reduceBlocks[T Number](ctx context.Context, name string, a []T, k func([]T) T) (T, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if len(a) == 0 {
		return 0, argErr(name, "empty input")
	}
	if len(a) <= redBlock {
		return k(a), nil
	}
	parts, err := blockPartials(ctx, a, k)
	if err != nil {
		return 0, err
	}
	return k(parts), nil
}

// sumFloat64 sums a in float64, pairwise, over fixed blocks in parallel.
func sumFloat64[T Number](ctx context.Context, a []T) (float64, error) {
	if len(a) <= redBlock {
		return pairwise(a), nil
	}
	parts, err := blockPartials(ctx, a, pairwise[T])
	if err != nil {
		return 0, err
	}
	return pairwise(parts), nil
}

// pairwise returns the float64 sum of a by pairwise (cascade) summation with
// an 8-way unrolled base case, as numpy does: the rounding error grows with
// log(len) instead of len.
func pairwise[T Number](a []T) float64 {
	const base = 128
	if len(a) > base {
		half := len(a) / 2 &^ 7
		return pairwise(a[:half]) + pairwise(a[half:])
	}
	var s0, s1, s2, s3, s4, s5, s6, s7 float64
	i := 0
	for ; i+8 <= len(a); i += 8 {
		b := a[i : i+8 : i+8]
		s0 += float64(b[0])
		s1 += float64(b[1])
		s2 += float64(b[2])
		s3 += float64(b[3])
		s4 += float64(b[4])
		s5 += float64(b[5])
		s6 += float64(b[6])
		s7 += float64(b[7])
	}
	s := ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
	for ; i < len(a); i++ {
		s += float64(a[i])
	}
	return s
}

// sumWrap sums a in T (wrapping for integers).
func sumWrap[T Number](a []T) T {
	var s0, s1, s2, s3 T
	i := 0
	for ; i+4 <= len(a); i += 4 {
		b := a[i : i+4 : i+4]
		s0 += b[0]
		s1 += b[1]
		s2 += b[2]
		s3 += b[3]
	}
	s := (s0 + s1) + (s2 + s3)
	for ; i < len(a); i++ {
		s += a[i]
	}
	return s
}

// minK returns the minimum of a non-empty a, or its first NaN if it has
// one. Four accumulators break the dependency chain; the comparisons are
// plain branches (a NaN never wins one, so it is tracked by a flag), which
// measured about twice as fast as the builtin min on floats.
func minK[T Number](a []T) T {
	m0, m1, m2, m3 := a[0], a[0], a[0], a[0]
	nan := false
	i := 0
	for ; i+4 <= len(a); i += 4 {
		b := a[i : i+4 : i+4]
		x0, x1, x2, x3 := b[0], b[1], b[2], b[3]
		if x0 < m0 {
			m0 = x0
		}
		if x1 < m1 {
			m1 = x1
		}
		if x2 < m2 {
			m2 = x2
		}
		if x3 < m3 {
			m3 = x3
		}
		if x0 != x0 || x1 != x1 || x2 != x2 || x3 != x3 { // NaN; never for integers
			nan = true
		}
	}
	for ; i < len(a); i++ {
		x := a[i]
		if x < m0 {
			m0 = x
		}
		if x != x {
			nan = true
		}
	}
	if nan || m0 != m0 { // m0 = a[0] may itself be NaN
		return firstNaN(a)
	}
	return min(min(m0, m1), min(m2, m3))
}

// maxK returns the maximum of a non-empty a, or its first NaN; see minK.
func maxK[T Number](a []T) T {
	m0, m1, m2, m3 := a[0], a[0], a[0], a[0]
	nan := false
	i := 0
	for ; i+4 <= len(a); i += 4 {
		b := a[i : i+4 : i+4]
		x0, x1, x2, x3 := b[0], b[1], b[2], b[3]
		if x0 > m0 {
			m0 = x0
		}
		if x1 > m1 {
			m1 = x1
		}
		if x2 > m2 {
			m2 = x2
		}
		if x3 > m3 {
			m3 = x3
		}
		if x0 != x0 || x1 != x1 || x2 != x2 || x3 != x3 {
			nan = true
		}
	}
	for ; i < len(a); i++ {
		x := a[i]
		if x > m0 {
			m0 = x
		}
		if x != x {
			nan = true
		}
	}
	if nan || m0 != m0 {
		return firstNaN(a)
	}
	return max(max(m0, m1), max(m2, m3))
}

// firstNaN returns the first NaN in a, which the caller knows exists.
func firstNaN[T Number](a []T) T {
	for _, x := range a {
		if x != x {
			return x
		}
	}
	return a[0]
}
