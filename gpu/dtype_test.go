package gpu

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// Named element types: DTypeOf must see through them.
type (
	celsius  float32
	meters   float64
	count32  int32
	count64  int64
	flags32  uint32
	pixel8   uint8
	alsoBool = uint8
)

func TestDTypeProperties(t *testing.T) {
	cases := []struct {
		d              DType
		name, alias    string
		size           int
		float, signed  bool
		dtypeOf, named DType
	}{
		{F32, "f32", "float32", 4, true, true, DTypeOf[float32](), DTypeOf[celsius]()},
		{F64, "f64", "float64", 8, true, true, DTypeOf[float64](), DTypeOf[meters]()},
		{S32, "s32", "int32", 4, false, true, DTypeOf[int32](), DTypeOf[count32]()},
		{S64, "s64", "int64", 8, false, true, DTypeOf[int64](), DTypeOf[count64]()},
		{U32, "u32", "uint32", 4, false, false, DTypeOf[uint32](), DTypeOf[flags32]()},
		{U8, "u8", "uint8", 1, false, false, DTypeOf[uint8](), DTypeOf[pixel8]()},
	}
	for _, c := range cases {
		if !c.d.Valid() || c.d.Size() != c.size || c.d.String() != c.name ||
			c.d.IsFloat() != c.float || c.d.IsSigned() != c.signed {
			t.Errorf("%v: valid %v size %d float %v signed %v", c.d, c.d.Valid(), c.d.Size(), c.d.IsFloat(), c.d.IsSigned())
		}
		if c.dtypeOf != c.d || c.named != c.d {
			t.Errorf("%v: DTypeOf gives %v, named type %v", c.d, c.dtypeOf, c.named)
		}
		for _, s := range []string{c.name, c.alias, " " + c.alias + " ", strings.ToUpper(c.name), strings.ToUpper(c.alias)} {
			if got, err := ParseDType(s); err != nil || got != c.d {
				t.Errorf("ParseDType(%q) = %v, %v", s, got, err)
			}
		}
	}
	if DTypeOf[alsoBool]() != U8 {
		t.Error("alias of uint8")
	}
	if want := []DType{F32, F64, S32, S64, U32, U8}; !slices.Equal(DTypes(), want) {
		t.Errorf("DTypes() = %v", DTypes())
	}
	DTypes()[0] = DTypeInvalid // the caller's copy
	if DTypes()[0] != F32 {
		t.Error("DTypes shares its slice")
	}
}

func TestDTypeInvalid(t *testing.T) {
	for _, d := range []DType{DTypeInvalid, U8 + 1, 255} {
		if d.Valid() || d.Size() != 0 || d.IsFloat() || d.IsSigned() {
			t.Errorf("%v looks valid", d)
		}
	}
	if DTypeInvalid.String() != "invalid" || DType(200).String() != "DType(200)" {
		t.Errorf("names %q %q", DTypeInvalid.String(), DType(200).String())
	}
	for _, s := range []string{"", "invalid", "f16", "int", "float", "DType(1)"} {
		d, err := ParseDType(s)
		if d != DTypeInvalid || !errors.Is(err, ErrDType) {
			t.Errorf("ParseDType(%q) = %v, %v", s, d, err)
		}
	}
}

func TestShape(t *testing.T) {
	s := Shape{2, 3, 4}
	if s.Len() != 24 || s.Validate() != nil || s.String() != "[2 3 4]" {
		t.Errorf("%v: len %d, %v", s, s.Len(), s.Validate())
	}
	c := s.Clone()
	c[0] = 9
	if s[0] != 2 || !s.Equal(Shape{2, 3, 4}) || s.Equal(c) || s.Equal(Shape{2, 3}) {
		t.Error("Clone/Equal")
	}
	if Shape(nil).Clone() != nil || (Shape{}).String() != "[]" || (Shape{1}).Len() != 1 {
		t.Error("edge cases")
	}
	bad := []struct {
		s      Shape
		reason string
	}{
		{nil, "no dimensions"},
		{Shape{}, "no dimensions"},
		{Shape{2, 0}, "dimension 1 is 0, not positive"},
		{Shape{-1}, "dimension 0 is -1, not positive"},
		{Shape{math.MaxInt, 2}, "number of elements overflows int"},
		{Shape{1 << 32, 1 << 32}, "number of elements overflows int"},
	}
	for _, b := range bad {
		err := b.s.Validate()
		var se *ShapeError
		if !errors.Is(err, ErrShape) || !errors.As(err, &se) || se.Reason != b.reason || !se.Shape.Equal(b.s) {
			t.Errorf("%v: %v", b.s, err)
			continue
		}
		if b.s.Len() != 0 {
			t.Errorf("%v: Len %d of an invalid shape", b.s, b.s.Len())
		}
		if len(b.s) > 0 {
			b.s[0] = 77 // the error holds a copy
			if se.Shape[0] == 77 {
				t.Errorf("%v: error aliases the shape", b.s)
			}
		}
	}
	if got := (&ShapeError{Shape: Shape{2, -3}, Reason: "x"}).Error(); got != "gpu: invalid shape [2 -3]: x" {
		t.Errorf("Error() = %q", got)
	}
	if (Shape{math.MaxInt}).Validate() != nil {
		t.Error("MaxInt elements is a valid shape")
	}
}

func BenchmarkDTypeOf(b *testing.B) {
	var d DType
	for b.Loop() {
		d ^= DTypeOf[float32]() ^ DTypeOf[celsius]()
	}
	_ = d
}
