package pagerank

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	g := mustParse(t, "# a comment\n\n a\tb  # trailing comment\r\nb c\r\n\t\n c a\nlast  a") // no final newline
	if want := []string{"a", "b", "c", "last"}; !slices.Equal(g.Names, want) {
		t.Fatalf("names %q, want %q", g.Names, want)
	}
	if g.NumEdges() != 4 {
		t.Fatalf("%d edges, want 4", g.NumEdges())
	}
	for name, want := range map[string][]string{"a": {"c", "last"}, "b": {"a"}, "c": {"b"}, "last": nil} {
		var got []string
		for _, u := range g.InNeighbors(byName(g)[name]) {
			got = append(got, g.Names[u])
		}
		if !slices.Equal(got, want) {
			t.Errorf("in-neighbours of %s: %q, want %q", name, got, want)
		}
	}
	// Ids are any strings without whitespace; numbers and names mix, and
	// "007" is not "7".
	g = mustParse(t, "007 7\n7 é-ü\n\"x\" 0\n0 007\n")
	if want := []string{"007", "7", "é-ü", `"x"`, "0"}; !slices.Equal(g.Names, want) {
		t.Fatalf("names %q, want %q", g.Names, want)
	}
}

func TestParseEmpty(t *testing.T) {
	for _, s := range []string{"", "\n\n", "# only a comment\n   # and another\n"} {
		g := mustParse(t, s)
		if g.NumNodes() != 0 || g.NumEdges() != 0 {
			t.Errorf("%q: %d nodes %d edges", s, g.NumNodes(), g.NumEdges())
		}
	}
}

// TestParseErrors checks that malformed lines are reported by number
// (comments and blank lines count as lines) and that no graph is built.
func TestParseErrors(t *testing.T) {
	in := "# header\na b\nlonely\n\nc d e\na c # fine\n  x  # one field and a comment\na\tb\n"
	g, err := ParseString(in)
	if g != nil {
		t.Errorf("a graph came back with the error")
	}
	pe, ok := errors.AsType[*ParseError](err)
	if !ok {
		t.Fatalf("error %v (%T), want *ParseError", err, err)
	}
	if want := []int{3, 5, 7}; !slices.Equal(pe.LineNumbers(), want) || pe.Count != 3 {
		t.Fatalf("malformed lines %v (count %d), want %v", pe.LineNumbers(), pe.Count, want)
	}
	if pe.Lines[0].Fields != 1 || pe.Lines[1].Fields != 3 || pe.Lines[2].Fields != 1 {
		t.Errorf("field counts %+v", pe.Lines)
	}
	msg := err.Error()
	for _, want := range []string{"3 malformed lines", "line 3: 1 field, want 2", "line 5: 3 fields, want 2", "line 7:"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}

	// A file's name leads the message, and long lists are cut short.
	path := filepath.Join(t.TempDir(), "bad.edges")
	if err := os.WriteFile(path, []byte(strings.Repeat("x\n", MaxLineErrors+50)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ParseFile(path)
	pe, ok = errors.AsType[*ParseError](err)
	if !ok || pe.Name != path || pe.Count != MaxLineErrors+50 || len(pe.Lines) != MaxLineErrors {
		t.Fatalf("ParseFile: %v", err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, path+": 150 malformed lines") || !strings.Contains(msg, "line 10: ") ||
		strings.Contains(msg, "line 11: ") || !strings.HasSuffix(msg, "and 140 more") {
		t.Errorf("message %q", msg)
	}
	if _, err := ParseFile(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestNewGraph(t *testing.T) {
	if _, err := NewGraph([]string{"a", "a"}, nil); err == nil {
		t.Error("duplicate names accepted")
	}
	if _, err := NewGraph([]string{"a"}, [][2]int{{0, 1}}); err == nil {
		t.Error("edge to a missing node accepted")
	}
	g, err := NewGraph([]string{"a", "b", "c"}, [][2]int{{0, 1}, {0, 1}, {1, 1}, {2, 0}})
	if err != nil {
		t.Fatal(err)
	}
	if g.NumEdges() != 3 || g.OutDegree(0) != 1 || g.OutDegree(1) != 1 || g.OutDegree(2) != 1 {
		t.Errorf("edges %d, out-degrees %d %d %d", g.NumEdges(), g.OutDegree(0), g.OutDegree(1), g.OutDegree(2))
	}
}

// TestParseBOM checks that a UTF-8 byte order mark at the start of an edge
// list is not part of the first node's id, and that one elsewhere is.
func TestParseBOM(t *testing.T) {
	g := mustParse(t, "\uFEFFa b\nb \uFEFFc\n")
	if want := []string{"a", "b", "\uFEFFc"}; !slices.Equal(g.Names, want) {
		t.Fatalf("names %q, want %q", g.Names, want)
	}
	g = mustParse(t, "\uFEFF# comment\n1 2\n")
	if want := []string{"1", "2"}; !slices.Equal(g.Names, want) {
		t.Fatalf("names %q, want %q", g.Names, want)
	}
	path := filepath.Join(t.TempDir(), "bom.edges")
	if err := os.WriteFile(path, []byte("\uFEFFx y\r\ny x\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"x", "y"}; !slices.Equal(g.Names, want) {
		t.Fatalf("ParseFile: names %q, want %q", g.Names, want)
	}
	g, err = Parse(strings.NewReader("\uFEFFx y\n"))
	if err != nil || !slices.Equal(g.Names, []string{"x", "y"}) {
		t.Fatalf("Parse: %v, %v", g, err)
	}
}
