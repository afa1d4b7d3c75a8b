package stream

import (
	"errors"
	"slices"
	"testing"

	"github.com/ringactor/ringactor/actors"
)

// TestTopologyAndRegistry: a started graph is listed by Graphs under its
// runtime with its nodes (kind, parallelism, kernel ids) and edges, and is
// gone from the list once stopped.
func TestTopologyAndRegistry(t *testing.T) {
	ctx := testCtx(t)
	rt, err := actors.NewRuntime(actors.WithLogger(actors.DiscardLogger()), actors.WithTelemetry(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(ctx) })
	g := New(WithRuntime(rt), WithCapacity(8), WithBatch(4))
	src := NewSource[int](g, "nums")
	double := Map(g, "double", func(v int) (int, error) { return 2 * v, nil }, Parallelism(2))
	sink, ch := ToChan[int](g, "out", 0)
	if err := errors.Join(Connect(src, double), Connect(double, sink)); err != nil {
		t.Fatal(err)
	}
	if got := Graphs(rt); len(got) != 0 {
		t.Fatalf("Graphs before Start = %d graphs", len(got))
	}
	if tp := g.Topology(); tp.Phase != "building" {
		t.Fatalf("phase before Start = %q", tp.Phase)
	}
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	got := collect(ch)
	if gs := Graphs(rt); len(gs) != 1 || gs[0] != g {
		t.Fatalf("Graphs(rt) = %v, want the graph", gs)
	}
	if gs := Graphs(nil); !slices.Contains(gs, g) {
		t.Fatalf("Graphs(nil) lacks the graph")
	}
	tp := g.Topology()
	if tp.ID != g.ID() || tp.Phase != "started" || tp.Capacity != 8 || tp.Batch != 4 || len(tp.Nodes) != 3 {
		t.Fatalf("topology %+v", tp)
	}
	kinds := []string{tp.Nodes[0].Kind, tp.Nodes[1].Kind, tp.Nodes[2].Kind}
	if !slices.Equal(kinds, []string{NodeSource, NodeStage, NodeSink}) {
		t.Fatalf("node kinds %v", kinds)
	}
	d := tp.Nodes[1]
	if d.Parallelism != 2 || !slices.Equal(d.Kernels, []string{g.ID() + "/double/0", g.ID() + "/double/1"}) || len(tp.Nodes[0].Kernels) != 0 {
		t.Fatalf("double %+v, source %+v", d, tp.Nodes[0])
	}
	for _, k := range d.Kernels {
		if _, err := rt.Status(k); err != nil {
			t.Errorf("kernel %q of the topology: %v", k, err)
		}
	}
	if want := []TopologyEdge{{"nums", "double"}, {"double", "out"}}; !slices.Equal(tp.Edges, want) {
		t.Fatalf("edges %v, want %v", tp.Edges, want)
	}
	if err := g.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	<-got
	if err := g.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if gs := Graphs(rt); len(gs) != 0 {
		t.Fatalf("Graphs after Stop = %d graphs", len(gs))
	}
	if tp := g.Topology(); tp.Phase != "stopped" {
		t.Fatalf("phase after Stop = %q", tp.Phase)
	}
}
