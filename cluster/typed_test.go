//go:build !race

package cluster_test

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/ringactor/ringactor/cluster"
)

// The typed kinds of the tests, hosted by both members (kinds()).
var (
	typedAdd = cluster.Define("typed-add", addHandler)
	typedSum = cluster.DefineStateful("typed-sum", func(_ string, state []byte) (cluster.Stateful[add, total], error) {
		s := &statefulSum{}
		if state != nil {
			n, _ := binary.Varint(state)
			s.t.Total = int(n)
		}
		return s, nil
	})
)

type statefulSum struct{ t total }

func (s *statefulSum) Handle(_ context.Context, a add) (total, error) {
	s.t.Total += a.N
	s.t.Calls++
	return s.t, nil
}

func (s *statefulSum) Passivate() ([]byte, error) {
	return binary.AppendVarint(nil, int64(s.t.Total)), nil
}

func TestTypedRefRequest(t *testing.T) {
	ctx := testCtx(t)
	id := unique("typed")
	for i, mem := range []*cluster.Member{memberA, memberB, memberA} {
		ref := typedAdd.Ref(mem, id)
		if ref.Identity() != id || ref.Kind() != "typed-add" {
			t.Fatalf("ref addresses %s/%s, want typed-add/%s", ref.Kind(), ref.Identity(), id)
		}
		got, err := ref.Request(ctx, pair{A: []float64{1, float64(i)}, B: []float64{2, 3}})
		if err != nil {
			t.Fatalf("request through member %d: %v", i, err)
		}
		if len(got.Sum) != 2 || got.Sum[0] != 3 || got.Sum[1] != float64(i+3) {
			t.Fatalf("request through member %d: got %v", i, got.Sum)
		}
	}
	// A handler error comes back typed through the typed reference too.
	_, err := typedAdd.Ref(memberB, id).Request(ctx, pair{A: []float64{1}})
	var re *cluster.RemoteError
	if !errors.As(err, &re) {
		t.Fatalf("mismatched lengths: %v, want a *RemoteError", err)
	}
}

func TestTypedRefSendThenRequest(t *testing.T) {
	ctx := testCtx(t)
	ref := typedSum.Ref(memberA, unique("typed-sum"))
	for _, n := range []int{5, 7} {
		if err := ref.Send(ctx, add{N: n}); err != nil {
			t.Fatal(err)
		}
	}
	// The identity takes its messages in arrival order: the two sends are
	// handled before this request.
	got, err := ref.Request(ctx, add{N: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got.Total != 13 || got.Calls != 3 {
		t.Fatalf("got %+v, want Total 13 after 3 calls", got)
	}
	if typedSum.Name() != "typed-sum" || typedSum.Kind().Name() != "typed-sum" {
		t.Fatalf("names %q, %q", typedSum.Name(), typedSum.Kind().Name())
	}
}

func TestTypedRefUnknownKind(t *testing.T) {
	ctx := testCtx(t)
	nowhere := cluster.Define("typed-nowhere", addHandler)
	_, err := nowhere.Ref(memberA, "x").Request(ctx, pair{})
	if !errors.Is(err, cluster.ErrUnknownKind) {
		t.Fatalf("request to a kind no member hosts: %v, want ErrUnknownKind", err)
	}
	if err := nowhere.Ref(memberA, "x").Send(ctx, pair{}); !errors.Is(err, cluster.ErrUnknownKind) {
		t.Fatalf("send to a kind no member hosts: %v, want ErrUnknownKind", err)
	}
}

func TestTypedRefInvalid(t *testing.T) {
	ctx := testCtx(t)
	var nilKind *cluster.KindOf[pair, sum]
	for name, ref := range map[string]cluster.Ref[pair, sum]{
		"zero":           {},
		"nil member":     typedAdd.Ref(nil, "x"),
		"empty identity": typedAdd.Ref(memberA, ""),
		"nil kind":       nilKind.Ref(memberA, "x"),
	} {
		if _, err := ref.Request(ctx, pair{}); !errors.Is(err, cluster.ErrInvalidRef) {
			t.Errorf("%s: Request: %v, want ErrInvalidRef", name, err)
		}
		if err := ref.Send(ctx, pair{}); !errors.Is(err, cluster.ErrInvalidRef) {
			t.Errorf("%s: Send: %v, want ErrInvalidRef", name, err)
		}
	}
}
