package pagerank

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/lifecycle"
)

// wantRanks checks ranks by name against networkx's values (nx.pagerank with
// the defaults, networkx 2.8.8).
func wantRanks(t *testing.T, g *Graph, ranks []float64, want map[string]float64) {
	t.Helper()
	idx := byName(g)
	if len(want) != g.NumNodes() {
		t.Fatalf("%d nodes, want %d", g.NumNodes(), len(want))
	}
	for name, w := range want {
		if got := ranks[idx[name]]; abs(got-w) > 1e-15 {
			t.Errorf("rank of %s = %v, networkx gives %v", name, got, w)
		}
	}
	if s := sum(ranks); abs(s-1) > 1e-15 {
		t.Errorf("ranks sum to %v", s)
	}
}

// TestDuplicatesCountOnce: a repeated edge changes nothing.
func TestDuplicatesCountOnce(t *testing.T) {
	once := mustParse(t, "a b\nb a\n")
	twice := mustParse(t, "a b\na b\nb a\na b\n")
	if twice.NumEdges() != 2 || twice.OutDegree(0) != 1 {
		t.Fatalf("%d edges, out-degree of a %d", twice.NumEdges(), twice.OutDegree(0))
	}
	r1, r2 := mustRun(t, once, Options{}), mustRun(t, twice, Options{})
	if !slices.Equal(r1.Ranks, r2.Ranks) || r1.Iterations != r2.Iterations {
		t.Errorf("with duplicates %v, without %v", r2.Ranks, r1.Ranks)
	}
	wantRanks(t, twice, r2.Ranks, map[string]float64{"a": 0.5, "b": 0.5})
}

// TestSelfLoops: a self-loop is an ordinary edge, counted in the out-degree.
func TestSelfLoops(t *testing.T) {
	g := mustParse(t, "a a\na b\nb c\n")
	if g.OutDegree(0) != 2 {
		t.Fatalf("out-degree of a %d, want 2 (self-loop included)", g.OutDegree(0))
	}
	res := mustRun(t, g, Options{})
	wantRanks(t, g, res.Ranks, map[string]float64{"a": 0.2919707555521684, "b": 0.2919707555521684, "c": 0.41605848889566305})
	// Without the loop the ranks differ.
	res = mustRun(t, mustParse(t, "a b\nb c\n"), Options{})
	wantRanks(t, mustParse(t, "a b\nb c\n"), res.Ranks, map[string]float64{"a": 0.1844167633067642, "b": 0.3411716203526378, "c": 0.47441161634059764})
}

// TestDanglingNodes: nodes without out-edges spread their rank over all
// nodes.
func TestDanglingNodes(t *testing.T) {
	g := mustParse(t, "a b\na c\n")
	if g.OutDegree(1) != 0 || g.OutDegree(2) != 0 {
		t.Fatal("b and c should be dangling")
	}
	res := mustRun(t, g, Options{})
	wantRanks(t, g, res.Ranks, map[string]float64{"a": 0.25974050510584634, "b": 0.37012974744707666, "c": 0.37012974744707666})
	// Every node dangling: the uniform vector at once.
	g, err := NewGraph([]string{"x", "y", "z", "w"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res = mustRun(t, g, Options{Partitions: 3})
	if res.Iterations != 1 || !slices.Equal(res.Ranks, []float64{0.25, 0.25, 0.25, 0.25}) {
		t.Errorf("all dangling: %+v", res)
	}
}

func TestOneNode(t *testing.T) {
	alone, err := NewGraph([]string{"x"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []*Graph{alone, mustParse(t, "x x\n")} {
		res := mustRun(t, g, Options{Partitions: 4})
		if !slices.Equal(res.Ranks, []float64{1}) || res.Iterations != 1 || !res.Converged || res.Partitions != 1 {
			t.Errorf("one node (%d edges): %+v", g.NumEdges(), res)
		}
	}
}

func TestEmptyGraph(t *testing.T) {
	res := mustRun(t, mustParse(t, "# nothing\n"), Options{})
	if len(res.Ranks) != 0 || !res.Converged || res.Iterations != 0 {
		t.Errorf("empty graph: %+v", res)
	}
}

// TestCancelledContext: a context cancelled before Run, or during it,
// ends the Run with its error; the kernels and the runtime are gone (the
// goroutine check in TestMain).
func TestCancelledContext(t *testing.T) {
	g := KarateClub()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, g, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before: %v", err)
	}

	// Cancelled from the progress callback at iteration 3 of a run that
	// would take hundreds.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	res, err := Run(ctx, g, Options{Tol: 1e-300, MaxIter: 100000, Partitions: 3, Progress: func(p Progress) {
		if calls++; p.Iteration == 3 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || res.Ranks != nil {
		t.Errorf("cancelled during: %v, %+v", err, res)
	}
	if calls < 3 {
		t.Errorf("%d progress calls before the cancel", calls)
	}

	// A deadline works the same way.
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := Run(ctx, g, Options{Tol: 1e-300, MaxIter: 1 << 30}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline: %v", err)
	}
}

// TestNotConverged: running out of iterations is an error that carries the
// last iterate, like networkx's PowerIterationFailedConvergence.
func TestNotConverged(t *testing.T) {
	res, err := Run(testCtx(t), KarateClub(), Options{MaxIter: 5})
	var ce *ConvergenceError
	if !errors.Is(err, ErrNotConverged) || !errors.As(err, &ce) || ce.Iterations != 5 {
		t.Fatalf("error %v", err)
	}
	if res.Converged || res.Iterations != 5 || len(res.Ranks) != 34 || abs(sum(res.Ranks)-1) > 1e-12 || !(ce.Delta >= ce.Limit) {
		t.Errorf("result %+v, error %+v", res, ce)
	}
	if !strings.Contains(err.Error(), "within 5 iterations") {
		t.Errorf("message %q", err)
	}
}

func TestProgress(t *testing.T) {
	var seen []Progress
	res := mustRun(t, KarateClub(), Options{Progress: func(p Progress) { seen = append(seen, p) }})
	if len(seen) != res.Iterations {
		t.Fatalf("%d progress calls, %d iterations", len(seen), res.Iterations)
	}
	for i, p := range seen {
		if p.Iteration != i+1 || !(p.Delta > 0) || (i > 0 && p.Elapsed < seen[i-1].Elapsed) {
			t.Errorf("progress %d: %+v", i, p)
		}
	}
	if last := seen[len(seen)-1]; last.Delta != res.Delta || !(last.Delta < 34*DefaultTol) {
		t.Errorf("last progress %+v, result delta %v", last, res.Delta)
	}
}

func TestOptions(t *testing.T) {
	g := KarateClub()
	for _, o := range []Options{{Damping: -0.1}, {Damping: 1.5}, {Tol: -1}, {MaxIter: -1}, {Partitions: -2}} {
		if _, err := Run(testCtx(t), g, o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	// Damping 1 is allowed (the karate club is strongly connected).
	if res := mustRun(t, g, Options{Damping: 1, MaxIter: 1000}); !res.Converged {
		t.Errorf("damping 1: %+v", res)
	}
}

// TestSharedRuntime runs PageRank twice at once in a runtime of the
// caller's: the kernel ids do not collide, and every kernel is terminated
// when Run returns; the runtime stays usable.
func TestSharedRuntime(t *testing.T) {
	rt, err := actors.NewRuntime(actors.WithLogger(actors.DiscardLogger()), actors.WithTelemetry(false))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	g := KarateClub()
	want := mustRun(t, g, Options{Partitions: 2})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			res, err := Run(testCtx(t), g, Options{Partitions: 2, Runtime: rt})
			if err != nil || !slices.Equal(res.Ranks, want.Ranks) {
				t.Errorf("shared runtime: %v", err)
			}
		})
	}
	wg.Wait()
	ids := rt.Kernels()
	if len(ids) != 2*3 {
		t.Errorf("kernels %q, want 2 coordinators and 4 partitions", ids)
	}
	for _, id := range ids {
		if st, err := rt.Status(id); err != nil || st.State != lifecycle.Terminated {
			t.Errorf("kernel %s: %v %v", id, st.State, err)
		}
	}
}

func TestTop(t *testing.T) {
	g := mustParse(t, "a b\nb c\nc d\nd e\n")
	ranks := []float64{0.1, 0.3, 0.3, 0.2, 0.1}
	names := func(rs []Ranked) string {
		var s []string
		for _, r := range rs {
			s = append(s, r.Name)
		}
		return strings.Join(s, " ")
	}
	for k, want := range map[int]string{0: "b c d a e", 2: "b c", 3: "b c d", 5: "b c d a e", 9: "b c d a e"} {
		if got := names(Top(g, ranks, k)); got != want {
			t.Errorf("Top %d = %s, want %s", k, got, want)
		}
	}
	// The partial selection for few of many agrees with a full sort.
	sf, err := ParseFile("testdata/scalefree.edges")
	if err != nil {
		t.Fatal(err)
	}
	res := mustRun(t, sf, Options{})
	all := Top(sf, res.Ranks, 0)
	if got := Top(sf, res.Ranks, 25); !slices.Equal(got, all[:25]) {
		t.Errorf("Top 25 = %v, want %v", got, all[:25])
	}
}
