package clayout

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ringactor/ringactor/messages"
)

type inner struct {
	X uint8
	Y float64
}

type mixed struct {
	A uint8
	B float64
	C [3]uint16
	D bool
	E inner
	F [2][3]inner
	_ [4]byte
	G int32
	H struct {
		P int16
		Q [5]float32
	}
	I uint64
	J int8
}

// abiPrelude is what ring_abi_gen.h defines for the generated text.
func abiPrelude(t *testing.T) string {
	b, err := os.ReadFile("../cuda/kernels/ring_abi_gen.h")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// compileCXX compiles src with g++ -fsyntax-only; it returns the output
// and whether it compiled.
func compileCXX(t *testing.T, src string) (string, bool) {
	t.Helper()
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not found: the C side of the layouts cannot be checked")
	}
	f := filepath.Join(t.TempDir(), "layout.cc")
	if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(gxx, "-std=c++17", "-fsyntax-only", f).CombinedOutput()
	return string(out), err == nil
}

// TestGeneratedLayoutCompiles declares a struct with every kind of field
// and implicit padding, and lets g++ check the generated size, alignment
// and offset assertions against its own layout.
func TestGeneratedLayoutCompiles(t *testing.T) {
	var g Generator
	s, err := g.Add("Mixed", reflect.TypeFor[mixed]())
	if err != nil {
		t.Fatal(err)
	}
	if s.Size != reflect.TypeFor[mixed]().Size() || s.Name != "Mixed" {
		t.Fatalf("struct %+v", s)
	}
	names := []string{}
	for _, st := range g.Structs() {
		names = append(names, st.Name)
	}
	if strings.Join(names, ",") != "inner,Mixed_H,Mixed" {
		t.Fatalf("declaration order %v: used structs must come first", names)
	}
	// Padding is explicit: the members cover the struct byte for byte.
	var at uintptr
	pads := 0
	for _, f := range s.Fields {
		if f.Offset != at {
			t.Fatalf("member %s at %d, previous ends at %d", f.Name, f.Offset, at)
		}
		at += f.Size
		if f.Pad {
			pads++
		}
	}
	if at != s.Size || pads < 3 {
		t.Fatalf("members end at %d of %d, %d pads", at, s.Size, pads)
	}
	src := abiPrelude(t) + g.Source() + "\nint main() { return 0; }\n"
	if out, ok := compileCXX(t, src); !ok {
		t.Fatalf("generated layout does not compile:\n%s\n%s", out, g.Source())
	}
	// A drifted figure fails the build: the assertions are real checks.
	bad := strings.Replace(g.Source(), "offsetof(Mixed, G) == ", "offsetof(Mixed, G) == 1+", 1)
	if out, ok := compileCXX(t, abiPrelude(t)+bad); ok || !strings.Contains(out, "Mixed.G: offset differs") {
		t.Fatalf("a wrong offset compiled (%v):\n%s", ok, out)
	}
}

type withSlice struct{ X []float32 }
type withString struct{ S string }
type withPtr struct{ P *int }
type empty struct{}
type zeroArray struct {
	A uint32
	Z [0]float32
}
type keyword struct {
	A     uint32
	class uint32 //lint:ignore U1000 the field exists to collide with a C++ keyword
}

func TestRejectedTypes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		t        reflect.Type
		notFixed bool
	}{
		{"Slice", reflect.TypeFor[withSlice](), true},
		{"Str", reflect.TypeFor[withString](), true},
		{"Ptr", reflect.TypeFor[withPtr](), true},
		{"Num", reflect.TypeFor[uint32](), true},
		{"Empty", reflect.TypeFor[empty](), false},
		{"ZeroArray", reflect.TypeFor[zeroArray](), false},
		{"Keyword", reflect.TypeFor[keyword](), false},
	} {
		var g Generator
		_, err := g.Add(tc.name, tc.t)
		var le *LayoutError
		if !errors.As(err, &le) || !errors.Is(err, ErrLayout) {
			t.Errorf("%s: %v, want a *LayoutError", tc.name, err)
			continue
		}
		if tc.notFixed != errors.Is(err, messages.ErrNotFixedLayout) {
			t.Errorf("%s: %v: errors.Is(ErrNotFixedLayout) = %v", tc.name, err, !tc.notFixed)
		}
	}
	var g Generator
	for _, name := range []string{"", "int", "_x", "rc_req", "9a", "a-b", "naïve"} {
		if _, err := g.Add(name, reflect.TypeFor[inner]()); !errors.Is(err, ErrLayout) {
			t.Errorf("name %q: %v", name, err)
		}
	}
	if _, err := g.Add("T", reflect.TypeFor[inner]()); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Add("T", reflect.TypeFor[withPtr]()); !errors.Is(err, ErrLayout) {
		t.Fatalf("a second type under a taken name: %v", err)
	}
	again, err := g.Add("Other", reflect.TypeFor[inner]())
	if err != nil || again.Name != "T" || len(g.Structs()) != 1 {
		t.Fatalf("adding a type again: %+v, %v", again, err)
	}
}
