package cpu

import "context"

// elemGrain is the chunk size, in elements, of the elementwise kernels.
// Below 2*elemGrain they run inline on the caller's goroutine.
const elemGrain = 64 * 1024

func checkBinary(kernel string, dst, a, b int) error {
	if a != dst || b != dst {
		return argErr(kernel, "length mismatch: dst=%d a=%d b=%d", dst, a, b)
	}
	return nil
}

func checkUnary(kernel string, dst, a int) error {
	if a != dst {
		return argErr(kernel, "length mismatch: dst=%d a=%d", dst, a)
	}
	return nil
}

// Add sets dst[i] = a[i] + b[i]. dst may alias a or b (exactly, element for
// element). All three lengths must be equal, else it returns an error wrapping
// ErrKernelArgs and writes nothing. Integers wrap around (two's complement
// for signed types, modulo 2^bits for unsigned); floats follow IEEE 754, so a
// NaN operand gives NaN. Large inputs run in parallel chunks (ParallelFor);
// a cancelled ctx returns ctx.Err() and may leave dst partly written.
func Add[T Number](ctx context.Context, dst, a, b []T) error {
	if err := checkBinary("Add", len(dst), len(a), len(b)); err != nil {
		return err
	}
	if len(dst) < 2*elemGrain {
		if err := ctx.Err(); err != nil {
			return err
		}
		addK(dst, a, b)
		return nil
	}
	return ParallelFor(ctx, len(dst), elemGrain, func(lo, hi int) {
		addK(dst[lo:hi], a[lo:hi], b[lo:hi])
	})
}

func addK[T Number](d, x, y []T) {
	x = x[:len(d)]
	y = y[:len(d)]
	for i := range d {
		d[i] = x[i] + y[i]
	}
}

// Sub sets dst[i] = a[i] - b[i], with the same length, aliasing, overflow,
// NaN and cancellation rules as Add.
func Sub[T Number](ctx context.Context, dst, a, b []T) error {
	if err := checkBinary("Sub", len(dst), len(a), len(b)); err != nil {
		return err
	}
	if len(dst) < 2*elemGrain {
		if err := ctx.Err(); err != nil {
			return err
		}
		subK(dst, a, b)
		return nil
	}
	return ParallelFor(ctx, len(dst), elemGrain, func(lo, hi int) {
		subK(dst[lo:hi], a[lo:hi], b[lo:hi])
	})
}

func subK[T Number](d, x, y []T) {
	x = x[:len(d)]
	y = y[:len(d)]
	for i := range d {
		d[i] = x[i] - y[i]
	}
}

// Mul sets dst[i] = a[i] * b[i], with the same length, aliasing, overflow
// (integer products wrap), NaN and cancellation rules as Add.
func Mul[T Number](ctx context.Context, dst, a, b []T) error {
	if err := checkBinary("Mul", len(dst), len(a), len(b)); err != nil {
		return err
	}
	if len(dst) < 2*elemGrain {
		if err := ctx.Err(); err != nil {
			return err
		}
		mulK(dst, a, b)
		return nil
	}
	return ParallelFor(ctx, len(dst), elemGrain, func(lo, hi int) {
		mulK(dst[lo:hi], a[lo:hi], b[lo:hi])
	})
}

func mulK[T Number](d, x, y []T) {
	x = x[:len(d)]
	y = y[:len(d)]
	for i := range d {
		d[i] = x[i] * y[i]
	}
}

// Scale sets dst[i] = a[i] * s. dst may alias a; the lengths must be equal,
// else it returns an error wrapping ErrKernelArgs. Integer products wrap.
// Cancellation as in Add.
func Scale[T Number](ctx context.Context, dst, a []T, s T) error {
	if err := checkUnary("Scale", len(dst), len(a)); err != nil {
		return err
	}
	if len(dst) < 2*elemGrain {
		if err := ctx.Err(); err != nil {
			return err
		}
		scaleK(dst, a, s)
		return nil
	}
	return ParallelFor(ctx, len(dst), elemGrain, func(lo, hi int) {
		scaleK(dst[lo:hi], a[lo:hi], s)
	})
}

func scaleK[T Number](d, x []T, s T) {
	x = x[:len(d)]
	for i := range d {
		d[i] = x[i] * s
	}
}

// ReLU sets dst[i] = max(a[i], 0). A NaN stays NaN and -0 stays -0 (only
// values that compare below zero are replaced); for unsigned types it is the
// identity. dst may alias a; the lengths must be equal, else it returns an
// error wrapping ErrKernelArgs. Cancellation as in Add.
func ReLU[T Number](ctx context.Context, dst, a []T) error {
	if err := checkUnary("ReLU", len(dst), len(a)); err != nil {
		return err
	}
	if len(dst) < 2*elemGrain {
		if err := ctx.Err(); err != nil {
			return err
		}
		reluK(dst, a)
		return nil
	}
	return ParallelFor(ctx, len(dst), elemGrain, func(lo, hi int) {
		reluK(dst[lo:hi], a[lo:hi])
	})
}

func reluK[T Number](d, x []T) {
	x = x[:len(d)]
	for i := range d {
		v := x[i]
		if v < 0 {
			v = 0
		}
		d[i] = v
	}
}

// LeakyReLU sets dst[i] = a[i] if a[i] > 0, else slope*a[i]. A NaN input
// stays NaN. dst may alias a; the lengths must be equal, else it returns an
// error wrapping ErrKernelArgs. Cancellation as in Add.
func LeakyReLU[T Float](ctx context.Context, dst, a []T, slope T) error {
	if err := checkUnary("LeakyReLU", len(dst), len(a)); err != nil {
		return err
	}
	if len(dst) < 2*elemGrain {
		if err := ctx.Err(); err != nil {
			return err
		}
		leakyK(dst, a, slope)
		return nil
	}
	return ParallelFor(ctx, len(dst), elemGrain, func(lo, hi int) {
		leakyK(dst[lo:hi], a[lo:hi], slope)
	})
}

func leakyK[T Float](d, x []T, slope T) {
	x = x[:len(d)]
	for i := range d {
		if v := x[i]; v > 0 {
			d[i] = v
		} else {
			d[i] = slope * v
		}
	}
}
