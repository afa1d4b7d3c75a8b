package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// root is the module root, relative to this package.
const root = "../.."

// needGo skips a test that runs the go command with cgo off or without
// the go command: the API on record is that of a cgo build.
func needGo(t *testing.T) {
	t.Helper()
	out, err := exec.Command("go", "env", "CGO_ENABLED").Output()
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	if strings.TrimSpace(string(out)) != "1" {
		t.Skip("CGO_ENABLED is not 1: the API on record is a cgo build's (gpu/cuda, gpu/nvml)")
	}
}

// TestFormat pins the line of each kind of exported name on a fixture
// package: parameter names left out, unexported names left out, methods
// with their receivers, struct fields and embedded types, interface
// methods, constants with their values.
func TestFormat(t *testing.T) {
	needGo(t)
	got, err := dump(".", func(p listed, _ string) bool { return strings.HasSuffix(p.ImportPath, "/testdata/fixture") }, "./testdata/fixture")
	if err != nil {
		t.Fatal(err)
	}
	const p = "pkg github.com/ringactor/ringactor/internal/apidump/testdata/fixture, "
	want := []string{
		"const Half = 0.5",
		"const ModeA Mode = 1",
		`const Name = "fixture"`,
		"const Size = 4096",
		"func Open(context.Context, string, ...func(*Box[int])) (*Box[int], error)",
		"func Sum[N Number](...N) N",
		"method (*Box[T]) Get() T",
		"method (Box[T]) Len() int",
		"method (Handle) Same() Handle",
		"type Alias = Box[string]",
		"type Box struct, Value T",
		"type Box struct, embedded io.Reader",
		"type Box[T any] struct",
		"type Ch chan (<-chan struct{ X int })",
		"type Doer interface",
		"type Doer interface, Close() error",
		"type Doer interface, Do(context.Context) error",
		"type Doer interface, unexported methods",
		"type Fn func(int, int) bool",
		"type Handle struct",
		"type Handle struct, ID int",
		"type Mode int",
		"type Number interface",
		"type Number interface, ~int | ~float64",
		"type Source interface",
		"type Source interface, Next() Handle",
		"var Default Mode",
	}
	for i := range want {
		want[i] = p + want[i]
	}
	slices.Sort(want)
	if added, removed := Diff(want, got); len(added)+len(removed) > 0 {
		t.Fatalf("unexpected lines:\n%s\nmissing lines:\n%s", strings.Join(added, "\n"), strings.Join(removed, "\n"))
	}
}

// TestPublic: main packages, internal/ and testdata/ trees, examples/ and
// other modules' packages are not API.
func TestPublic(t *testing.T) {
	const m = "github.com/ringactor/ringactor"
	mod := &struct{ Path string }{m}
	for _, c := range []struct {
		p    listed
		want bool
	}{
		{listed{ImportPath: m + "/actors", Name: "actors", Module: mod}, true},
		{listed{ImportPath: m + "/gpu/cuda/hostsim", Name: "hostsim", Module: mod}, true},
		{listed{ImportPath: m + "/cmd/ringactor", Name: "main", Module: mod}, false},
		{listed{ImportPath: m + "/internal/demo", Name: "demo", Module: mod}, false},
		{listed{ImportPath: m + "/gpu/ring/internal/abigen", Name: "abigen", Module: mod}, false},
		{listed{ImportPath: m + "/examples/pagerank/pagerank", Name: "pagerank", Module: mod}, false},
		{listed{ImportPath: m + "/examplesx", Name: "examplesx", Module: mod}, true},
		{listed{ImportPath: "context", Name: "context", Standard: true}, false},
		{listed{ImportPath: "github.com/other/x", Name: "x", Module: &struct{ Path string }{"github.com/other/x"}}, false},
		{listed{ImportPath: m + "/messages", Name: "messages", Module: mod, DepOnly: true}, false},
	} {
		if got := public(c.p, m); got != c.want {
			t.Errorf("public(%s) = %v, want %v", c.p.ImportPath, got, c.want)
		}
	}
}

// TestDiff checks the added/removed split of two sorted line lists.
func TestDiff(t *testing.T) {
	added, removed := Diff([]string{"a", "c", "d"}, []string{"b", "c", "e"})
	if !slices.Equal(added, []string{"b", "e"}) || !slices.Equal(removed, []string{"a", "d"}) {
		t.Fatalf("Diff = +%v -%v", added, removed)
	}
	if a, r := Diff(nil, nil); a != nil || r != nil {
		t.Fatalf("Diff(nil, nil) = %v, %v", a, r)
	}
}

// TestParse drops comments and blank lines.
func TestParse(t *testing.T) {
	got := Parse(Format([]string{"pkg a, func F()", "pkg a, var V int"}) + "\n\n")
	if !slices.Equal(got, []string{"pkg a, func F()", "pkg a, var V int"}) {
		t.Fatalf("Parse(Format(...)) = %q", got)
	}
}
