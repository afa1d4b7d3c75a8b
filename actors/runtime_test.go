package actors

import (
	"context"
	"slices"
	"testing"

	"github.com/ringactor/ringactor/lifecycle"
)

func TestQuickStartLifecycle(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	if err := rt.Register(NewStatelessKernel("vector_add", vectorAdd)); err != nil {
		t.Fatal(err)
	}
	if st, _ := rt.Status("vector_add"); st.State != lifecycle.Created {
		t.Fatalf("state %v", st.State)
	}
	_, err := Send(ctx, rt, "vector_add", addReq{A: []float32{1}, B: []float32{2}})
	wantErr(t, err, ErrNotLaunched)
	if err := rt.Launch(ctx, "vector_add"); err != nil {
		t.Fatal(err)
	}
	// Sent before Activate: queues behind the closed gate.
	if _, err := Send(ctx, rt, "vector_add", addReq{A: []float32{1, 2, 3}, B: []float32{4, 5, 6}}); err != nil {
		t.Fatal(err)
	}
	if err := rt.Activate(ctx, "vector_add"); err != nil {
		t.Fatal(err)
	}
	got, err := Receive[addResp](ctx, rt, "vector_add")
	if err != nil || !slices.Equal(got.Sum, []float32{5, 7, 9}) {
		t.Fatalf("Receive = %v, %v", got, err)
	}
	resp, err := Request[addResp](ctx, rt, "vector_add", addReq{A: []float32{1}, B: []float32{1}})
	if err != nil || resp.Sum[0] != 2 {
		t.Fatalf("Request = %v, %v", resp, err)
	}
	if err := rt.Deactivate(ctx, "vector_add"); err != nil {
		t.Fatal(err)
	}
	if err := rt.Reactivate(ctx, "vector_add"); err != nil {
		t.Fatal(err)
	}
	if err := rt.Terminate(ctx, "vector_add"); err != nil {
		t.Fatal(err)
	}
	if st, _ := rt.Status("vector_add"); st.State != lifecycle.Terminated || st.Processed != 2 {
		t.Fatalf("status after terminate %+v", st)
	}
	_, err = Send(ctx, rt, "vector_add", addReq{})
	wantErr(t, err, ErrTerminated)
	_ = context.Background()
}
