// Package clayout writes the C declarations of fixed-layout Go structs
// (what messages.CheckFixed accepts: numbers, bools, arrays and structs of
// them), so device code and Go share one source of truth for a message's
// layout. Each C struct keeps the Go field names, spells out the padding Go
// inserts as explicit _padN byte arrays, and is followed by static
// assertions of its size, its alignment and every field's offset as Go lays
// them out. NVRTC 11.8 has no offsetof, so under NVRTC (__CUDACC_RTC__) only
// sizes and alignments are asserted; nvcc and g++ check the offsets too.
//
// The generated text uses RC_STATIC_ASSERT and RC_ASSERT_OFFSET, which
// gpu/cuda/kernels/ring_abi_gen.h defines for every compiler.
package clayout

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/ringactor/ringactor/messages"
)

// ErrLayout is matched (errors.Is) by every *LayoutError.
var ErrLayout = errors.New("clayout: type has no C layout")

// LayoutError says why a Go type cannot be declared in C. When the type is
// not fixed-layout it also matches messages.ErrNotFixedLayout.
type LayoutError struct {
	Type   reflect.Type
	Reason string
	Err    error // the cause, if any
}

// Error implements error.
func (e *LayoutError) Error() string {
	return fmt.Sprintf("clayout: %v: %s", e.Type, e.Reason)
}

// Is matches ErrLayout.
func (e *LayoutError) Is(target error) bool { return target == ErrLayout }

// Unwrap returns the cause.
func (e *LayoutError) Unwrap() error { return e.Err }

// Field is one member of a generated C struct.
type Field struct {
	Name   string  // the C member name: the Go field name, or _padN for padding
	CType  string  // element type, e.g. "float", "uint32_t", or a struct name
	Dims   []int   // array dimensions, outermost first
	Offset uintptr // as Go lays it out
	Size   uintptr
	Pad    bool // explicit padding (Go's implicit padding or a blank field)
}

// Struct is one generated C struct and the figures its assertions check.
type Struct struct {
	Name        string
	Go          reflect.Type
	Size, Align uintptr
	Fields      []Field
}

// Generator collects structs and writes their declarations, each struct
// after the ones it uses. The zero value is ready to use.
type Generator struct {
	byType  map[reflect.Type]string
	byName  map[string]reflect.Type
	structs []Struct
}

// cKeywords are C and C++ keywords a Go field name may collide with (Go
// field names are otherwise valid C identifiers).
var cKeywords = map[string]bool{
	"auto": true, "bool": true, "char": true, "class": true, "const": true, "delete": true, "double": true,
	"enum": true, "explicit": true, "extern": true, "float": true, "friend": true, "inline": true, "int": true,
	"long": true, "mutable": true, "namespace": true, "new": true, "operator": true, "private": true,
	"protected": true, "public": true, "register": true, "restrict": true, "short": true, "signed": true,
	"sizeof": true, "static": true, "template": true, "this": true, "throw": true, "typedef": true,
	"typename": true, "union": true, "unsigned": true, "virtual": true, "void": true, "volatile": true,
	"while": true, "do": true, "if": true, "else": true, "for": true, "switch": true, "case": true,
	"default": true, "break": true, "continue": true, "return": true, "goto": true, "struct": true,
	"try": true, "catch": true, "using": true, "asm": true, "alignas": true, "alignof": true,
	"constexpr": true, "decltype": true, "noexcept": true, "nullptr": true, "static_assert": true,
	"thread_local": true, "true": true, "false": true,
}

// ValidName reports whether s can name a C struct or member here: an
// identifier of ASCII letters, digits and underscores, not starting with a
// digit, not a C/C++ keyword, and not reserved (a leading underscore, or
// the rc_ prefix the framework uses).
func ValidName(s string) bool {
	if s == "" || cKeywords[s] || s[0] == '_' || strings.HasPrefix(strings.ToLower(s), "rc_") {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// Add declares t (a struct type) as the C struct name, with every struct
// type it contains before it (named by their Go names; an anonymous
// struct is named Outer_Field). Adding a type again returns the struct
// declared first. A type that is not fixed-layout, has size zero, or a
// name that clashes with another type's is a *LayoutError.
func (g *Generator) Add(name string, t reflect.Type) (Struct, error) {
	if g.byType == nil {
		g.byType, g.byName = map[reflect.Type]string{}, map[string]reflect.Type{}
	}
	if t == nil || t.Kind() != reflect.Struct {
		return Struct{}, &LayoutError{Type: t, Reason: "not a struct", Err: messages.ErrNotFixedLayout}
	}
	if err := messages.CheckFixed(t); err != nil {
		return Struct{}, &LayoutError{Type: t, Reason: "not a fixed-layout struct (numbers, bools, arrays and structs of them)", Err: err}
	}
	if _, err := g.add(name, t); err != nil {
		return Struct{}, err
	}
	for _, s := range g.structs {
		if s.Go == t {
			return s, nil
		}
	}
	panic("clayout: added struct not found")
}

func (g *Generator) add(name string, t reflect.Type) (string, error) {
	if n, ok := g.byType[t]; ok {
		return n, nil
	}
	if !ValidName(name) {
		return "", &LayoutError{Type: t, Reason: fmt.Sprintf("%q cannot name a C struct (an identifier, not a C/C++ keyword, no leading _ or rc_)", name)}
	}
	if other, ok := g.byName[name]; ok {
		return "", &LayoutError{Type: t, Reason: fmt.Sprintf("C name %s is taken by %v", name, other)}
	}
	if t.Size() == 0 {
		return "", &LayoutError{Type: t, Reason: "size 0 (C has no empty structs)"}
	}
	s := Struct{Name: name, Go: t, Size: t.Size(), Align: uintptr(t.Align())}
	var end uintptr
	pads := 0
	pad := func(n uintptr, at uintptr) {
		s.Fields = append(s.Fields, Field{Name: fmt.Sprintf("_pad%d", pads), CType: "uint8_t", Dims: []int{int(n)}, Offset: at, Size: n, Pad: true})
		pads++
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Type.Size() == 0 {
			return "", &LayoutError{Type: t, Reason: fmt.Sprintf("field %s has size 0", f.Name)}
		}
		if f.Offset > end {
			pad(f.Offset-end, end)
		}
		if f.Name == "_" {
			pad(f.Type.Size(), f.Offset)
			end = f.Offset + f.Type.Size()
			continue
		}
		if !ValidName(f.Name) {
			return "", &LayoutError{Type: t, Reason: fmt.Sprintf("field %s cannot be a C member name (a C/C++ keyword, or a leading _ or rc_)", f.Name)}
		}
		ctype, dims, err := g.cType(name+"_"+f.Name, f.Type)
		if err != nil {
			return "", err
		}
		s.Fields = append(s.Fields, Field{Name: f.Name, CType: ctype, Dims: dims, Offset: f.Offset, Size: f.Type.Size()})
		end = f.Offset + f.Type.Size()
	}
	if t.Size() > end {
		pad(t.Size()-end, end)
	}
	g.byType[t] = name
	g.byName[name] = t
	g.structs = append(g.structs, s)
	return name, nil
}

// cType returns the C element type of a field type and its array
// dimensions, declaring the struct types it uses.
func (g *Generator) cType(anon string, t reflect.Type) (string, []int, error) {
	switch t.Kind() {
	case reflect.Bool, reflect.Uint8:
		return "uint8_t", nil, nil
	case reflect.Uint16:
		return "uint16_t", nil, nil
	case reflect.Uint32:
		return "uint32_t", nil, nil
	case reflect.Uint64:
		return "uint64_t", nil, nil
	case reflect.Int8:
		return "int8_t", nil, nil
	case reflect.Int16:
		return "int16_t", nil, nil
	case reflect.Int32:
		return "int32_t", nil, nil
	case reflect.Int64:
		return "int64_t", nil, nil
	case reflect.Float32:
		return "float", nil, nil
	case reflect.Float64:
		return "double", nil, nil
	case reflect.Array:
		e, dims, err := g.cType(anon, t.Elem())
		return e, append([]int{t.Len()}, dims...), err
	case reflect.Struct:
		name := t.Name()
		if name == "" {
			name = anon
		}
		n, err := g.add(name, t)
		return n, nil, err
	}
	return "", nil, &LayoutError{Type: t, Reason: "no C form", Err: messages.ErrNotFixedLayout}
}

// Structs returns the declared structs in declaration order.
func (g *Generator) Structs() []Struct { return append([]Struct(nil), g.structs...) }

// Source returns the C declarations of every added struct, each followed
// by its assertions (size and alignment everywhere; offsets where the
// compiler has offsetof).
func (g *Generator) Source() string {
	var b strings.Builder
	for _, s := range g.structs {
		s.write(&b)
	}
	return b.String()
}

func (s Struct) write(b *strings.Builder) {
	pkg := s.Go.String()
	fmt.Fprintf(b, "\n// %s mirrors Go's %s (%d bytes, aligned to %d).\ntypedef struct %s {\n", s.Name, pkg, s.Size, s.Align, s.Name)
	for _, f := range s.Fields {
		fmt.Fprintf(b, "\t%s %s", f.CType, f.Name)
		for _, d := range f.Dims {
			fmt.Fprintf(b, "[%d]", d)
		}
		fmt.Fprintf(b, "; // offset %d\n", f.Offset)
	}
	fmt.Fprintf(b, "} %s;\n", s.Name)
	fmt.Fprintf(b, "RC_STATIC_ASSERT(sizeof(%s) == %d, \"sizeof %s differs from Go's %s\");\n", s.Name, s.Size, s.Name, pkg)
	fmt.Fprintf(b, "RC_STATIC_ASSERT(alignof(%s) == %d, \"alignof %s differs from Go's %s\");\n", s.Name, s.Align, s.Name, pkg)
	for _, f := range s.Fields {
		fmt.Fprintf(b, "RC_ASSERT_OFFSET(offsetof(%s, %s) == %d, \"%s.%s: offset differs from Go's %s\");\n",
			s.Name, f.Name, f.Offset, s.Name, f.Name, pkg)
	}
}
