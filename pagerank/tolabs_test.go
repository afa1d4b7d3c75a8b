package pagerank

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// exactRanks solves the PageRank system (I − α·M) x = (1−α)/N · 1 by
// Gaussian elimination with partial pivoting, where M is the column
// stochastic link matrix with a dangling node's column uniform: the fixed
// point the power iteration converges to, computed without iterating.
func exactRanks(g *Graph, alpha float64) []float64 {
	n := g.NumNodes()
	a := make([][]float64, n)
	for v := range a {
		a[v] = make([]float64, n+1) // the last column is b
		a[v][v] = 1
		a[v][n] = (1 - alpha) / float64(n)
	}
	for v := range n {
		for _, u := range g.InNeighbors(v) {
			a[v][u] -= alpha / float64(g.OutDegree(int(u)))
		}
	}
	for u := range n {
		if g.OutDegree(u) == 0 {
			for v := range n {
				a[v][u] -= alpha / float64(n)
			}
		}
	}
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		a[c], a[p] = a[p], a[c]
		for r := c + 1; r < n; r++ {
			f := a[r][c] / a[c][c]
			for k := c; k <= n; k++ {
				a[r][k] -= f * a[c][k]
			}
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := a[r][n]
		for k := r + 1; k < n; k++ {
			s -= a[r][k] * x[k]
		}
		x[r] = s / a[r][r]
	}
	return x
}

// randomGraph is a seeded graph of n nodes with 0–4 out-edges each: dangling
// nodes, self-loops and duplicate edges included.
func randomGraph(t *testing.T, n int, seed uint64) *Graph {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed+1))
	names := make([]string, n)
	var edges [][2]int
	for i := range names {
		names[i] = fmt.Sprint("n", i)
		for range r.IntN(5) {
			edges = append(edges, [2]int{i, r.IntN(n)})
		}
	}
	g, err := NewGraph(names, edges)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// distance is the L1 distance between two rank vectors.
func distance(x, y []float64) float64 {
	d := 0.0
	for i := range x {
		d += math.Abs(x[i] - y[i])
	}
	return d
}

// TestTolAbsConverges: with an absolute tolerance τ the iteration stops at
// the first iteration whose L1 change is below τ, and the ranks are within
// α/(1−α)·τ of the exact solution in L1, on the karate club and a random
// graph with dangling nodes, at two damping factors.
func TestTolAbsConverges(t *testing.T) {
	graphs := map[string]*Graph{"karate": KarateClub(), "random": randomGraph(t, 300, 9)}
	for name, g := range graphs {
		for _, alpha := range []float64{0.85, 0.5} {
			exact := exactRanks(g, alpha)
			if s := sum(exact); abs(s-1) > 1e-12 {
				t.Fatalf("%s: exact ranks sum to %v", name, s)
			}
			for _, tol := range []float64{1e-4, 1e-8, 1e-12} {
				var deltas []float64
				res := mustRun(t, g, Options{Damping: alpha, TolAbs: tol, MaxIter: 1000, Partitions: 3,
					Progress: func(p Progress) { deltas = append(deltas, p.Delta) }})
				if !res.Converged || res.Limit != tol || !(res.Delta < tol) || res.Iterations != len(deltas) {
					t.Fatalf("%s α=%v τ=%g: %d iterations, converged %v, delta %g, limit %g", name, alpha, tol,
						res.Iterations, res.Converged, res.Delta, res.Limit)
				}
				for i, d := range deltas[:len(deltas)-1] {
					if d < tol {
						t.Errorf("%s α=%v τ=%g: iteration %d had L1 change %g below τ and did not stop", name, alpha, tol, i+1, d)
					}
				}
				bound := alpha/(1-alpha)*tol + 1e-14
				if d := distance(res.Ranks, exact); !(d <= bound) {
					t.Errorf("%s α=%v τ=%g: L1 distance to the exact ranks %.3g, want at most %.3g", name, alpha, tol, d, bound)
				}
			}
		}
	}
}

// TestTolAbsIterations: networkx's rule scales with the number of nodes, the
// absolute rule does not. The same bound gives the same iterations; a graph
// of 2,000 nodes stops after networkx's 8 at tol 1e-6 (a bound of 2e-3) and
// later at an absolute 1e-6; and once N·tol reaches 2, the most an L1 change
// can be, networkx's rule stops after one iteration whatever the graph,
// which an absolute tolerance does not.
func TestTolAbsIterations(t *testing.T) {
	karate := KarateClub()
	def := mustRun(t, karate, Options{})
	same := mustRun(t, karate, Options{TolAbs: float64(karate.NumNodes()) * DefaultTol})
	if def.Iterations != 21 || same.Iterations != def.Iterations || same.Limit != def.Limit || def.Limit != 34*DefaultTol {
		t.Errorf("karate: defaults %d iterations (limit %g), TolAbs N·tol %d (limit %g); networkx makes 21",
			def.Iterations, def.Limit, same.Iterations, same.Limit)
	}

	sf, err := ParseFile("testdata/scalefree.edges")
	if err != nil {
		t.Fatal(err)
	}
	n := float64(sf.NumNodes())
	nx := mustRun(t, sf, Options{})
	absolute := mustRun(t, sf, Options{TolAbs: DefaultTol})
	tight := mustRun(t, sf, Options{TolAbs: 1e-12, MaxIter: 1000})
	if nx.Iterations != 8 || !(absolute.Iterations > nx.Iterations) || !(tight.Iterations > absolute.Iterations) {
		t.Errorf("scalefree: networkx's rule %d iterations (want 8), TolAbs 1e-6 %d, TolAbs 1e-12 %d: want increasing",
			nx.Iterations, absolute.Iterations, tight.Iterations)
	}
	loose := mustRun(t, sf, Options{Tol: 2 / n})
	if loose.Iterations != 1 || !loose.Converged {
		t.Errorf("scalefree at N·tol = 2: %d iterations, want 1", loose.Iterations)
	}
	if d := distance(loose.Ranks, tight.Ranks); !(d > 1e-3) {
		t.Errorf("one iteration is %.3g from the tight ranks: the test graph does not show the loose rule", d)
	}
	if d := distance(absolute.Ranks, tight.Ranks); !(d <= DefaultDamping/(1-DefaultDamping)*DefaultTol) {
		t.Errorf("TolAbs 1e-6: %.3g from the tight ranks", d)
	}
	t.Logf("scalefree: networkx rule %d iterations, TolAbs 1e-6 %d, 1e-12 %d", nx.Iterations, absolute.Iterations, tight.Iterations)
}

// TestBadTolerances: a tolerance Run cannot use is an *OptionError naming
// the field (errors.Is ErrInvalidOptions), and nothing is computed.
func TestBadTolerances(t *testing.T) {
	g := KarateClub()
	cases := []struct {
		o     Options
		field string
	}{
		{Options{TolAbs: -1e-10}, "TolAbs"},
		{Options{TolAbs: math.NaN()}, "TolAbs"},
		{Options{TolAbs: math.Inf(1)}, "TolAbs"},
		{Options{TolAbs: math.Inf(-1)}, "TolAbs"},
		{Options{Tol: 1e-6, TolAbs: 1e-10}, "TolAbs"}, // both rules at once
		{Options{Tol: -1}, "Tol"},
		{Options{Tol: math.NaN()}, "Tol"},
		{Options{Tol: math.Inf(1)}, "Tol"},
		{Options{Damping: 1.5}, "Damping"},
		{Options{MaxIter: -1}, "MaxIter"},
		{Options{Partitions: -2}, "Partitions"},
	}
	for _, c := range cases {
		called := false
		c.o.Progress = func(Progress) { called = true }
		res, err := Run(testCtx(t), g, c.o)
		oe, ok := errors.AsType[*OptionError](err)
		if !errors.Is(err, ErrInvalidOptions) || !ok || oe.Field != c.field {
			t.Errorf("Tol %v TolAbs %v Damping %v: error %v, want an *OptionError for %s", c.o.Tol, c.o.TolAbs, c.o.Damping, err, c.field)
			continue
		}
		if called || res.Ranks != nil || res.Iterations != 0 {
			t.Errorf("%s: computed %+v", c.field, res)
		}
	}
}
