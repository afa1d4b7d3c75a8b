package layering

import (
	"fmt"
	"sort"
	"strings"
)

// pkg is one package of the module as go list reports it.
type pkg struct {
	rel     string   // path relative to the module root
	imports []string // full import paths of its non-test code
}

// edge is an import of one module package by another, both relative.
type edge struct{ from, to string }

// check returns a problem for each package without a row, each row that
// covers no package, each import against the table, and each exception
// that no import uses any more.
func check(module string, rows []row, pkgs []pkg, exceptions map[edge]string) []string {
	var problems []string
	layerOf := map[string]row{}
	used := map[int]bool{} // rows by line
	for _, p := range pkgs {
		if r, ok := rowOf(rows, p.rel); ok {
			layerOf[p.rel] = r
			used[r.line] = true
		}
	}
	for _, p := range pkgs {
		from, ok := layerOf[p.rel]
		if !ok {
			problems = append(problems, missingRow(module, p, layerOf))
			continue
		}
		for _, imp := range p.imports {
			for _, m := range from.mustNot {
				if matchPath(m, imp) || matchPath(m, strings.TrimPrefix(imp, module+"/")) {
					problems = append(problems, fmt.Sprintf("%s imports %s, which its row (docs/DESIGN.md:%d) says it must not import",
						p.rel, imp, from.line))
				}
			}
			rel, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			to, ok := layerOf[rel]
			if !ok {
				continue // reported as a missing row of its own
			}
			e := edge{p.rel, rel}
			if _, ok := exceptions[e]; ok {
				delete(exceptions, e)
				continue
			}
			if msg := importProblem(p.rel, rel, from, to); msg != "" {
				problems = append(problems, msg)
			}
		}
	}
	for _, r := range rows {
		if !used[r.line] {
			problems = append(problems, fmt.Sprintf("docs/DESIGN.md:%d: the row of `%s` covers no package of `go list ./...`: remove it (or fix its path)", r.line, r.name()))
		}
	}
	var stale []string
	for e, why := range exceptions {
		stale = append(stale, fmt.Sprintf("exception %s → %s (%s) is no longer used: remove it from the exceptions list of internal/checks/layering", e.from, e.to, why))
	}
	sort.Strings(stale)
	return append(problems, stale...)
}

// importProblem says what is wrong with from importing to, or "".
func importProblem(fromPkg, toPkg string, from, to row) string {
	const fix = "move what it needs to a lower layer, or, if the table is wrong, change the rows in docs/DESIGN.md's package table"
	switch {
	case from.line == to.line: // one row: a subtree's packages import each other
		return ""
	case from.layer == testsLayer:
		return ""
	case to.layer == testsLayer:
		return fmt.Sprintf("%s (layer %s) imports %s, a test helper (layer tests, docs/DESIGN.md:%d): only test files may import it",
			fromPkg, layerName(from.layer), toPkg, to.line)
	case to.layer == from.layer:
		return fmt.Sprintf("%s (layer %d) imports %s (layer %d): packages of one layer are rooms kept apart; %s",
			fromPkg, from.layer, toPkg, to.layer, fix)
	case to.layer > from.layer:
		return fmt.Sprintf("%s (layer %d) imports %s (layer %d): an import up the table; %s",
			fromPkg, from.layer, toPkg, to.layer, fix)
	}
	return ""
}

// missingRow says which row to add for a package the table lacks: the
// lowest layer its imports allow.
func missingRow(module string, p pkg, layerOf map[string]row) string {
	layer, highest := 0, ""
	for _, imp := range p.imports {
		rel, ok := strings.CutPrefix(imp, module+"/")
		if !ok {
			continue
		}
		if r, ok := layerOf[rel]; ok && r.layer != testsLayer && r.layer+1 > layer {
			layer, highest = r.layer+1, rel
		}
	}
	why := "it imports no other package of the module"
	if highest != "" {
		why = fmt.Sprintf("the highest layer it imports is %s's, %d", highest, layer-1)
	}
	return fmt.Sprintf("package %s has no row in docs/DESIGN.md's package table (%s): add\n\t| %d | `%s` | what it owns | — |\nwith the rows of layer %d (a higher layer if it belongs beside packages there; tests for a test helper)",
		p.rel, why, layer, p.rel, layer)
}
