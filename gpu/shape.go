package gpu

import (
	"errors"
	"math"
	"strconv"
)

// Shape is the dimensions of an array, outermost first: [rows cols] for a
// row-major matrix. A valid shape has at least one dimension and every
// dimension is positive; a scalar is [1].
type Shape []int

// ErrShape is matched (errors.Is) by every *ShapeError.
var ErrShape = errors.New("gpu: invalid shape")

// ShapeError reports a shape that is invalid or does not fit its data.
type ShapeError struct {
	Shape  Shape  // the offending shape (a copy)
	Reason string // what is wrong with it
}

// Error implements error.
func (e *ShapeError) Error() string {
	return "gpu: invalid shape " + e.Shape.String() + ": " + e.Reason
}

// Is matches ErrShape.
func (e *ShapeError) Is(target error) bool { return target == ErrShape }

// shapeErr builds a *ShapeError holding a copy of s, so that s itself never
// escapes through an error (callers can pass stack-allocated shapes).
func shapeErr(s Shape, reason string) *ShapeError {
	return &ShapeError{Shape: s.Clone(), Reason: reason}
}

// checkLen returns the product of the dimensions of s, or a reason why s is
// not a valid shape.
func (s Shape) checkLen() (int, string) {
	if len(s) == 0 {
		return 0, "no dimensions"
	}
	n := 1
	for i, d := range s {
		if d <= 0 {
			return 0, "dimension " + strconv.Itoa(i) + " is " + strconv.Itoa(d) + ", not positive"
		}
		if n > math.MaxInt/d {
			return 0, "number of elements overflows int"
		}
		n *= d
	}
	return n, ""
}

// Len is the number of elements: the product of the dimensions. It is 0 for
// a shape that is not valid (see Validate).
func (s Shape) Len() int {
	n, _ := s.checkLen()
	return n
}

// Validate returns a *ShapeError unless s has at least one dimension, every
// dimension is positive and the number of elements fits in an int.
func (s Shape) Validate() error {
	if _, reason := s.checkLen(); reason != "" {
		return shapeErr(s, reason)
	}
	return nil
}

// Equal reports whether s and o have the same dimensions.
func (s Shape) Equal(o Shape) bool {
	if len(s) != len(o) {
		return false
	}
	for i := range s {
		if s[i] != o[i] {
			return false
		}
	}
	return true
}

// String formats s as "[2 3]".
func (s Shape) String() string {
	b := make([]byte, 0, 2+4*len(s))
	b = append(b, '[')
	for i, d := range s {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, int64(d), 10)
	}
	return string(append(b, ']'))
}

// Clone returns a copy of s that shares no memory with it; nil for nil.
func (s Shape) Clone() Shape {
	if s == nil {
		return nil
	}
	return append(make(Shape, 0, len(s)), s...)
}
