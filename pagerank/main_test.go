package pagerank

import (
	"bufio"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/ringactor/ringactor/internal/testutil/hangguard"
)

// TestMain fails the package when a test leaves goroutines behind: every
// Run must terminate its kernels and close its runtime.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testCtx is the test's hang guard (hangguard.Context): no wall-clock
// deadline of its own.
func testCtx(t testing.TB) context.Context { return hangguard.Context(t) }

// reference is a .ranks.tsv file written by testdata/make_reference.py.
type reference struct {
	names             []string
	tight, defaults   []float64 // by line
	defaultIterations int
}

// readReference reads testdata/<name>.ranks.tsv.
func readReference(t *testing.T, name string) reference {
	t.Helper()
	f, err := os.Open("testdata/" + name + ".ranks.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ref reference
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "#"); ok {
			if _, it, ok := strings.Cut(rest, "default iterations: "); ok {
				if ref.defaultIterations, err = strconv.Atoi(it); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		if strings.HasPrefix(line, "node\t") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			t.Fatalf("%s: bad line %q", name, line)
		}
		tight, err1 := strconv.ParseFloat(f[1], 64)
		def, err2 := strconv.ParseFloat(f[2], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: bad line %q", name, line)
		}
		ref.names = append(ref.names, f[0])
		ref.tight = append(ref.tight, tight)
		ref.defaults = append(ref.defaults, def)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if ref.defaultIterations == 0 || len(ref.names) == 0 {
		t.Fatalf("%s: no iterations or no ranks", name)
	}
	return ref
}

// byName maps each node name of g to its index.
func byName(g *Graph) map[string]int {
	m := make(map[string]int, g.NumNodes())
	for i, n := range g.Names {
		m[n] = i
	}
	return m
}

// l1 is the L1 distance between the ranks of g and want, which is keyed by
// names.
func l1(t *testing.T, g *Graph, ranks []float64, names []string, want []float64) float64 {
	t.Helper()
	if len(names) != g.NumNodes() {
		t.Fatalf("reference has %d nodes, graph %d", len(names), g.NumNodes())
	}
	idx := byName(g)
	d := 0.0
	for i, name := range names {
		j, ok := idx[name]
		if !ok {
			t.Fatalf("reference node %q is not in the graph", name)
		}
		d += abs(ranks[j] - want[i])
	}
	return d
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// sum adds up ranks.
func sum(ranks []float64) float64 {
	s := 0.0
	for _, r := range ranks {
		s += r
	}
	return s
}

// mustRun runs PageRank and fails the test on an error.
func mustRun(t *testing.T, g *Graph, o Options) Result {
	t.Helper()
	res, err := Run(testCtx(t), g, o)
	if err != nil {
		t.Fatalf("Run(%+v): %v", o, err)
	}
	return res
}

// mustParse parses an edge list given as a string.
func mustParse(t *testing.T, s string) *Graph {
	t.Helper()
	g, err := ParseString(s)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
