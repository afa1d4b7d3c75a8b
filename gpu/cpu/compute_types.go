package cpu

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/ringactor/ringactor/gpu"
)

// Number is the element constraint of the CPU compute kernels: every dtype a
// kernel buffer may hold (gpu.Number).
type Number = gpu.Number

// Float is the floating-point subset of Number (gpu.Float).
type Float = gpu.Float

// ErrKernelArgs is wrapped by every argument-validation error of the compute
// kernels (length or shape mismatch, bad CSR structure, aliasing that the
// kernel does not allow, out-of-range parameters), so callers can match it
// with errors.Is. Context errors are returned as they are, not wrapped.
var ErrKernelArgs = errors.New("cpu: invalid kernel arguments")

// argErr formats an argument error that wraps ErrKernelArgs.
func argErr(kernel, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrKernelArgs, kernel, fmt.Sprintf(format, args...))
}

// numKind is the arithmetic family of a Number type.
type numKind uint8

const (
	kindSigned numKind = iota
	kindUnsigned
	kindFloat
)

// kindOf reports the arithmetic family and size in bytes of T. It works for
// named types too (~float32 etc.), where a type switch on the value would not.
func kindOf[T Number]() (numKind, uintptr) {
	var z T
	size := unsafe.Sizeof(z)
	one, two := T(1), T(2)
	if one/two != 0 {
		return kindFloat, size
	}
	z--
	if z > 0 {
		return kindUnsigned, size
	}
	return kindSigned, size
}

// intRange returns the smallest and largest values of an integer type T.
func intRange[T Number]() (lo, hi T) {
	k, size := kindOf[T]()
	bits := uint(size * 8)
	switch k {
	case kindUnsigned:
		var maxU uint64 = 1<<bits - 1
		if bits == 64 {
			maxU = ^uint64(0)
		}
		return 0, T(maxU)
	case kindSigned:
		maxS := int64(1)<<(bits-1) - 1
		minS := -maxS - 1
		return T(minS), T(maxS)
	}
	return 0, 0
}

// overlaps reports whether two slices share any memory.
func overlaps[T, U any](x []T, y []U) bool {
	if len(x) == 0 || len(y) == 0 {
		return false
	}
	var zt T
	var zu U
	xs := uintptr(unsafe.Pointer(unsafe.SliceData(x)))
	xe := xs + uintptr(len(x))*unsafe.Sizeof(zt)
	ys := uintptr(unsafe.Pointer(unsafe.SliceData(y)))
	ye := ys + uintptr(len(y))*unsafe.Sizeof(zu)
	return xs < ye && ys < xe
}

// reinterpret views s as a slice of U with the same length. The caller must
// have checked that T's underlying type is U.
func reinterpret[U, T any](s []T) []U {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*U)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}
