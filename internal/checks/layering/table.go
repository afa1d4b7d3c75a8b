package layering

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// testsLayer is the layer of test helpers and repository checks: only
// tests (and other packages of this layer) import them.
const testsLayer = -1

// row is one row of DESIGN.md's package table.
type row struct {
	line    int      // line number in DESIGN.md
	layer   int      // 0, 1, …, or testsLayer
	pkg     string   // path relative to the module root, "examples" for `examples/...`
	subtree bool     // the row was `pkg/...`: it covers the packages under pkg
	mustNot []string // import paths (a trailing "/..." covers a subtree)
}

// layerName returns a layer as the table writes it.
func layerName(l int) string {
	if l == testsLayer {
		return "tests"
	}
	return strconv.Itoa(l)
}

// name returns the row's package cell as the table writes it.
func (r row) name() string {
	if r.subtree {
		return r.pkg + "/..."
	}
	return r.pkg
}

// covers reports whether the row covers the package at rel.
func (r row) covers(rel string) bool {
	return rel == r.pkg || (r.subtree && strings.HasPrefix(rel, r.pkg+"/"))
}

// tableHeader starts the package table.
const tableHeader = "| layer | package |"

// parseTable reads the package table from DESIGN.md's text: the rows after
// the line starting with tableHeader, up to the first line that is not a
// table row.
func parseTable(text string) ([]row, error) {
	var rows []row
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	n, in := 0, false
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if !in {
			in = strings.HasPrefix(line, tableHeader)
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) < 3 {
			return nil, fmt.Errorf("DESIGN.md:%d: a package table row needs layer, package, …, must not import cells", n)
		}
		layerCell := strings.TrimSpace(cells[0])
		if strings.Trim(layerCell, "-: ") == "" { // the |---|---| line
			continue
		}
		r := row{line: n}
		switch layerCell {
		case "tests":
			r.layer = testsLayer
		default:
			l, err := strconv.Atoi(layerCell)
			if err != nil || l < 0 {
				return nil, fmt.Errorf("DESIGN.md:%d: layer %q is not 0, 1, … or tests", n, layerCell)
			}
			r.layer = l
		}
		pkg := strings.Trim(strings.TrimSpace(cells[1]), "`")
		pkg = strings.TrimSuffix(pkg, "/")
		if base, ok := strings.CutSuffix(pkg, "/..."); ok {
			pkg, r.subtree = base, true
		}
		if pkg == "" || strings.ContainsAny(pkg, " `") {
			return nil, fmt.Errorf("DESIGN.md:%d: package cell %q is not one `path` or `path/...`", n, cells[1])
		}
		r.pkg = pkg
		for _, p := range strings.Split(cells[len(cells)-1], ",") {
			if p = strings.Trim(strings.TrimSpace(p), "`"); p != "" && p != "—" && p != "-" {
				r.mustNot = append(r.mustNot, p)
			}
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("DESIGN.md has no package table (a line starting %q)", tableHeader)
	}
	return rows, nil
}

// rowOf returns the row covering rel, the most specific when rows nest
// (an exact row over a subtree, a deeper subtree over a shallower one).
func rowOf(rows []row, rel string) (row, bool) {
	var best row
	found := false
	for _, r := range rows {
		if !r.covers(rel) {
			continue
		}
		if !found || (!r.subtree && best.subtree) || (r.subtree == best.subtree && len(r.pkg) > len(best.pkg)) {
			best, found = r, true
		}
	}
	return best, found
}

// matchPath reports whether import path p matches pattern (a path, or a
// subtree "x/...").
func matchPath(pattern, p string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == pattern
}
