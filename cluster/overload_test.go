//go:build !race

package cluster_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	ptest "github.com/asynkron/protoactor-go/cluster/clusterproviders/test"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
)

// startOverloadPair starts a member hosting kinds and a member hosting
// nothing, in a cluster of their own, and returns the second: requests from
// it reach the first over the network. Both close at the end of the test.
func startOverloadPair(t *testing.T, name string, kinds []*cluster.Kind) *cluster.Member {
	t.Helper()
	ctx := testCtx(t)
	agent := ptest.NewInMemAgent()
	host, err := cluster.Start(ctx, name, ptest.NewTestProvider(agent), kinds, cluster.WithLogger(actors.DiscardLogger()))
	if err != nil {
		t.Fatal(err)
	}
	client, err := cluster.Start(ctx, name, ptest.NewTestProvider(agent), nil, cluster.WithLogger(actors.DiscardLogger()))
	if err != nil {
		_ = host.Close(context.Background())
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, m := range []*cluster.Member{client, host} {
			if err := m.Close(context.WithoutCancel(ctx)); err != nil {
				t.Error(err)
			}
		}
	})
	for _, m := range []*cluster.Member{host, client} {
		if err := m.WaitMembers(ctx, 2); err != nil {
			t.Fatal(err)
		}
	}
	return client
}

// TestOverloadedActivationRefuses: an identity whose handler is stuck gets
// far more requests than its kernel's ring, overflow and inbox queue hold.
// It accepts at most what they hold and refuses every other request at
// once with ErrOverloaded (not a timeout, not a wait: the refusals all come
// while the handler is still stuck); once the handler is released the
// accepted ones are answered, every request having exactly one outcome,
// and the identity serves new requests normally.
func TestOverloadedActivationRefuses(t *testing.T) {
	const capacity = 64
	gate := make(chan struct{})
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(gate) }) }
	defer release()
	kind := cluster.Define("gated", func() actors.Handler[add, total] {
		return func(ctx context.Context, a add) (total, error) {
			select {
			case <-gate:
				return total{Total: a.N}, nil
			case <-ctx.Done():
				return total{}, ctx.Err()
			}
		}
	}, actors.WithCapacity(capacity))
	client := startOverloadPair(t, "overload-refuse", []*cluster.Kind{kind.Kind()})
	ctx := testCtx(t)
	ref := kind.Ref(client, "stuck")
	const n = 2000
	// At most the ring, the overflow and the inbox's queue (each the
	// capacity), the message the handler holds and the batch the loop took.
	const maxAccepted = 4 * capacity
	type outcome struct {
		err error
		at  time.Time
	}
	outcomes := make(chan outcome, n)
	rctx, cancel := context.WithTimeout(ctx, time.Minute) // far beyond the test: a refusal must not wait for it
	defer cancel()
	for i := range n {
		go func() {
			_, err := ref.Request(rctx, add{N: i})
			outcomes <- outcome{err: err, at: time.Now()}
		}()
	}
	// Refusals come while the handler is stuck: wait for all but the
	// accepted ones (a hang guard bounds the wait, not a speed).
	var got []outcome
	for len(got) < n-maxAccepted {
		select {
		case o := <-outcomes:
			if o.err == nil {
				t.Fatalf("a request was answered while the handler was stuck")
			}
			got = append(got, o)
		case <-ctx.Done():
			t.Fatalf("only %d of %d requests had an outcome while the handler was stuck (want at least %d refused at once)", len(got), n, n-maxAccepted)
		}
	}
	release()
	for len(got) < n {
		select {
		case o := <-outcomes:
			got = append(got, o)
		case <-ctx.Done():
			t.Fatalf("%d of %d requests had an outcome after the release", len(got), n)
		}
	}
	var accepted, refused int
	for _, o := range got {
		switch {
		case o.err == nil:
			accepted++
		case errors.Is(o.err, cluster.ErrOverloaded):
			refused++
			var re *cluster.RemoteError
			if !errors.As(o.err, &re) || errors.Is(o.err, cluster.ErrTimeout) || errors.Is(o.err, context.DeadlineExceeded) {
				t.Fatalf("a refusal is a *RemoteError apart from timeouts: %v", o.err)
			}
		default:
			t.Fatalf("outcome neither a reply nor ErrOverloaded: %v", o.err)
		}
	}
	if accepted == 0 || accepted > maxAccepted || accepted+refused != n {
		t.Fatalf("accepted %d, refused %d of %d (at most %d may be accepted)", accepted, refused, n, maxAccepted)
	}
	select {
	case o := <-outcomes:
		t.Fatalf("a request had a second outcome: %v", o.err)
	default:
	}
	// Afterwards the identity serves as before.
	for i := range 100 {
		r, err := ref.Request(ctx, add{N: i})
		if err != nil || r.Total != i {
			t.Fatalf("after the overload, request %d: %v %v", i, r, err)
		}
	}
	t.Logf("accepted %d, refused %d of %d", accepted, refused, n)
}
