package layering

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// root is the module root, relative to this package.
const root = "../../.."

// exceptions are imports the table forbids that are allowed for now, each
// with why and who removes it. An exception that no import uses any more
// fails the test: delete it with the import.
var exceptions = map[edge]string{
	// none: the product's imports of examples/ (issue 29 item 2) are gone
}

// TestLayering checks every import of the module's non-test code against
// docs/DESIGN.md's package table.
func TestLayering(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(root, "docs", "DESIGN.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := parseTable(string(text))
	if err != nil {
		t.Fatal(err)
	}
	module, pkgs := goList(t)
	for _, p := range check(module, rows, pkgs, maps.Clone(exceptions)) {
		t.Error(p)
	}
}

// goCmd runs the go command in the module root and returns its output:
// the test fails when the command does, and is skipped without a go
// command.
func goCmd(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go %s: %v\n%s", args[0], err, ee.Stderr)
		}
		t.Skipf("no go command: %v", err)
	}
	return out
}

// goList returns the module's path and its packages with their non-test
// imports.
func goList(t *testing.T) (string, []pkg) {
	t.Helper()
	out := goCmd(t, "list", "-e", "-f", "{{.ImportPath}}\t{{with .Module}}{{.Path}}{{end}}\t{{join .Imports \" \"}}{{with .Error}}\t{{.Err}}{{end}}", "./...")
	var module string
	var pkgs []pkg
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) > 3 {
			t.Fatalf("go list: %s: %s", f[0], f[3])
		}
		if f[1] == "" {
			t.Fatalf("go list: package %s belongs to no module", f[0])
		}
		module = f[1]
		rel := strings.TrimPrefix(strings.TrimPrefix(f[0], module), "/")
		pkgs = append(pkgs, pkg{rel: rel, imports: strings.Fields(f[2])})
	}
	return module, pkgs
}

const m = "example.com/m"

// fixture is a small table: a, b in layer 0, c in 1, sub/... in 2, help in
// tests.
const fixture = `## Packages

| layer | package | owns | must not import |
| --- | --- | --- | --- |
| 0 | ` + "`a`" + ` | the base | ` + "`example.com/heavy/...`" + ` |
| 0 | ` + "`b/`" + ` | a sibling | — |
| 1 | ` + "`c`" + ` | uses a | ` + "`b`" + ` |
| 2 | ` + "`sub/...`" + ` | a subtree | — |
| tests | ` + "`help/...`" + ` | helpers | — |

Text after the table.
`

func fixtureRows(t *testing.T) []row {
	t.Helper()
	rows, err := parseTable(fixture)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func imports(rels ...string) []string {
	out := make([]string, len(rels))
	for i, r := range rels {
		if strings.Contains(r, ".") {
			out[i] = r
		} else {
			out[i] = m + "/" + r
		}
	}
	return out
}

// TestParseTable reads layers, subtrees, trailing slashes and must-not
// lists, and stops at the table's end.
func TestParseTable(t *testing.T) {
	rows := fixtureRows(t)
	if len(rows) != 5 {
		t.Fatalf("%d rows, want 5: %+v", len(rows), rows)
	}
	if r := rows[1]; r.pkg != "b" || r.layer != 0 || r.subtree || len(r.mustNot) != 0 {
		t.Errorf("row b = %+v", r)
	}
	if r := rows[3]; r.pkg != "sub" || !r.subtree || r.layer != 2 {
		t.Errorf("row sub/... = %+v", r)
	}
	if r := rows[4]; r.layer != testsLayer || r.name() != "help/..." {
		t.Errorf("row help/... = %+v", r)
	}
	if r := rows[0]; len(r.mustNot) != 1 || r.mustNot[0] != "example.com/heavy/..." {
		t.Errorf("row a's must not import = %q", r.mustNot)
	}
	if _, err := parseTable("| layer | package |\n| x | `a` | y | — |\n"); err == nil {
		t.Error("a layer that is no number parsed")
	}
	if _, err := parseTable("no table"); err == nil {
		t.Error("a text without a table parsed")
	}
}

// TestCheckClean: imports down the layers and within a subtree, a test
// helper importing product code: no problem.
func TestCheckClean(t *testing.T) {
	pkgs := []pkg{
		{rel: "a", imports: imports("fmt", "example.com/light")},
		{rel: "b"},
		{rel: "c", imports: imports("a")},
		{rel: "sub/x", imports: imports("c", "sub/y", "a")},
		{rel: "sub/y"},
		{rel: "help/p", imports: imports("c", "help/q")},
		{rel: "help/q"},
	}
	if got := check(m, fixtureRows(t), pkgs, nil); len(got) != 0 {
		t.Fatalf("problems in a clean module:\n%s", strings.Join(got, "\n"))
	}
}

// TestCheckProblems: each rule names the offending import.
func TestCheckProblems(t *testing.T) {
	for _, c := range []struct {
		name string
		pkgs []pkg
		want string
	}{
		{"up the table", []pkg{{rel: "a", imports: imports("c")}, {rel: "b"}, {rel: "c"}, {rel: "sub/x"}, {rel: "help/p"}},
			"a (layer 0) imports c (layer 1): an import up the table"},
		{"across a layer", []pkg{{rel: "a", imports: imports("b")}, {rel: "b"}, {rel: "c"}, {rel: "sub/x"}, {rel: "help/p"}},
			"a (layer 0) imports b (layer 0): packages of one layer are rooms kept apart"},
		{"a test helper in product code", []pkg{{rel: "a"}, {rel: "b"}, {rel: "c"}, {rel: "sub/x", imports: imports("help/p")}, {rel: "help/p"}},
			"sub/x (layer 2) imports help/p, a test helper (layer tests"},
		{"must not import, in the module", []pkg{{rel: "a"}, {rel: "b"}, {rel: "c", imports: imports("b")}, {rel: "sub/x"}, {rel: "help/p"}},
			"c imports example.com/m/b, which its row (docs/DESIGN.md:7) says it must not import"},
		{"must not import, outside it", []pkg{{rel: "a", imports: imports("example.com/heavy/x")}, {rel: "b"}, {rel: "c"}, {rel: "sub/x"}, {rel: "help/p"}},
			"a imports example.com/heavy/x, which its row (docs/DESIGN.md:5) says it must not import"},
		{"a package without a row", []pkg{{rel: "a"}, {rel: "b"}, {rel: "c"}, {rel: "sub/x"}, {rel: "help/p"}, {rel: "compute", imports: imports("a", "c", "help/p")}},
			"package compute has no row in docs/DESIGN.md's package table (the highest layer it imports is c's, 1): add\n\t| 2 | `compute` |"},
		{"a row without a package", []pkg{{rel: "a"}, {rel: "c"}, {rel: "sub/x"}, {rel: "help/p"}},
			"docs/DESIGN.md:6: the row of `b` covers no package"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := check(m, fixtureRows(t), c.pkgs, nil)
			if len(got) != 1 || !strings.Contains(got[0], c.want) {
				t.Fatalf("problems:\n%s\nwant one containing %q", strings.Join(got, "\n"), c.want)
			}
		})
	}
}

// TestCheckExceptions: an exception allows its import; an exception that
// no import uses is a problem of its own.
func TestCheckExceptions(t *testing.T) {
	pkgs := []pkg{{rel: "a", imports: imports("c")}, {rel: "b"}, {rel: "c"}, {rel: "sub/x"}, {rel: "help/p"}}
	if got := check(m, fixtureRows(t), pkgs, map[edge]string{{"a", "c"}: "for now"}); len(got) != 0 {
		t.Fatalf("an excepted import reported:\n%s", strings.Join(got, "\n"))
	}
	got := check(m, fixtureRows(t), pkgs, map[edge]string{{"a", "c"}: "for now", {"b", "c"}: "gone"})
	if len(got) != 1 || !strings.Contains(got[0], "exception b → c (gone) is no longer used") {
		t.Fatalf("problems:\n%s", strings.Join(got, "\n"))
	}
}

// TestRowOf: an exact row wins over a subtree that covers it.
func TestRowOf(t *testing.T) {
	rows := []row{{line: 1, pkg: "x", subtree: true, layer: 3}, {line: 2, pkg: "x/y", layer: 1}, {line: 3, pkg: "x/z", subtree: true, layer: 2}}
	for rel, want := range map[string]int{"x": 1, "x/a": 1, "x/y": 2, "x/z/w": 3, "x/y/v": 1} {
		if r, ok := rowOf(rows, rel); !ok || r.line != want {
			t.Errorf("rowOf(%s) = line %d, %v; want line %d", rel, r.line, ok, want)
		}
	}
	if _, ok := rowOf(rows, "xy"); ok {
		t.Error("rowOf(xy) matched x/...")
	}
}
