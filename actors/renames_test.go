package actors

import (
	"context"
	"errors"
	"testing"
)

// The renamed API (Lookup, RequestAsync, CrossValidate,
// WithAdaptiveSelection; their old names were removed in v0.1.0) works.
func TestRenamedAPI(t *testing.T) {
	rt := newTestRuntime(t, WithAdaptiveSelection(false))
	ctx := testCtx(t)
	mustLaunch(t, rt, NewStatelessKernel("renamed", echoNum), true)
	k, err := Lookup[num, total](rt, "renamed")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Lookup[label, total](rt, "renamed"); !errors.Is(err, ErrWrongMessageType) {
		t.Fatalf("Lookup with the wrong types = %v", err)
	}
	got := make(chan total, 1)
	if err := k.RequestAsync(ctx, num{V: 9}, func(r total, err error) {
		if err != nil {
			t.Error(err)
		}
		got <- r
	}); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r.Sum != 9 {
		t.Fatalf("RequestAsync reply %v", r)
	}
	a := f32(t, 1, 2)
	if _, err := rt.Execute(context.Background(), "add", bufs(a, a), nil, CrossValidate(false)); err != nil {
		t.Fatal(err)
	}
}
