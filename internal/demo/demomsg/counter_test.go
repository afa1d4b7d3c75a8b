package demomsg

import (
	"context"
	"strings"
	"testing"
)

// TestCounterHandsOffItsCount: a counter counts per request (By, 1 by
// default), its Passivate state starts the next activation where it left
// off, each activation has its own name, and a state of the wrong size is
// refused.
func TestCounterHandsOffItsCount(t *testing.T) {
	ctx := context.Background()
	a, err := NewCounter("127.0.0.1:1", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, by := range []int64{0, 0, 5} {
		r, err := a.Handle(ctx, CounterRequest{By: by})
		want := []int64{1, 2, 7}[i]
		if err != nil || r.Count != want || !strings.HasPrefix(r.Activation, "127.0.0.1:1/") {
			t.Fatalf("request %d: %+v, %v; want count %d", i, r, err, want)
		}
	}
	st, err := a.Passivate()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewCounter("127.0.0.1:2", st)
	if err != nil {
		t.Fatal(err)
	}
	r, err := b.Handle(ctx, CounterRequest{})
	if err != nil || r.Count != 8 {
		t.Fatalf("after the hand-off: %+v, %v; want count 8", r, err)
	}
	ra, _ := a.Handle(ctx, CounterRequest{})
	if ra.Activation == r.Activation {
		t.Errorf("two activations share the name %q", r.Activation)
	}
	if _, err := NewCounter("x", []byte{1, 2, 3}); err == nil {
		t.Error("a 3-byte state was accepted")
	}
}
