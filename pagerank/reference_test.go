package pagerank

import (
	"testing"
)

// tight is the tolerance at which the iteration comes within 1e-9 (L1) of
// networkx's tight reference.
var tight = Options{Tol: 1e-12, MaxIter: 1000}

// TestReference compares Run with networkx 2.8's pagerank on the karate club
// and on a 2,000-node scale-free graph with duplicate edges, self-loops and
// dangling nodes: within 1e-9 in L1 at a tight tolerance, and with the
// defaults, after the same number of iterations as networkx to within
// rounding.
func TestReference(t *testing.T) {
	graphs := map[string]func(t *testing.T) *Graph{
		"karate": func(*testing.T) *Graph { return KarateClub() },
		"scalefree": func(t *testing.T) *Graph {
			g, err := ParseFile("testdata/scalefree.edges")
			if err != nil {
				t.Fatal(err)
			}
			return g
		},
	}
	for name, load := range graphs {
		t.Run(name, func(t *testing.T) {
			g, ref := load(t), readReference(t, name)

			res := mustRun(t, g, tight)
			dTight := l1(t, g, res.Ranks, ref.names, ref.tight)
			if !(dTight < 1e-9) {
				t.Errorf("tight: L1 distance to networkx %.3g, want < 1e-9", dTight)
			}
			if !res.Converged {
				t.Errorf("tight: not converged")
			}
			if s := sum(res.Ranks); abs(s-1) > 1e-12 {
				t.Errorf("ranks sum to %v", s)
			}

			def := mustRun(t, g, Options{})
			if def.Iterations != ref.defaultIterations {
				t.Errorf("defaults: %d iterations, networkx made %d", def.Iterations, ref.defaultIterations)
			}
			dDef := l1(t, g, def.Ranks, ref.names, ref.defaults)
			if !(dDef < 1e-12) {
				t.Errorf("defaults: L1 distance to networkx %.3g, want < 1e-12", dDef)
			}
			t.Logf("%d nodes, %d edges: tight %d iterations, L1 %.2g; defaults %d iterations, L1 %.2g",
				g.NumNodes(), g.NumEdges(), res.Iterations, dTight, def.Iterations, dDef)
		})
	}
}

// TestPartitionsAgree runs with 1, 2, 3 and 7 partition kernels: the ranks
// agree to 1e-12 and the iterations are the same.
func TestPartitionsAgree(t *testing.T) {
	sf, err := ParseFile("testdata/scalefree.edges")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []*Graph{KarateClub(), sf} {
		o := tight
		o.Partitions = 1
		base := mustRun(t, g, o)
		for _, p := range []int{2, 3, 7} {
			o.Partitions = p
			res := mustRun(t, g, o)
			if res.Partitions != p {
				t.Errorf("%d partitions used, asked for %d", res.Partitions, p)
			}
			if res.Iterations != base.Iterations {
				t.Errorf("P=%d: %d iterations, P=1 made %d", p, res.Iterations, base.Iterations)
			}
			for i := range res.Ranks {
				if d := abs(res.Ranks[i] - base.Ranks[i]); d > 1e-12 {
					t.Fatalf("P=%d: node %s rank %v, P=1 gives %v", p, g.Names[i], res.Ranks[i], base.Ranks[i])
				}
			}
		}
	}
}
