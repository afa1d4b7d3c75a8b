package gpu

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"
)

// DType is the element type of a buffer: what a kernel reads and writes. Its
// values are stable (they are stored in ring slots and sent to devices).
type DType uint8

// The element types. DTypeInvalid is the zero value and never describes a
// buffer.
const (
	DTypeInvalid DType = iota // no dtype
	F32                       // float32
	F64                       // float64
	S32                       // int32
	S64                       // int64
	U32                       // uint32
	U8                        // uint8
)

// ErrDType is wrapped by every error about a dtype that is invalid or unknown.
var ErrDType = errors.New("gpu: invalid dtype")

// dtypeInfo describes one valid dtype; the index is the DType.
var dtypeInfo = [...]struct {
	name   string
	alias  string
	size   int
	float  bool
	signed bool
}{
	F32: {"f32", "float32", 4, true, true},
	F64: {"f64", "float64", 8, true, true},
	S32: {"s32", "int32", 4, false, true},
	S64: {"s64", "int64", 8, false, true},
	U32: {"u32", "uint32", 4, false, false},
	U8:  {"u8", "uint8", 1, false, false},
}

// Valid reports whether d is one of the element types above (not
// DTypeInvalid and not out of range).
func (d DType) Valid() bool { return d > DTypeInvalid && int(d) < len(dtypeInfo) }

// Size is the number of bytes of one element; 0 for an invalid dtype.
func (d DType) Size() int {
	if !d.Valid() {
		return 0
	}
	return dtypeInfo[d].size
}

// String is the short name: "f32", "f64", "s32", "s64", "u32" or "u8";
// "invalid" for DTypeInvalid and "DType(n)" for an out-of-range value.
func (d DType) String() string {
	switch {
	case d.Valid():
		return dtypeInfo[d].name
	case d == DTypeInvalid:
		return "invalid"
	}
	return fmt.Sprintf("DType(%d)", uint8(d))
}

// IsFloat reports whether d is a floating-point type.
func (d DType) IsFloat() bool { return d.Valid() && dtypeInfo[d].float }

// IsSigned reports whether d can hold negative values: the signed integers
// and the floating-point types.
func (d DType) IsSigned() bool { return d.Valid() && dtypeInfo[d].signed }

// DTypes returns every valid dtype, in DType order. The slice is the caller's.
func DTypes() []DType {
	out := make([]DType, 0, len(dtypeInfo)-1)
	for d := DType(1); d.Valid(); d++ {
		out = append(out, d)
	}
	return out
}

// ParseDType parses a dtype name, case-insensitively: a short name ("f32",
// "f64", "s32", "s64", "u32", "u8") or a Go type name ("float32", "float64",
// "int32", "int64", "uint32", "uint8"). An unknown name is an error that
// wraps ErrDType.
func ParseDType(s string) (DType, error) {
	l := strings.ToLower(strings.TrimSpace(s))
	for d := DType(1); d.Valid(); d++ {
		if l == dtypeInfo[d].name || l == dtypeInfo[d].alias {
			return d, nil
		}
	}
	return DTypeInvalid, fmt.Errorf("%w: %q", ErrDType, s)
}

// Number is the constraint of every element type a buffer may hold; each
// member corresponds to one valid DType.
type Number interface {
	~float32 | ~float64 | ~int32 | ~int64 | ~uint32 | ~uint8
}

// Float is the floating-point subset of Number.
type Float interface {
	~float32 | ~float64
}

// DTypeOf returns the dtype of T. It uses no reflection: the predeclared
// types are resolved by a type switch, and named types (type Celsius
// float32) by their size and arithmetic, so it is cheap enough for hot paths.
func DTypeOf[T Number]() DType {
	var zero T
	switch any(zero).(type) {
	case float32:
		return F32
	case float64:
		return F64
	case int32:
		return S32
	case int64:
		return S64
	case uint32:
		return U32
	case uint8:
		return U8
	}
	return dtypeOfNamed[T]()
}

// dtypeOfNamed classifies a named Number type by its size and arithmetic:
// floats keep a fraction, unsigned integers wrap below zero.
func dtypeOfNamed[T Number]() DType {
	var z T
	size := unsafe.Sizeof(z)
	one, two := T(1), T(2)
	switch {
	case one/two != 0: // a fraction survives: floating point
		if size == 4 {
			return F32
		}
		return F64
	case z-one > 0: // wrapped around: unsigned
		if size == 1 {
			return U8
		}
		return U32
	case size == 4:
		return S32
	}
	return S64
}
