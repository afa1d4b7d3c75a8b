package stream

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ringactor/ringactor/actors"
)

// TestKernelStage: an actors ring kernel as a stage between a source and a
// sink; its handler's error is the element's outcome.
func TestKernelStage(t *testing.T) {
	ctx := testCtx(t)
	g := newGraph(t)
	src := NewSource[word](g, "in")
	upper := NewKernelStage(g, "upper", actors.NewStatelessKernel("stream.test.upper", func(_ context.Context, w word) (word, error) {
		if w.W == "bad" {
			return w, errors.New("bad word")
		}
		w.TS *= 10
		return w, nil
	}))
	out, ch := ToChan[word](g, "out", 0)
	Connect(src, upper)
	Connect(upper, out)
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := actors.Lookup[word, word](g.Runtime(), "stream.test.upper"); err != nil {
		t.Fatalf("the kernel is not in the runtime: %v", err)
	}
	got := collect(ch)
	for i, w := range []string{"a", "bad", "b"} {
		if err := src.Send(ctx, word{W: w, TS: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if res := <-got; !slices.Equal(res, []word{{"a", 0}, {"b", 20}}) {
		t.Fatalf("got %v", res)
	}
	checkOutcomes(t, g)
	if st := g.Stats()[1]; st.Failed != 1 || st.Done != 2 {
		t.Fatalf("upper: %+v", st)
	}
}

func TestKernelStageUnregisteredType(t *testing.T) {
	type unregistered struct{ X int }
	g := newGraph(t)
	src := NewSource[unregistered](g, "in")
	k := NewKernelStage(g, "k", actors.NewStatelessKernel("stream.test.unreg", func(_ context.Context, v unregistered) (unregistered, error) { return v, nil }))
	after := Map(g, "after", func(v unregistered) (unregistered, error) { return v, nil }, Parallelism(2))
	out, _ := ToChan[unregistered](g, "out", 0)
	Connect(src, k)
	Connect(k, after)
	Connect(after, out)
	// after and out launch first (tail first); the failure undoes them.
	err := g.Start(testCtx(t))
	if err == nil || !strings.Contains(err.Error(), `"k"`) {
		t.Fatalf("Start: %v, want the kernel stage's launch error", err)
	}
	if err := src.Send(testCtx(t), unregistered{}); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("Send after a failed Start: %v", err)
	}
}
